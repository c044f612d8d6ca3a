// Composition root of `booking serve`: config -> database -> migrations -> app -> listen,
// and a graceful shutdown on SIGTERM/SIGINT.
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from './config.js';
import { connect, parseDatabaseUrl, type Db, UNBOUNDED_WORK } from './db/connect.js';
import { migrate } from './db/migrate.js';
import { buildApp, REDACTED_PATHS } from './http/build-app.js';
import { RedisRateLimitStore } from './rate-limit/redis-store.js';
import { startOutboxWorker, type OutboxLog, type OutboxWorker } from './app/outbox-delivery.js';
import { MAIL_THREAD_AVAILABLE, MAIL_THREAD_POOL_MAX, startMailThread, type MailThreadOptions } from './mail-thread.js';
import { startWebhookWorker } from './app/webhook-delivery.js';

export interface RunningServer {
  app: FastifyInstance;
  db: Db;
  url: string;
  stop(): Promise<void>;
}

export const SHUTDOWN_TIMEOUT_MS = 10_000;
/**
 * How long requests in flight get to finish at shutdown; then their connections are closed. Well under
 * SHUTDOWN_TIMEOUT_MS, so the mail worker's stop (at most about a second) and closing the database
 * always run. A request waiting on the database ends sooner anyway (DATABASE_STATEMENT_TIMEOUT_MS).
 */
export const DRAIN_TIMEOUT_MS = 5_000;
/**
 * The mail worker's stop and the database's close each get a bound of their own: with the database frozen,
 * a poll's queries (each up to the statement bound) and the pool's end (it waits for its clients) could
 * otherwise outlast SHUTDOWN_TIMEOUT_MS. Unrecorded claims left behind expire and are sent by the next
 * worker; nothing is lost.
 */
export const MAILER_STOP_TIMEOUT_MS = 6_000;
export const DB_CLOSE_TIMEOUT_MS = 2_000;

