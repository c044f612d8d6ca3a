// Configuration from the environment, parsed once, typed and frozen (decisions §6).
import { isEmailAddress } from './core/forms/form-fields.js';

export interface Config {
  readonly databaseUrl: string;
  readonly host: string;
  readonly port: number;
  readonly redisUrl: string | null;
  /** prepended to every Redis key, so several installations can share one Redis */
  readonly redisPrefix: string;
  readonly smtpUrl: string | null;
  /** From address of notification e-mails; null: the installation's notification address */
  readonly mailFrom: string | null;
  /** a message still failing this long after it was queued is given up ('failed') */
  readonly mailGiveUpAfterHours: number;
  /** PostgreSQL connections per process */
  readonly databasePoolMax: number;
  /** PostgreSQL: bound on opening (or waiting for) a connection, ms */
  readonly databaseConnectTimeoutMs: number;
  /** PostgreSQL: statement_timeout, and the client's bound on an answer (+500 ms), ms; 0: none */
  readonly databaseStatementTimeoutMs: number;
  /** SQLite: busy_timeout, how long a write waits for another connection's lock, ms */
  readonly sqliteBusyTimeoutMs: number;
  readonly logLevel: string;
  /** TRUST_PROXY=1: behind a reverse proxy, client address and protocol come from X-Forwarded-For/-Proto */
  readonly trustProxy: boolean;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(text)}`);
  return value;
}

function mailFrom(text: string | undefined): string | null {
  if (text === undefined || text.trim() === '') return null;
  if (!isEmailAddress(text.trim())) throw new Error(`MAIL_FROM must be a plain e-mail address, got ${JSON.stringify(text)}`);
  return text.trim();
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return Object.freeze({
    databaseUrl: env.DATABASE_URL || 'sqlite:data/booking.db',
    host: env.HOST || '127.0.0.1',
    port: integer(env, 'PORT', 3000, 0, 65535),
    redisUrl: env.REDIS_URL || null,
    redisPrefix: env.REDIS_PREFIX ?? 'booking:',
    smtpUrl: env.SMTP_URL || null,
    mailFrom: mailFrom(env.MAIL_FROM),
    mailGiveUpAfterHours: integer(env, 'MAIL_GIVE_UP_AFTER_HOURS', 72, 1, 24 * 366),
    databasePoolMax: integer(env, 'DATABASE_POOL_MAX', 10, 1, 1000),
    // defaults: DATABASE_BOUNDS in db/connect.ts (config may not import the database layer, so repeated here)
    databaseConnectTimeoutMs: integer(env, 'DATABASE_CONNECT_TIMEOUT_MS', 2000, 100, 600_000),
    databaseStatementTimeoutMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 3000, 0, 86_400_000),
    sqliteBusyTimeoutMs: integer(env, 'SQLITE_BUSY_TIMEOUT_MS', 2000, 0, 600_000),
    logLevel: env.LOG_LEVEL || 'info',
    trustProxy: env.TRUST_PROXY === '1',
  });
}
