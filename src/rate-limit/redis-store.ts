// The rate-limit count shared by several instances (docs/decisions.md §3): one Redis key per token and window.
// Each hit is one atomic round trip (a Lua script), so instances cannot interleave a read and a write.
// Redis is a convenience, not a dependency: when it cannot answer, the API keeps answering and counts in
// this process (fail open) until Redis answers again. Going away and coming back are logged once each.
import { Redis } from 'ioredis';
import { MemoryRateLimitStore, type RateLimitStore, type WindowCount } from './rate-limiter.js';

// INCR opens the window on the first request (PEXPIRE only on a new key); a key that somehow lost its
// expiry (PTTL -1) gets it back rather than counting forever. Returns {count, milliseconds left}.
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;

/** The few pino/Fastify logger methods the store uses. */
export interface StoreLogger {
  warn(object: object, message: string): void;
  info(object: object, message: string): void;
}

export interface RedisStoreOptions {
  url: string;
  /** prepended to every key, so installations can share one Redis (env REDIS_PREFIX) */
  prefix?: string;
  /** the longest a request waits for Redis before it is counted in-process instead */
  commandTimeoutMs?: number;
  /** while Redis is down but the socket claims to be up (a hung server), how often one request probes it */
  probeIntervalMs?: number;
  logger?: StoreLogger;
}

type RedisWithHit = Redis & { rateLimitHit(key: string, windowMs: number): Promise<[number, number]> };

export class RedisRateLimitStore implements RateLimitStore {
  private logger: StoreLogger | undefined;
  readonly prefix: string;
  private readonly redis: RedisWithHit;
  private readonly fallback = new MemoryRateLimitStore();
  private readonly probeIntervalMs: number;
  private available = true;
  private lastFailureAt = 0;
  private probing = false;
  private closed = false;

  constructor(options: RedisStoreOptions) {
    this.prefix = options.prefix ?? 'booking:';
    this.logger = options.logger;
    this.probeIntervalMs = options.probeIntervalMs ?? 1000;
    this.redis = new Redis(options.url, {
      // a request must never wait for a reconnect: without the offline queue a command fails at once
      // while disconnected, and the fallback counts it
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? 500,
      connectTimeout: 2000,
      // ioredis reconnects on its own (backoff up to 5 s); a rate limiter is not worth a crash
      lazyConnect: false,
    }) as RedisWithHit;
    this.redis.defineCommand('rateLimitHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    // connection errors also surface as failed commands; without a listener ioredis prints each one
    this.redis.on('error', () => {});
    this.redis.on('close', () => this.wentAway(new Error('connection closed')));
    // a fresh connection: let the next request try Redis at once instead of waiting for the probe interval
    this.redis.on('ready', () => {
      this.lastFailureAt = 0;
    });
  }

  /** For the composition root, whose logger exists only after the store: an outage seen before is logged now. */
  attachLogger(logger: StoreLogger): void {
    this.logger = logger;
    if (!this.available) this.logDown(new Error('unreachable at start'));
  }

  /**
   * Waits (bounded) for the first connection, so the first requests after start are counted shared.
   * Never throws: without Redis the store counts in-process (and says so once).
   */
  async ready(timeoutMs = 2000): Promise<boolean> {
    if (this.redis.status === 'ready') return true;
    const connected = await new Promise<boolean>((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.redis.off('ready', onReady);
        resolve(ok);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.redis.once('ready', onReady);
    });
    if (!connected) this.wentAway(new Error(`no connection within ${timeoutMs} ms`));
    return connected;
  }

  /** Whether the last attempt reached Redis (false while counting in-process). */
  get usingRedis(): boolean {
    return this.available;
  }

  async hit(key: string, windowMs: number, now: number): Promise<WindowCount> {
    if (!this.shouldTryRedis()) return this.fallback.hit(key, windowMs, now);
    const probe = !this.available;
    if (probe) this.probing = true;
    try {
      const [count, msLeft] = await this.redis.rateLimitHit(this.prefix + key, windowMs);
      this.cameBack();
      return { count, resetAt: now + msLeft };
    } catch (error) {
      this.wentAway(error as Error);
      this.lastFailureAt = Date.now();
      return this.fallback.hit(key, windowMs, now);
    } finally {
      if (probe) this.probing = false;
    }
  }

  private shouldTryRedis(): boolean {
    if (this.available) return true;
    // down: one request at a time probes, and not more often than the interval (a hung Redis costs a
    // command timeout per probe); a disconnected client fails at once, so that probe is cheap anyway
    // (real time, not the app's clock: this is about the network)
    return !this.probing && Date.now() - this.lastFailureAt >= this.probeIntervalMs;
  }

  private wentAway(error: Error): void {
    if (this.closed || !this.available) return;
    this.available = false;
    this.lastFailureAt = Date.now();
    this.logDown(error);
  }

  private logDown(error: Error): void {
    this.logger?.warn({ err: { message: error.message } }, 'rate limit: Redis unreachable, counting per process until it returns');
  }

  private cameBack(): void {
    if (this.available) return;
    this.available = true;
    this.logger?.info({}, 'rate limit: Redis reachable again, counting shared');
  }

  async close(): Promise<void> {
    this.closed = true;
    try {
      await this.redis.quit();
    } catch {
      // not connected: nothing to say goodbye to
      this.redis.disconnect();
    }
  }
}