/** Waits for `work`, at most `ms`; says which it was. `work` goes on in the background when late. */
async function within(work: Promise<unknown>, ms: number): Promise<'done' | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
  try {
    return await Promise.race([work.then(() => 'done' as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

export async function startServer(config: Config = loadConfig()): Promise<RunningServer> {
  const mail = mailPlacement(config);
  const db = connect(config.databaseUrl, {
    // the mail thread's pool is part of DATABASE_POOL_MAX: the process's connections stay within it
    poolMax: config.databasePoolMax - mail.connections,
    connectTimeoutMs: config.databaseConnectTimeoutMs,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    busyTimeoutMs: config.sqliteBusyTimeoutMs,
    preparedStatements: config.databasePreparedStatements,
  });
  await migrateUnbounded(config, db);
  // with several instances the rate-limit count lives in Redis; without REDIS_URL it is in-process
  const rateLimits = config.redisUrl ? new RedisRateLimitStore({ url: config.redisUrl, prefix: config.redisPrefix }) : undefined;
  const app = await buildApp({
    db,
    rateLimits,
    logger: { level: config.logLevel, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
    trustProxy: config.trustProxy,
    smtpUrl: config.smtpUrl,
    mailFrom: config.mailFrom,
    publicUrl: config.publicUrl,
  });
  if (rateLimits) {
    rateLimits.attachLogger(app.log);
    // bounded: an unreachable Redis must not keep the API from starting (it fails open)
    await rateLimits.ready();
  }
  const url = await app.listen({ host: config.host, port: config.port });
  // SMTP_URL, else the server saved in the admin area; with neither the messages wait in the outbox
  const mailer = startMailer(config, mail, db, app.log.child({ component: 'outbox' }));
  // webhook deliveries: the same outbox pattern, its own worker and claims (docs/webhooks.md)
  const webhooks = startWebhookWorker({
    db,
    timeoutMs: config.webhookTimeoutSeconds * 1000,
    giveUpAfterMs: config.webhookGiveUpAfterHours * 3_600_000,
    log: app.log.child({ component: 'webhooks' }),
  });
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      // the worker stops with the drain, not after it: no new claim while requests finish. A send in flight
      // gets a moment to finish (and be recorded as sent); one that takes longer (a stalled SMTP server) is
      // aborted and its message released. Every step is bounded, so shutdown stays within SHUTDOWN_TIMEOUT_MS
      // even with the database frozen.
      // The webhook worker likewise: an attempt in flight gets the same grace, then it is aborted and released.
      const [, mail, hooks] = await Promise.all([
        drain(app),
        within(mailer.stop(), MAILER_STOP_TIMEOUT_MS),
        within(webhooks.stop(), MAILER_STOP_TIMEOUT_MS),
      ]);
      if (mail === 'late') app.log.warn({ afterMs: MAILER_STOP_TIMEOUT_MS }, 'the mail worker did not stop in time: its claims expire');
      if (hooks === 'late') app.log.warn({ afterMs: MAILER_STOP_TIMEOUT_MS }, 'the webhook worker did not stop in time: its claims expire');
      await rateLimits?.close();
      if ((await within(db.close(), DB_CLOSE_TIMEOUT_MS)) === 'late')
        app.log.warn({ afterMs: DB_CLOSE_TIMEOUT_MS }, 'the database did not close in time');
    })());
  return { app, db, url, stop };
}

/**
 * Where the outbox is delivered: in a worker thread of its own (MAIL_WORKER=thread, the default), or on
 * this event loop. An in-memory SQLite database exists only on this connection, a PostgreSQL pool of one
 * connection cannot be split, and the thread needs the compiled JavaScript (MAIL_THREAD_AVAILABLE): there
 * mail is delivered inline. On PostgreSQL the thread's own pool is
 * taken out of DATABASE_POOL_MAX (a third, 1 to MAIL_THREAD_POOL_MAX).
 */
function mailPlacement(config: Config): { thread: boolean; connections: number } {
  const target = parseDatabaseUrl(config.databaseUrl);
  if (config.mailWorker === 'inline' || target.location === ':memory:' || !MAIL_THREAD_AVAILABLE) return { thread: false, connections: 0 };
  if (target.dialect === 'sqlite') return { thread: true, connections: 0 };
  if (config.databasePoolMax < 2) return { thread: false, connections: 0 };
  return { thread: true, connections: Math.max(1, Math.min(MAIL_THREAD_POOL_MAX, Math.floor(config.databasePoolMax / 3))) };
}

function startMailer(config: Config, mail: { thread: boolean; connections: number }, db: Db, log: OutboxLog): Pick<OutboxWorker, 'stop'> {
  const worker = {
    smtpUrl: config.smtpUrl,
    from: config.mailFrom,
    giveUpAfterMs: config.mailGiveUpAfterHours * 3_600_000,
    concurrency: config.mailConcurrency,
    publicUrl: config.publicUrl,
  };
  if (!mail.thread) return startOutboxWorker({ ...worker, db, log });
  const options: MailThreadOptions = {
    databaseUrl: config.databaseUrl,
    connect: {
      poolMax: mail.connections,
      connectTimeoutMs: config.databaseConnectTimeoutMs,
      statementTimeoutMs: config.databaseStatementTimeoutMs,
      busyTimeoutMs: config.sqliteBusyTimeoutMs,
      preparedStatements: config.databasePreparedStatements,
    },
    worker,
  };
  return startMailThread(options, log);
}

/**
 * Migrations on a connection of their own, without the serving bounds: rebuilding an index on a large
 * table may take longer than a request's statement bound, and no client waits for it. (An in-memory
 * SQLite database exists only on its one connection: migrated there.)
 */
async function migrateUnbounded(config: Config, db: Db): Promise<void> {
  if (parseDatabaseUrl(config.databaseUrl).location === ':memory:') return migrate(db);
  const migrator = connect(config.databaseUrl, {
    poolMax: 1,
    connectTimeoutMs: config.databaseConnectTimeoutMs,
    preparedStatements: config.databasePreparedStatements,
    ...UNBOUNDED_WORK,
  });
  try {
    await migrate(migrator);
  } finally {
    await migrator.close();
  }
}

/**
 * Stops accepting, lets requests in flight finish (answered with Connection: close, build-app.ts), closes
 * each kept-alive connection as soon as it is idle, and after DRAIN_TIMEOUT_MS closes whatever is left.
 */
async function drain(app: FastifyInstance): Promise<void> {
  const closed = app.close();
  // Fastify closes the connections idle at the moment close() starts; these go idle later
  const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), DRAIN_TIMEOUT_MS)));
  try {
    if ((await Promise.race([closed, late])) === 'late') {
      app.log.warn({ afterMs: DRAIN_TIMEOUT_MS }, 'requests still in flight at shutdown: closing their connections');
      app.server.closeAllConnections();
      await closed;
    }
  } finally {
    clearInterval(sweep);
    clearTimeout(timer);
  }
}

/** Runs until SIGTERM or SIGINT, then shuts down and exits 0 (1 if that takes too long or fails). */
export async function serveForever(config: Config): Promise<void> {
  const server = await startServer(config);
  const shutdown = (signal: string) => {
    server.app.log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      server.app.log.error('shutdown timed out');
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS);
    timer.unref();
    server.stop().then(
      () => process.exit(0),
      (error) => {
        server.app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}
