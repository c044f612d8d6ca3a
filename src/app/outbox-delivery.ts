// Delivers the outbox over SMTP, inside each `booking serve` process. It polls for due rows (one indexed
// query), claims only as many as it sends at once (`concurrency` lanes, over a pool of reused SMTP
// connections), sends them, and records each outcome. While more are due, a lane that finishes is given
// the next message at once (claims made meanwhile are gathered into one), so a slow send holds up only its
// own lane. A failure is retried with capped exponential backoff and jitter until the give-up time has
// passed since the message was queued; then it is 'failed' and the admin area shows it.
//
// Exactly once, as far as an SMTP client can: a message is recorded 'sent' right after the SMTP server
// accepts it (acceptances that arrive while a record is being written go together in the next one, so
// under load one UPDATE covers several and a lone one is written at once). When that write fails (the
// database restarting, a connection reset, a lock held too long)
// the acceptance is kept in memory (`accepted`) and written first on every following poll, before anything
// new is claimed; a row of this set is never sent again by this process, even if its claim expired and it
// was claimed again. A send is aborted well before its claim expires, so another worker only takes over a
// message whose sender has given up on it or died. What remains: a process that dies between the server's
// acceptance and the 'sent' record (normally one UPDATE; longer while the database is away) sends that
// message again once the claim expires. Every message carries a stable Message-ID (outbox row and booking),
// so such a duplicate is recognisable as one by mail clients.
//
// Every outcome is written through db.write: on SQLite that waits for another connection's write lock
// without blocking (the API's bookings on the main thread, when delivery runs in its own thread, or
// another process), where a plain statement gave up after the driver's few milliseconds.
//
// Claims are short (default 2 minutes, a send abandoned after 1) and cover only the messages being sent
// right now, so a message whose outcome could not be written (a failure while the database was away) is
// due again soon, not after ten minutes.
//
// Stopping (shutdown) gives a send in flight a short grace, then aborts it (nodemailer closes the
// connection) and releases its claim and those of the batch's unsent rows: the SMTP server never
// acknowledged them, so they are due again at once for any worker, and a slow or stalled server cannot
// hold the process past its shutdown bound. (Aborted after the server had the whole message but before
// its answer arrived, a message could be sent twice: the same gap as above, widened to the grace.)
// Acceptances not yet written are retried for a moment (STOP_RECORD_MS) before the process ends.
//
// The SMTP server is SMTP_URL when set, else the one saved in the admin area ('mail.smtp_url'), looked
// up on every poll through the snapshot cache (one primary-key read unless the configuration changed).
// Without either nothing is claimed, so messages stay queued until a server is configured.
import type { Db } from '../db/connect.js';
import {
  claimDueMessages,
  markAttemptFailed,
  markSent,
  markSkipped,
  releaseClaim,
  type ClaimedMessage,
  type OutboxRow,
} from '../db/repos/outbox.repository.js';
import { renderMessage, type MessageSource } from '../mail/templates.js';
import { describeSendError, outboxMessageId, smtpTransport, type OutgoingMail, type SmtpTransport } from '../mail/smtp-transport.js';
import { SnapshotCache } from './snapshot.js';
import { loadMessageSources } from './outbox.js';
import { parseSmtpUrl } from '../core/settings.js';
import { staleMessageReason } from '../core/messages.js';

