// Requests per token per window (docs/decisions.md §3): a fixed 60-second window that opens with the token's
// first request. The store is in-process by default; with several instances it is Redis (issue 6).

export interface WindowCount {
  /** requests counted in the current window, this one included */
  count: number;
  /** when the current window closes (epoch ms) */
  resetAt: number;
}

export interface RateLimitStore {
  hit(key: string, windowMs: number, now: number): Promise<WindowCount>;
  close?(): Promise<void>;
}

/** A request's place in its window: what the RateLimit-* headers tell the client (docs/api-integration.md). */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** requests left in this window after this one */
  remaining: number;
  /** whole seconds until the window closes (>= 1): the Retry-After of a refused request */
  resetSeconds: number;
}

export async function checkRate(store: RateLimitStore, key: string, limit: number, now: number, windowMs = 60_000): Promise<RateDecision> {
  const { count, resetAt } = await store.hit(key, windowMs, now);
  return {
    allowed: count <= limit,
    limit,
    remaining: count < limit ? limit - count : 0,
    resetSeconds: Math.max(1, Math.ceil((resetAt - now) / 1000)),
  };
}

export class MemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<string, WindowCount>();

  async hit(key: string, windowMs: number, now: number): Promise<WindowCount> {
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      if (this.windows.size > 10_000) this.sweep(now);
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count++;
    return { ...window };
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }
}
