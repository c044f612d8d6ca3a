// Delivers the outbox over SMTP, inside each `booking serve` process. It polls for due rows (one indexed
// query), claims a batch so no other worker or instance sends the same message, sends each one, and
// records the outcome. A failure is retried with capped exponential backoff and jitter until the
// give-up time has passed since the message was queued; then it is 'failed' and the admin area shows it.
//
// Exactly once: a message is marked sent right after the SMTP server accepts it, and a send is aborted
// well before its claim expires, so another worker can only take over a message whose sender has given
// up on it or died. (A process that dies in the instant between the server's acceptance and the 'sent'
// write would send that one message again after the claim expires: the unavoidable at-least-once gap of
// any SMTP client, kept as short as one UPDATE.)
//
// Stopping (shutdown) gives a send in flight a short grace, then aborts it (nodemailer closes the
// connection) and releases its claim and those of the batch's unsent rows: the SMTP server never
// acknowledged them, so they are due again at once for any worker, and a slow or stalled server cannot
// hold the process past its shutdown bound. (Aborted after the server had the whole message but before
// its answer arrived, a message could be sent twice: the same gap as above, widened to the grace.)
//
// The SMTP server is SMTP_URL when set, else the one saved in the admin area ('mail.smtp_url'), looked
// up on every poll through the snapshot cache (one primary-key read unless the configuration changed).
// Without either nothing is claimed, so messages stay queued until a server is configured.
import nodemailer, { type Transporter } from 'nodemailer';
import type { Db } from '../db/connect.js';
import { claimDueMessages, loadMessageSource, markAttemptFailed, markSent, releaseClaim, type OutboxRow } from '../db/repos/outbox.repository.js';
import { renderMessage, type RenderedMessage } from './templates.js';
import { SnapshotCache } from '../app/snapshot.js';

