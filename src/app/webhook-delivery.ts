// Delivers webhook events, inside each `booking serve` process (docs/webhooks.md). It polls for due
// deliveries, claims only what it sends at once (a short claim: a worker that dies mid-delivery leaves a
// row that is due again when the claim expires, so nothing is lost across restarts or instances), POSTs each
// signed body with a per-attempt timeout, and records the outcome. A 2xx is delivered; anything else, a
// network error or the timeout is a failed attempt, retried with capped exponential backoff and jitter until
// WEBHOOK_GIVE_UP_AFTER_HOURS (at least 24) have passed since it was queued; then it is 'failed'.
//
// At least once, never exactly once: a receiver that answered 2xx while this process died (or the database
// refused the 'delivered' record) gets the event again after the claim expires, with the same event id.
//
// Each process attempts up to `concurrency` deliveries at once (8), each endpoint at most half of them, and a
// poll claims only for free lanes: an endpoint that never answers holds its lanes until the timeout, while the
// other endpoints' deliveries go on in theirs.
//
// Outcomes are written grouped (webhook.repository.ts recordOutcomes: one UPDATE, each row its own values):
// the attempts that end in one turn of the event loop go together, and while an endpoint has a backlog the
// next claim comes once half its lanes are free and carries the outcomes waiting in its own transaction. A
// burst of N deliveries costs about N/2 write transactions instead of 2N, which on SQLite are turns of the
// one write lock the bookings need too.
//
// Order per booking and endpoint comes from the claim (webhook.repository.ts): a delivery is not attempted
// while an earlier one of the same booking to the same endpoint is open, and a poll claims at most one of
// each such chain.
//
// Stopping (shutdown) gives the attempts in flight a short grace, then aborts them and releases their claims:
// the receiver never answered, so the deliveries are due again at once for any worker.
import type { Db } from '../db/connect.js';
import {
  claimDueDeliveries,
  recordOutcomes,
  releaseDelivery,
  type ClaimedDelivery,
  type DeliveryOutcome,
} from '../db/repos/webhook.repository.js';
import { webhookHeaders } from '../core/webhooks.js';
import { InFlightSends, retryDelay, STOP_GRACE_MS, type OutboxLog } from './outbox-delivery.js';

export interface WebhookWorkerOptions {
  db: Db;
  /** a delivery still failing this long after it was queued (or resent) is given up */
  giveUpAfterMs: number;
  /** per-attempt bound on the receiver's answer (WEBHOOK_TIMEOUT_SECONDS) */
  timeoutMs?: number;
  pollIntervalMs?: number;
  /** deliveries attempted at once per process; one endpoint holds at most half of them */
  concurrency?: number;
  /** first retry delay; doubles per attempt up to retryCapMs, with jitter */
  retryBaseMs?: number;
  retryCapMs?: number;
  clock?: () => number;
  log?: OutboxLog;
}

export interface WebhookWorker {
  /** claims what is due for the free lanes and starts those attempts; resolves with the number claimed */
  runOnce(): Promise<number>;
  stop(options?: { graceMs?: number }): Promise<void>;
}

export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;
/** How much of a receiver's answer is kept as the error of a failed attempt. */
const ERROR_BODY_CHARS = 300;

/** The reason an attempt's own timeout aborts it with (what AbortSignal.timeout would give). */
const timedOut = () => new DOMException('The operation was aborted due to timeout', 'TimeoutError');

const silent: OutboxLog = { info() {}, warn() {}, error() {} };

type Resolved = Required<WebhookWorkerOptions>;

/** Why an attempt failed, as the admin area shows it: the receiver's status and the start of its answer, or the network error. */
function describeFailure(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    const detail = cause instanceof Error ? `: ${cause.message}` : '';
    if (error.name === 'TimeoutError') return `no answer within the timeout (${error.message})`;
    return `${error.message}${detail}`;
  }
  return String(error);
}

/** The first ERROR_BODY_CHARS characters of an answer, without reading (or holding) the rest of it. */
async function answerStart(response: Response): Promise<string> {
  if (!response.body) return '';
  const decoder = new TextDecoder();
  let text = '';
  try {
    // leaving the loop early cancels the stream, so a huge or endless answer is not read
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk, { stream: true });
      if (text.length >= ERROR_BODY_CHARS) break;
    }
  } catch {
    // an answer cut off (or timed out) while read still has its status: keep what arrived
  }
  return text.slice(0, ERROR_BODY_CHARS);
}

/** An attempt's outcome waiting to be written, and who waits for it. */
interface PendingOutcome {
  outcome: DeliveryOutcome;
  settle: (result: boolean | Error) => void;
}

