// Composition root of the mail delivery thread (MAIL_WORKER=thread, the default; docs/mail.md, "Capacity").
// `booking serve` runs the outbox delivery (app/outbox-delivery.ts) in a worker thread of its own, so mail
// has a core of its own: at a busy process's peak the bookings take the main thread's whole core, and mail
// delivered on the same event loop waited in the outbox until they stopped. The thread opens its own
// database connection(s) (SQLite: a second connection to the file, WAL; PostgreSQL: a small pool of its
// own), logs through the main logger (messages posted to the main thread), and stops when told to: the
// worker's own stop (grace, abort, release, the unrecorded acceptances retried), then its database.
//
// This one file is both ends: the main thread calls startMailThread(), which starts this same module in
// a worker; there (not the main thread, and given workerData) it runs runThread().
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { connect, type ConnectOptions } from './db/connect.js';
import { startOutboxWorker, type OutboxLog, type OutboxWorker, type OutboxWorkerOptions } from './app/outbox-delivery.js';

/** What the thread needs to start: plain data, copied into the thread. */
export interface MailThreadOptions {
  databaseUrl: string;
  connect: ConnectOptions;
  worker: Omit<OutboxWorkerOptions, 'db' | 'log' | 'clock' | 'afterClaim'>;
}

/**
 * PostgreSQL connections of the thread's own pool at most (out of DATABASE_POOL_MAX): a claim, the 'sent'
 * records and a failure's outcome at once (of them one for the snapshot's version reads, db.hot).
 */
export const MAIL_THREAD_POOL_MAX = 3;

/**
 * A worker thread loads this module as plain JavaScript (dist/, which bin/booking runs); run from the
 * TypeScript sources (tsx: the in-process tests and scripts) the thread would not get tsx's loader, so
 * there delivery stays inline.
 */
export const MAIL_THREAD_AVAILABLE = import.meta.url.endsWith('.js');

/** How long the main thread waits for the thread to close its database after the worker stopped. */
const THREAD_EXIT_MS = 2_000;
/** After the thread failed (an error nothing caught): when it is started again. */
const RESTART_DELAY_MS = 1_000;

type ToThread = { type: 'stop'; graceMs?: number };
type FromThread = { type: 'log'; level: keyof OutboxLog; obj: object; msg: string } | { type: 'stopped' };

const ROLE = 'booking-outbox-thread';

/**
 * Starts the delivery in a worker thread; stop() tells it to stop (as OutboxWorker.stop: grace, abort,
 * release) and resolves once the worker stopped, its database closing (bounded) after. A thread that
 * fails is logged and started again after a second (its claims expire or are taken up again by it).
 */
export function startMailThread(options: MailThreadOptions, log: OutboxLog): Pick<OutboxWorker, 'stop'> {
  let thread: Worker;
  let stopping = false;
  let restart: NodeJS.Timeout | null = null;
  const start = () => {
    thread = new Worker(new URL(import.meta.url), { workerData: { role: ROLE, options } });
    const threadId = thread.threadId;
    thread.on('message', (message: FromThread) => {
      // the binding says which thread a line came from (the operator sees delivery is off the API's loop)
      if (message.type === 'log') log[message.level]({ ...revived(message.obj), mailThread: threadId }, message.msg);
    });
    thread.on('error', (error) => log.error({ err: error }, 'the mail thread failed'));
    thread.on('exit', (code) => {
      if (stopping) return;
      log.error({ code }, 'the mail thread ended unexpectedly; starting it again');
      restart = setTimeout(start, RESTART_DELAY_MS);
    });
  };
  start();
  return {
    async stop({ graceMs } = {}) {
      stopping = true;
      if (restart) clearTimeout(restart);
      const current = thread;
      if (current.threadId < 0) return; // already exited
      const exited = new Promise<void>((resolve) => current.once('exit', () => resolve()));
      const stopped = new Promise<void>((resolve) =>
        current.on('message', (message: FromThread) => {
          if (message.type === 'stopped') resolve();
        }),
      );
      current.postMessage({ type: 'stop', graceMs } satisfies ToThread);
      await Promise.race([stopped, exited]);
      // the worker has stopped: its database closes in the thread, bounded here (a frozen PostgreSQL)
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, THREAD_EXIT_MS)));
      await Promise.race([exited, late]);
      clearTimeout(timer);
      await current.terminate();
    },
  };
}

/** Marks an Error posted from the thread (its class does not cross; its name, message, stack and own fields do). */
const POSTED_ERROR = 'postedError';

/** A log record's values as the main thread can take them. */
function postable(obj: object): object {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj)) {
    if (value instanceof Error) {
      const { message, stack, ...own } = value as Error & Record<string, unknown>;
      out[key] = { [POSTED_ERROR]: true, ...own, name: value.name, message, stack };
    } else out[key] = value;
  }
  return out;
}

/** The posted record's errors as Errors again, so the main logger prints them as it prints its own. */
function revived(obj: object): object {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj)) {
    if (value && typeof value === 'object' && POSTED_ERROR in value) {
      const { message, ...rest } = value as Record<string, unknown>;
      delete rest[POSTED_ERROR];
      out[key] = Object.assign(new Error(String(message)), rest);
    } else out[key] = value;
  }
  return out;
}

function runThread(options: MailThreadOptions): void {
  const port = parentPort!;
  const post = (message: FromThread) => port.postMessage(message);
  const logAt =
    (level: keyof OutboxLog) =>
    (obj: object, msg: string): void => {
      try {
        post({ type: 'log', level, obj: postable(obj), msg });
      } catch {
        post({ type: 'log', level, obj: {}, msg });
      }
    };
  const log: OutboxLog = { info: logAt('info'), warn: logAt('warn'), error: logAt('error') };
  const db = connect(options.databaseUrl, options.connect);
  const worker = startOutboxWorker({ ...options.worker, db, log });
  port.on('message', (message: ToThread) => {
    if (message.type !== 'stop') return;
    void (async () => {
      await worker.stop({ graceMs: message.graceMs });
      post({ type: 'stopped' });
      try {
        await db.close();
      } finally {
        port.close();
      }
    })();
  });
}

if (!isMainThread && (workerData as { role?: string } | null)?.role === ROLE) {
  runThread((workerData as { options: MailThreadOptions }).options);
}
