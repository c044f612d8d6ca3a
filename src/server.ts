// Composition root of `booking serve`: config -> database -> migrations -> app -> listen,
// and a graceful shutdown on SIGTERM/SIGINT.
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from './config.js';
import { connect, type Db } from './db/connect.js';
import { migrate } from './db/migrate.js';
import { buildApp, REDACTED_PATHS } from './http/build-app.js';
import { RedisRateLimitStore } from './rate-limit/redis-store.js';
import { startOutboxWorker } from './app/outbox-delivery.js';

export interface RunningServer {
  app: FastifyInstance;
  db: Db;
  url: string;
  stop(): Promise<void>;
}

export const SHUTDOWN_TIMEOUT_MS = 10_000;

export async function startServer(config: Config = loadConfig()): Promise<RunningServer> {
  const db = connect(config.databaseUrl, { poolMax: config.databasePoolMax });
  await migrate(db);
  // with several instances the rate-limit count lives in Redis; without REDIS_URL it is in-process
  const rateLimits = config.redisUrl ? new RedisRateLimitStore({ url: config.redisUrl, prefix: config.redisPrefix }) : undefined;
  const app = await buildApp({
    db,
    rateLimits,
    logger: { level: config.logLevel, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
    trustProxy: config.trustProxy,
    smtpUrl: config.smtpUrl,
    mailFrom: config.mailFrom,
  });
  if (rateLimits) {
    rateLimits.attachLogger(app.log);
    // bounded: an unreachable Redis must not keep the API from starting (it fails open)
    await rateLimits.ready();
  }
  const url = await app.listen({ host: config.host, port: config.port });
  // SMTP_URL, else the server saved in the admin area; with neither the messages wait in the outbox
  const mailer = startOutboxWorker({
    db,
    smtpUrl: config.smtpUrl,
    from: config.mailFrom,
    giveUpAfterMs: config.mailGiveUpAfterHours * 3_600_000,
    concurrency: config.mailConcurrency,
    log: app.log.child({ component: 'outbox' }),
  });
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      await app.close(); // stops accepting, lets requests in flight finish
      // a send in flight gets a moment to finish (and be recorded as sent); one that takes longer (a stalled
      // SMTP server) is aborted and its message released, so shutdown stays well within SHUTDOWN_TIMEOUT_MS
      await mailer.stop();
      await rateLimits?.close();
      await db.close();
    })());
  return { app, db, url, stop };
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