class WebhookDelivery {
  private stopped = false;
  private timer: NodeJS.Timeout | null = null;
  /** the poll being made now (records and claim, at most one at a time) */
  private running: Promise<number> | null = null;
  /** attempts under way (the HTTP request; the record may still be pending): delivery id -> its endpoint */
  private readonly inFlight = new Map<number, number>();
  private readonly attempts = new Set<Promise<void>>();
  /** each attempt's abort: its own timeout, or the worker stopping */
  private readonly sends = new InFlightSends('the webhook worker stopped');
  private failedPolls = 0;
  /** endpoints whose last claim filled their room: more are probably due, so their freed lanes bring the next poll */
  private readonly backlogged = new Set<number>();
  /** outcomes not yet written: the next poll writes them in its claim's transaction, or a write of their own */
  private pending: PendingOutcome[] = [];
  /** a turn (records, maybe a claim) is set for the next turn of the event loop */
  private turnSet = false;
  /** an attempt ended during a poll: another turn right after it */
  private turnAfterPoll = false;
  /** a write of outcomes alone, in progress */
  private writing: Promise<void> | null = null;
  /** a claim outlives the attempt's timeout with room for recording the outcome */
  private readonly claimMs: number;
  /** lanes one endpoint may hold, so a slow endpoint leaves the others lanes of their own */
  private readonly perEndpoint: number;

  constructor(private readonly o: Resolved) {
    this.claimMs = o.timeoutMs * 3 + 5_000;
    this.perEndpoint = Math.max(1, Math.ceil(o.concurrency / 2));
  }