export interface OutboxLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface OutboxWorkerOptions {
  db: Db;
  /**
   * smtp://user:pass@host:port (smtps:// for implicit TLS), with only the documented query options (docs/mail.md).
   * null: the one saved in the admin area, if any.
   */
  smtpUrl: string | null;
  /** envelope and From address; default the one saved in the admin area, else the installation's notification address */
  from?: string | null;
  /** after this long since queueing, a message that still fails is given up ('failed') */
  giveUpAfterMs: number;
  pollIntervalMs?: number;
  /** how long a claim holds; a send is aborted at half of it, so it never outlives its claim */
  claimMs?: number;
  /** how many messages are sent at once (and SMTP connections kept open); default 4 */
  concurrency?: number;
  /** at most this many due messages per claim, and never more than the free lanes; default `concurrency` */
  batchSize?: number;
  /** PUBLIC_URL: the installation's public address, for the manage link in customer mail; null: mails carry none */
  publicUrl?: string | null;
  /** first retry delay; doubles per attempt up to retryCapMs, with jitter */
  retryBaseMs?: number;
  retryCapMs?: number;
  clock?: () => number;
  log?: OutboxLog;
  /**
   * Test seam: runs after a batch is claimed and before anything is sent (the integration test uses it to
   * stop a real child process at exactly that point and SIGKILL it). Not reachable from configuration.
   */
  afterClaim?: (rows: readonly OutboxRow[]) => Promise<void>;
}

export interface OutboxWorker {
  /** claims and delivers what is due now; resolves with the number of messages claimed */
  runOnce(): Promise<number>;
  /**
   * Stops polling; a send in flight gets `graceMs` (default STOP_GRACE_MS) to finish, then it is aborted
   * and its message, like the rest of the batch not yet sent, is released for any worker.
   */
  stop(options?: { graceMs?: number }): Promise<void>;
}

/** How long stop() lets a send in flight finish: an SMTP server that works answers within milliseconds. */
export const STOP_GRACE_MS = 1_000;

/** How long stop() keeps retrying to record acceptances the database refused (within the shutdown bound). */
export const STOP_RECORD_MS = 2_000;

/** Default MAIL_CONCURRENCY: messages sent at once per process, over as many pooled SMTP connections. */
export const DEFAULT_MAIL_CONCURRENCY = 4;

const silent: OutboxLog = { info() {}, warn() {}, error() {} };

/** Delay before retry number `attempt` (1 = the first retry): base * 2^(attempt-1), capped, then 50-100% of it. */
export function retryDelay(attempt: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const exponential = Math.min(capMs, baseMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(exponential * (0.5 + random() * 0.5));
}

/** The options with every default filled in. */
type ResolvedOptions = Required<Omit<OutboxWorkerOptions, 'from' | 'afterClaim' | 'publicUrl'>> &
  Pick<OutboxWorkerOptions, 'from' | 'afterClaim' | 'publicUrl'>;

/** Where this poll's messages go: the SMTP transport and the sender address saved in the admin area. */
interface Sender {
  transport: SmtpTransport;
  savedFrom: string;
}

/** One SMTP transport at a time, for the server configured now; replaced when the configuration changes. */
class TransportSlot {
  private current: { url: string; transport: SmtpTransport } | null = null;

  constructor(
    private readonly maxWaitMs: number,
    private readonly maxConnections: number,
    private readonly log: OutboxLog,
  ) {}

  /** The transport for this URL, or null for '' (no server configured). */
  for(url: string): SmtpTransport | null {
    if (this.current?.url === url) return this.current.transport;
    this.close();
    if (url === '') return null;
    this.current = { url, transport: smtpTransport(url, this.maxWaitMs, this.maxConnections) };
    // the URL holds the password: log only that it changed
    this.log.info({}, 'SMTP server configured');
    return this.current.transport;
  }

  close(): void {
    this.current?.transport.close();
    this.current = null;
  }
}

/**
 * The sends (or webhook attempts) in flight, one controller per send and its own deadline timer. Not
 * AbortSignal.any over a process-long signal: on Node 20 that keeps a reference per send for the life of
 * the process. Nor AbortSignal.timeout inside AbortSignal.any: the combined signal holds its sources only
 * weakly, so a garbage collection while a send waits takes the timeout signal, and its timer with it, and
 * the send waits for ever (a webhook receiver that never answers held its worker's lanes that way, issue 14).
 */
export class InFlightSends {
  /** set once stop()'s grace has passed; then the sends in flight are aborted */
  aborting = false;
  private readonly controllers = new Set<AbortController>();

  constructor(private readonly stoppedReason: string) {}

  /** Runs `send` with a signal that aborts with `overdue()` at `deadlineMs` from now, or when all sends are aborted. */
  async run<T>(deadlineMs: number, overdue: () => Error, send: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const deadline = setTimeout(() => controller.abort(overdue()), deadlineMs);
    this.controllers.add(controller);
    try {
      return await send(controller.signal);
    } finally {
      clearTimeout(deadline);
      this.controllers.delete(controller);
    }
  }

  abortAll(): void {
    this.aborting = true;
    for (const controller of this.controllers) controller.abort(new Error(this.stoppedReason));
  }
}

/**
 * Writes 'sent' records, one statement for the acceptances read in the same turn of the event loop and
 * those that arrived while the previous statement was being written (a group commit): under load one
 * UPDATE covers several messages, and a lone acceptance is written in the next turn, so the window between
 * the server's acceptance and its record does not grow.
 */
class SentRecords {
  private pending: { id: number; sentAt: number; settle: (result: boolean | Error) => void }[] = [];
  private flushing: Promise<void> | null = null;

  constructor(private readonly db: Db) {}

  /** Resolves true once recorded, false when the row was already recorded as sent; rejects when the write failed. */
  record(id: number, sentAt: number): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.pending.push({ id, sentAt, settle: (result) => (result instanceof Error ? reject(result) : resolve(result)) });
      this.flushing ??= this.flush();
    });
  }

  /** Resolves once every record asked for so far has been written or has failed. */
  async idle(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async flush(): Promise<void> {
    // the acceptances read in this turn of the event loop (several sockets answer at once under load) go together
    await new Promise((resolve) => setImmediate(resolve));
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      try {
        const recorded = await this.db.write((trx) => markSent(trx, batch));
        for (const entry of batch) entry.settle(recorded.has(entry.id));
      } catch (error) {
        for (const entry of batch) entry.settle(error instanceof Error ? error : new Error(String(error)));
      }
    }
    this.flushing = null;
  }
}