export interface OutboxWorkerOptions {
  db: Db;
  /**
   * smtp://user:pass@host:port (smtps:// for implicit TLS); nodemailer options may follow as query parameters.
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
  batchSize?: number;
  /** first retry delay; doubles per attempt up to retryCapMs, with jitter */
  retryBaseMs?: number;
  retryCapMs?: number;
  clock?: () => number;
  log?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
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

const silent = { info() {}, warn() {}, error() {} };

/** Delay before retry number `attempt` (1 = the first retry): base * 2^(attempt-1), capped, then 50-100% of it. */
export function retryDelay(attempt: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const exponential = Math.min(capMs, baseMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(exponential * (0.5 + random() * 0.5));
}

function describeError(error: unknown): string {
  if (error instanceof Error) {
    const e = error as Error & { responseCode?: number; response?: string; code?: string };
    return [e.code, e.responseCode, e.response ?? e.message].filter((x) => x !== undefined && x !== '').join(' ');
  }
  return String(error);
}

export function mailOptions(row: Pick<OutboxRow, 'recipient'>, message: RenderedMessage, from: string) {
  return {
    // addresses as objects: nodemailer encodes the name, and the address was validated before queueing
    from: { name: message.fromName, address: from },
    to: { name: '', address: row.recipient },
    ...(message.replyTo ? { replyTo: { name: '', address: message.replyTo } } : {}),
    subject: message.subject,
    text: message.text,
    html: message.html,
    attachments: [{
      filename: message.calendar.filename,
      content: message.calendar.content,
      contentType: `text/calendar; charset=utf-8; method=${message.calendar.method}`,
    }],
    // never let a customer value pick other recipients
    envelope: { from, to: [row.recipient] },
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

export function startOutboxWorker(options: OutboxWorkerOptions): OutboxWorker {
  const {
    db, smtpUrl, giveUpAfterMs, pollIntervalMs = 1000, claimMs = 10 * 60_000, batchSize = 10,
    retryBaseMs = 30_000, retryCapMs = 30 * 60_000, clock = Date.now, log = silent, afterClaim,
  } = options;
  const sendDeadlineMs = Math.floor(claimMs / 2);
  const snapshots = new SnapshotCache(db);
  let transport: { url: string; transporter: Transporter } | null = null;

  /** The transport for the SMTP server configured now (a new one when it changed), or null when there is none. */
  function transportFor(url: string): Transporter | null {
    if (transport?.url === url) return transport.transporter;
    transport?.transporter.close();
    transport = null;
    if (url === '') return null;
    transport = {
      url,
      transporter: nodemailer.createTransport({
        url,
        connectionTimeout: Math.min(30_000, sendDeadlineMs),
        greetingTimeout: Math.min(30_000, sendDeadlineMs),
        socketTimeout: Math.min(60_000, sendDeadlineMs),
      }),
    };
    // the URL holds the password: log only that it changed
    log.info({}, 'SMTP server configured');
    return transport.transporter;
  }

  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<number> | null = null;
  /** set by stop() once the grace has passed; then the sends in flight are aborted */
  let aborting = false;
  /**
   * One controller per send (not AbortSignal.any over a process-long signal: on Node 20 that keeps a
   * reference per send for the life of the process).
   */
  const inFlight = new Set<AbortController>();
  const abortSends = () => {
    aborting = true;
    for (const controller of inFlight) controller.abort(new Error('the outbox worker stopped'));
  };

  async function release(row: OutboxRow): Promise<void> {
    const released = await releaseClaim(db.kysely, row.id, row.claimed_until!, clock());
    log.info({ outboxId: row.id, released }, 'mail not sent: the worker stopped; released for the next worker');
  }

  async function deliver(row: OutboxRow, send: { transporter: Transporter; savedFrom: string }, signal: AbortSignal): Promise<void> {
    const claimedUntil = row.claimed_until!;
    try {
      const source = await loadMessageSource(db.kysely, row);
      if (!source) throw new Error('the booking of this message no longer exists');
      const from = options.from || send.savedFrom || source.installation.notifyEmail;
      if (!from) throw new Error('no sender address: set MAIL_FROM, the sender address on the E-mail page, or the installation\'s notification address');
      const message = renderMessage(source);
      await send.transporter.sendMail({ ...mailOptions(row, message, from), signal });
    } catch (error) {
      // stopped, not failed: the server never acknowledged the message, so it goes back unsent
      if (aborting) return release(row);
      const now = clock();
      const attempt = row.attempts + 1;
      const retryAt = now - row.created_at >= giveUpAfterMs ? null : now + retryDelay(attempt, retryBaseMs, retryCapMs);
      const recorded = await markAttemptFailed(db.kysely, row.id, claimedUntil, { error: describeError(error), retryAt });
      log[retryAt === null ? 'error' : 'warn']({ outboxId: row.id, attempt, recorded, error: describeError(error) }, retryAt === null ? 'mail given up' : 'mail failed, will retry');
      return;
    }
    const recorded = await markSent(db.kysely, row.id, claimedUntil, clock());
    if (!recorded) log.error({ outboxId: row.id }, 'mail sent after its claim had expired');
  }

  async function runOnce(): Promise<number> {
    if (stopped) return 0;
    const { settings } = await snapshots.current();
    const transporter = transportFor(smtpUrl ?? settings.smtpUrl);
    if (!transporter) return 0;
    const send = { transporter, savedFrom: settings.mailFrom };
    const now = clock();
    const rows = await claimDueMessages(db, now, now + claimMs, batchSize);
    if (rows.length === 0) return 0;
    if (afterClaim) await afterClaim(rows);
    for (const row of rows) {
      // each send must end (or be abandoned) while its claim still holds, or when the worker stops
      const controller = new AbortController();
      const deadline = setTimeout(() => controller.abort(new Error('the send did not finish while its claim held')), Math.max(1, row.claimed_until! - sendDeadlineMs - clock()));
      inFlight.add(controller);
      try {
        // once stopping, no new send starts: the rest of the batch goes back at once
        if (stopped) await release(row);
        else await deliver(row, send, controller.signal);
      } catch (error) {
        // the database refused the outcome; the claim expires and the row is tried again
        log.error({ outboxId: row.id, err: error }, 'could not record mail outcome');
      } finally {
        clearTimeout(deadline);
        inFlight.delete(controller);
      }
    }
    return rows.length;
  }

  function schedule(delay: number) {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = null;
      running = runOnce().catch((error) => {
        log.error({ err: error }, 'outbox poll failed');
        return 0;
      });
      void running.then((claimed) => {
        running = null;
        // a full batch means more may be waiting: go on at once
        schedule(claimed >= batchSize ? 0 : pollIntervalMs);
      });
    }, delay);
  }
  schedule(0);

  return {
    runOnce,
    async stop({ graceMs = STOP_GRACE_MS } = {}) {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      const abort = setTimeout(abortSends, graceMs);
      try {
        if (running) await running;
      } finally {
        clearTimeout(abort);
        abortSends();
      }
      transport?.transporter.close();
    },
  };
}