  /**
   * Writes the outcomes that ended since the last write and claims what is due for the free lanes, in one
   * transaction, and starts those attempts (not awaited); resolves with the number claimed.
   */
  async runOnce(): Promise<number> {
    if (this.stopped) return 0;
    const total = this.o.concurrency - this.inFlight.size;
    const busy = new Map<number, number>();
    for (const endpointId of this.inFlight.values()) busy.set(endpointId, (busy.get(endpointId) ?? 0) + 1);
    const room = (endpointId: number) => this.perEndpoint - (busy.get(endpointId) ?? 0);
    const outcomes = this.pending;
    this.pending = [];
    const now = this.o.clock();
    let rows: ClaimedDelivery[];
    try {
      const result = await claimDueDeliveries(
        this.o.db,
        now,
        now + this.claimMs,
        { total: Math.max(0, total), room },
        outcomes.map((p) => p.outcome),
      );
      rows = result.claimed;
      for (const p of outcomes) p.settle(result.recorded.has(p.outcome.id));
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error));
      for (const p of outcomes) p.settle(failure);
      throw error;
    }
    const claimedPer = new Map<number, number>();
    for (const row of rows) claimedPer.set(row.endpoint_id, (claimedPer.get(row.endpoint_id) ?? 0) + 1);
    for (const [endpointId, n] of claimedPer)
      if (n >= room(endpointId)) this.backlogged.add(endpointId);
      else this.backlogged.delete(endpointId);
    for (const endpointId of this.backlogged) if (!claimedPer.has(endpointId) && room(endpointId) > 0) this.backlogged.delete(endpointId);
    for (const row of rows) this.start(row);
    return rows.length;
  }

  private start(row: ClaimedDelivery): void {
    this.inFlight.set(row.id, row.endpoint_id);
    const attempt = this.handle(row).finally(() => this.attempts.delete(attempt));
    this.attempts.add(attempt);
  }

  /** The lane of this attempt is free (its HTTP request ended): its outcome and maybe a claim go out in the next turn. */
  private laneFreed(row: ClaimedDelivery): void {
    this.inFlight.delete(row.id);
    this.kick();
  }

  /**
   * Once per turn of the event loop (the attempts that end together go together): a poll when an endpoint
   * with a backlog has half its lanes free or more (its outcomes are written in the poll's transaction),
   * else a write of the outcomes alone.
   */
  private kick(): void {
    if (this.turnSet) return;
    this.turnSet = true;
    setImmediate(() => {
      this.turnSet = false;
      this.turn();
    });
  }

  private turn(): void {
    if (this.running) {
      this.turnAfterPoll = true;
      return;
    }
    if (!this.stopped && this.wantsClaim()) {
      if (this.timer) clearTimeout(this.timer);
      this.schedule(0);
    } else if (this.pending.length > 0) {
      this.writing ??= this.writeOutcomes().finally(() => {
        this.writing = null;
        if (this.pending.length > 0) this.kick();
      });
    }
  }

  private wantsClaim(): boolean {
    const inFlightOf = (endpointId: number) => [...this.inFlight.values()].filter((e) => e === endpointId).length;
    for (const endpointId of this.backlogged) if (this.perEndpoint - inFlightOf(endpointId) >= Math.ceil(this.perEndpoint / 2)) return true;
    return false;
  }

  /** The outcomes waiting, in one statement of their own (no claim due now). */
  private async writeOutcomes(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    try {
      const recorded = await recordOutcomes(
        this.o.db.kysely,
        batch.map((p) => p.outcome),
      );
      for (const p of batch) p.settle(recorded.has(p.outcome.id));
    } catch (error) {
      for (const p of batch) p.settle(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** Resolves when the outcome is written (true: recorded; false: the row had moved on), rejects when the write failed. */
  private record(outcome: DeliveryOutcome): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.pending.push({ outcome, settle: (r) => (r instanceof Error ? reject(r) : resolve(r)) });
    });
  }

  private async handle(row: ClaimedDelivery): Promise<void> {
    let outcome: { status: number | null; error: string | null } | 'release';
    if (this.stopped) outcome = 'release';
    else
      try {
        outcome = await this.sends.run(this.o.timeoutMs, timedOut, (signal) => this.attempt(row, signal));
      } catch (error) {
        outcome = this.sends.aborting ? 'release' : { status: null, error: describeFailure(error) };
      }
    try {
      if (outcome === 'release') {
        this.inFlight.delete(row.id);
        return await this.release(row);
      }
      const recorded = this.record(this.outcomeOf(row, outcome));
      this.laneFreed(row);
      const written = await recorded;
      if (outcome.error !== null) {
        const given = row.attempts + 1;
        const gaveUp = this.o.clock() - row.queued_at >= this.o.giveUpAfterMs;
        // the URL and the error only: never the secret or the body (it holds the customer's details)
        this.o.log[gaveUp ? 'error' : 'warn'](
          { deliveryId: row.id, endpointId: row.endpoint_id, attempt: given, recorded: written, error: outcome.error },
          gaveUp ? 'webhook delivery given up' : 'webhook delivery failed, will retry',
        );
      }
    } catch (error) {
      // the database refused the record: the short claim expires and the delivery is attempted again
      this.o.log.error({ deliveryId: row.id, err: error }, 'could not record webhook outcome');
    }
  }

  /** What to write for an attempt: delivered, or failed and retried with backoff until the give-up time. */
  private outcomeOf(row: ClaimedDelivery, attempt: { status: number | null; error: string | null }): DeliveryOutcome {
    const now = this.o.clock();
    const retryAt =
      attempt.error === null || now - row.queued_at >= this.o.giveUpAfterMs
        ? null
        : now + retryDelay(row.attempts + 1, this.o.retryBaseMs, this.o.retryCapMs);
    return { id: row.id, claimedUntil: row.claimed_until, status: attempt.status, error: attempt.error, retryAt, at: now };
  }

  /** One POST: the stored body, signed now; a 2xx is success, anything else a failure with its status. */
  private async attempt(row: ClaimedDelivery, signal: AbortSignal): Promise<{ status: number | null; error: string | null }> {
    const timestamp = Math.floor(this.o.clock() / 1000);
    const response = await fetch(row.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'booking-webhooks/1',
        ...webhookHeaders(row.secret, row.event_id, timestamp, row.body),
      },
      body: row.body,
      // a redirect is not followed: the signature was meant for this URL
      redirect: 'manual',
      // the attempt's timeout or the worker stopping; it bounds reading the answer too
      signal,
    });
    if (response.status >= 200 && response.status < 300) {
      await response.body?.cancel();
      return { status: response.status, error: null };
    }
    const text = (await answerStart(response)).replace(/\s+/g, ' ').trim();
    return { status: response.status, error: `HTTP ${response.status}${text ? `: ${text}` : ''}` };
  }

  private async release(row: ClaimedDelivery): Promise<void> {
    await releaseDelivery(this.o.db.kysely, row.id, row.claimed_until, this.o.clock());
  }

  schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.runOnce().then(
        (claimed) => {
          this.failedPolls = 0;
          return claimed;
        },
        (error: unknown) => {
          this.failedPolls += 1;
          this.backlogged.clear();
          this.o.log.error({ err: error }, 'webhook poll failed');
          return -1;
        },
      );
      void this.running.then((claimed) => {
        this.running = null;
        if (this.turnAfterPoll) {
          this.turnAfterPoll = false;
          this.kick();
        }
        if (this.timer) return;
        const backoff = this.o.pollIntervalMs * Math.min(10, 2 ** Math.max(0, this.failedPolls - 1));
        this.schedule(claimed < 0 ? backoff : this.o.pollIntervalMs);
      });
    }, delay);
  }

  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const abort = setTimeout(() => this.sends.abortAll(), graceMs);
    try {
      if (this.running) await this.running;
      // the attempts' outcomes are written by turns of their own now that no poll comes
      await Promise.all([...this.attempts]);
    } finally {
      clearTimeout(abort);
      this.sends.abortAll();
    }
  }
}

export function startWebhookWorker(options: WebhookWorkerOptions): WebhookWorker {
  const delivery = new WebhookDelivery({
    ...options,
    timeoutMs: options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
    pollIntervalMs: options.pollIntervalMs ?? 1000,
    concurrency: Math.max(1, options.concurrency ?? 8),
    retryBaseMs: options.retryBaseMs ?? 10_000,
    retryCapMs: options.retryCapMs ?? 60 * 60_000,
    clock: options.clock ?? Date.now,
    log: options.log ?? silent,
  });
  delivery.schedule(0);
  return {
    runOnce: () => delivery.runOnce(),
    stop: ({ graceMs = STOP_GRACE_MS } = {}) => delivery.stop(graceMs),
  };
}