/**
 * The messages of one claim, rendered from their bookings as they are now, read together on first use
 * (a booking's confirmation and notification are claimed together and share the read). The read happens
 * inside each message's send, so a failure counts as that send's failure, as before.
 */
class ClaimedSources {
  private loading: Promise<Map<number, MessageSource>> | null = null;

  constructor(
    private readonly db: Db,
    private readonly rows: readonly ClaimedMessage[],
    private readonly publicUrl: string | null,
  ) {}

  async of(row: ClaimedMessage): Promise<MessageSource | null> {
    this.loading ??= loadMessageSources(this.db, this.rows, this.publicUrl);
    return (await this.loading).get(row.id) ?? null;
  }
}

class OutboxDelivery {
  private stopped = false;
  private timer: NodeJS.Timeout | null = null;
  /** the claim being made now (at most one at a time); resolves with the number claimed, -1 when it failed */
  private claiming: Promise<number> | null = null;
  /** a send finished while a claim was being made: claim again right after it */
  private claimAgain = false;
  /** the last claim filled every lane it asked for: more are probably due, so finished sends bring the next claim */
  private backlog = false;
  private readonly snapshots: SnapshotCache;
  private readonly transports: TransportSlot;
  private readonly sends = new InFlightSends('the outbox worker stopped');
  /** every send started and not yet finished (recorded, failed or released) */
  private readonly inFlight = new Set<Promise<void>>();
  private readonly sentRecords: SentRecords;
  /** a send must end (or be abandoned) this long before its claim does */
  private readonly sendDeadlineMs: number;
  /** while more are due, a claim is made once this many lanes are free: half of them */
  private readonly refillAt: number;
  /**
   * Messages the SMTP server accepted whose 'sent' record the database refused: outbox id -> when it was
   * accepted. Written first before every claim; never sent again while this process lives.
   */
  private readonly accepted = new Map<number, number>();
  /**
   * Messages the SMTP server accepted whose 'sent' record is being written now: not sent again either, and
   * left out of recordAccepted (a claim made meanwhile would otherwise write the same record twice).
   */
  private readonly recording = new Set<number>();
  /** claims in a row that failed (the database away): the next one waits longer, up to 10 poll intervals */
  private failedPolls = 0;
  /** the saved SMTP URL last refused by checkedSavedUrl, so its error is logged once */
  private refusedUrl: string | null = null;

  constructor(private readonly options: ResolvedOptions) {
    this.sendDeadlineMs = Math.floor(options.claimMs / 2);
    this.refillAt = Math.max(1, Math.floor(options.concurrency / 2));
    this.snapshots = new SnapshotCache(options.db);
    this.transports = new TransportSlot(this.sendDeadlineMs, options.concurrency, options.log);
    this.sentRecords = new SentRecords(options.db);
  }

  /** One claim for the free lanes, and the sends it started: resolves when they are done, with the number claimed. */
  async runOnce(): Promise<number> {
    const { claimed, sent } = await this.claimAndSend();
    await sent;
    return claimed;
  }

  /**
   * Claims as many due messages as there are free lanes (at most batchSize) and starts sending each at
   * once; `sent` settles when those sends are done. Nothing is claimed before the acceptances the
   * database refused earlier are written.
   */
  private async claimAndSend(): Promise<{ claimed: number; sent: Promise<unknown> }> {
    const idle = { claimed: 0, sent: Promise.resolve() };
    if (this.stopped) return idle;
    await this.recordAccepted();
    const sender = await this.currentSender();
    const lanes = Math.min(this.options.batchSize, this.options.concurrency - this.inFlight.size);
    if (!sender || lanes <= 0) return idle;
    const now = this.options.clock();
    const rows = await claimDueMessages(this.options.db, now, now + this.options.claimMs, lanes);
    if (rows.length === 0) return idle;
    this.backlog = rows.length === lanes;
    if (this.options.afterClaim) await this.options.afterClaim(rows);
    const sources = new ClaimedSources(this.options.db, rows, this.options.publicUrl ?? null);
    const sends = rows.map((row) => {
      const send = this.handle(row, sender, sources).finally(() => {
        this.inFlight.delete(send);
        // with more due, the free lanes get their messages now rather than at the next poll; once half the
        // lanes are free, so that one claim serves several (a claim per message cost more than the send)
        if (this.backlog && this.options.concurrency - this.inFlight.size >= this.refillAt) this.poll();
      });
      this.inFlight.add(send);
      return send;
    });
    return { claimed: rows.length, sent: Promise.all(sends) };
  }

  /**
   * Claims for the free lanes unless a claim is being made (then once more right after it). After a claim
   * that filled its lanes the next one follows as soon as a lane frees up; after a short one (nothing more
   * due) or a failure, the next poll is after the interval (longer while the database is away).
   */
  poll(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    if (this.inFlight.size >= this.options.concurrency) return;
    this.claimAgain = false;
    this.claiming = this.claimAndSend().then(
      ({ claimed }) => {
        this.failedPolls = 0;
        return claimed;
      },
      (error: unknown) => {
        this.failedPolls += 1;
        this.backlog = false;
        this.options.log.error({ err: error, unrecorded: this.accepted.size }, 'outbox poll failed');
        return -1;
      },
    );
    void this.claiming.then((claimed) => {
      this.claiming = null;
      if (claimed < 0) {
        this.schedule(this.options.pollIntervalMs * Math.min(10, 2 ** Math.max(0, this.failedPolls - 1)));
      } else if (this.backlog && claimed > 0 && this.claimAgain) {
        this.poll();
      } else if (!this.backlog || claimed === 0) {
        this.backlog = false;
        this.schedule(this.options.pollIntervalMs);
      }
    });
  }

  /** The next poll after `delay` (an earlier one already scheduled stays). */
  schedule(delay: number): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.poll();
    }, delay);
  }

  /** Writes the acceptances the database refused before; throws (keeping them) while it still refuses. */
  private async recordAccepted(): Promise<void> {
    if (this.accepted.size === 0) return;
    const entries = [...this.accepted].map(([id, sentAt]) => ({ id, sentAt }));
    await this.options.db.write((trx) => markSent(trx, entries));
    for (const { id } of entries) {
      this.accepted.delete(id);
      this.options.log.info({ outboxId: id }, 'mail sent earlier recorded as sent');
    }
  }

  /** The SMTP server and sender configured now (SMTP_URL wins over the saved one), or null when there is none. */
  private async currentSender(): Promise<Sender | null> {
    const { settings } = await this.snapshots.current();
    const transport = this.transports.for(this.options.smtpUrl ?? this.checkedSavedUrl(settings.smtpUrl));
    return transport && { transport, savedFrom: settings.mailFrom };
  }

  /**
   * The saved SMTP URL, checked again as it is used: one saved by an older version may carry options that
   * are refused today (a proxy, TLS switched off). Such a URL is not used, so the messages wait, and the
   * log says why once per URL (without the URL: it holds the password).
   */
  private checkedSavedUrl(url: string): string {
    try {
      return parseSmtpUrl(url);
    } catch (error) {
      if (this.refusedUrl !== url)
        this.options.log.error({ reason: (error as Error).message }, 'the saved SMTP server is not used: save it again on the E-mail page');
      this.refusedUrl = url;
      return '';
    }
  }

  /** Sends one claimed message, or releases it once stopping: no new send starts then. */
  private async handle(row: ClaimedMessage, sender: Sender, sources: ClaimedSources): Promise<void> {
    if (this.recording.has(row.id)) return;
    if (this.accepted.has(row.id)) {
      // accepted by the SMTP server earlier, its record refused: claimed again, it is recorded, not re-sent
      // (recordAccepted runs before every claim, so this is a safety net)
      await this.recordAccepted().catch(() => {});
      return;
    }
    // each send must end (or be abandoned) while its claim still holds, or when the worker stops
    const deadlineMs = Math.max(1, row.claimed_until - this.sendDeadlineMs - this.options.clock());
    try {
      await this.sends.run(
        deadlineMs,
        () => new Error('the send did not finish while its claim held'),
        async (signal) => {
          if (this.stopped) await this.release(row);
          else await this.deliver(row, sender, sources, signal);
        },
      );
    } catch (error) {
      // the database refused a failure or a release: nothing was sent, the short claim expires and the row is tried again
      this.options.log.error({ outboxId: row.id, err: error }, 'could not record mail outcome');
    }
  }

  private async deliver(row: ClaimedMessage, sender: Sender, sources: ClaimedSources, signal: AbortSignal): Promise<void> {
    try {
      const mail = await this.compose(row, sender, sources);
      if (mail === 'skipped') return;
      await sender.transport.send(mail, signal);
    } catch (error) {
      // stopped, not failed: the server never acknowledged the message, so it goes back unsent
      if (this.sends.aborting) return this.release(row);
      return this.recordFailure(row, error);
    }
    const sentAt = this.options.clock();
    this.recording.add(row.id);
    try {
      const recorded = await this.sentRecords.record(row.id, sentAt);
      if (!recorded) this.options.log.warn({ outboxId: row.id }, 'mail sent; another worker had already recorded it as sent');
    } catch (error) {
      // kept in `accepted`: written before the next claim, and never sent again by this process
      this.accepted.set(row.id, sentAt);
      this.options.log.error({ outboxId: row.id, err: error }, 'mail sent; recording it failed, will record it on the next poll');
    } finally {
      this.recording.delete(row.id);
    }
  }

  /**
   * What a claimed message becomes: rendered from its booking as it is now, from the configured sender.
   * The one place that decides about a message before it goes out: 'skipped' when its moment has passed
   * (recorded as such here), an error records a failed attempt.
   */
  private async compose(row: ClaimedMessage, sender: Sender, sources: ClaimedSources): Promise<OutgoingMail | 'skipped'> {
    const source = await sources.of(row);
    if (!source) throw new Error('the booking of this message no longer exists');
    const { booking } = source;
    const stale = staleMessageReason(row.kind, { cancelled: booking.cancelledAt !== null, ...booking }, this.options.clock());
    if (stale !== null) {
      await this.options.db.write((trx) => markSkipped(trx, row.id, row.claimed_until, stale));
      this.options.log.info({ outboxId: row.id, reason: stale }, 'mail skipped');
      return 'skipped';
    }
    const from = this.options.from || sender.savedFrom || source.installation.notifyEmail;
    if (!from)
      throw new Error(
        "no sender address: set MAIL_FROM, the sender address on the E-mail page, or the installation's notification address",
      );
    const messageId = outboxMessageId(row.id, source.booking.detailsId, from);
    return { from, to: row.recipient, message: renderMessage(source), messageId };
  }

  /** A failed attempt: retried after a backoff, or given up once giveUpAfterMs has passed since queueing. */
  private async recordFailure(row: ClaimedMessage, error: unknown): Promise<void> {
    const { retryBaseMs, retryCapMs, giveUpAfterMs, log } = this.options;
    const now = this.options.clock();
    const attempt = row.attempts + 1;
    const retryAt = now - row.created_at >= giveUpAfterMs ? null : now + retryDelay(attempt, retryBaseMs, retryCapMs);
    const failure = { error: describeSendError(error), retryAt };
    const recorded = await this.options.db.write((trx) => markAttemptFailed(trx, row.id, row.claimed_until, failure));
    log[retryAt === null ? 'error' : 'warn'](
      { outboxId: row.id, attempt, recorded, error: failure.error },
      retryAt === null ? 'mail given up' : 'mail failed, will retry',
    );
  }

  private async release(row: ClaimedMessage): Promise<void> {
    const released = await this.options.db.write((trx) => releaseClaim(trx, row.id, row.claimed_until, this.options.clock()));
    this.options.log.info({ outboxId: row.id, released }, 'mail not sent: the worker stopped; released for the next worker');
  }

  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const abort = setTimeout(() => this.sends.abortAll(), graceMs);
    try {
      // a claim being made starts its sends, which see `stopped` and release their rows
      if (this.claiming) await this.claiming;
      while (this.inFlight.size > 0) await Promise.all(this.inFlight);
    } finally {
      clearTimeout(abort);
      this.sends.abortAll();
    }
    await this.sentRecords.idle();
    this.transports.close();
    // acceptances the database refused: a few more tries, bounded, before the process ends
    const until = Date.now() + STOP_RECORD_MS;
    while (this.accepted.size > 0) {
      try {
        await this.recordAccepted();
      } catch (error) {
        if (Date.now() >= until) {
          this.options.log.error(
            { err: error, outboxIds: [...this.accepted.keys()] },
            'stopping with mail sent but not recorded as sent: these will be sent again when their claims expire',
          );
          break;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }
}

export function startOutboxWorker(options: OutboxWorkerOptions): OutboxWorker {
  const concurrency = Math.max(1, options.concurrency ?? DEFAULT_MAIL_CONCURRENCY);
  const delivery = new OutboxDelivery({
    ...options,
    pollIntervalMs: options.pollIntervalMs ?? 1000,
    claimMs: options.claimMs ?? 2 * 60_000,
    concurrency,
    batchSize: options.batchSize ?? concurrency,
    retryBaseMs: options.retryBaseMs ?? 30_000,
    retryCapMs: options.retryCapMs ?? 30 * 60_000,
    clock: options.clock ?? Date.now,
    log: options.log ?? silent,
  });
  delivery.poll();
  return {
    runOnce: () => delivery.runOnce(),
    stop: ({ graceMs = STOP_GRACE_MS } = {}) => delivery.stop(graceMs),
  };
}
