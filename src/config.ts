// Configuration from the environment, parsed once, typed and frozen (docs/decisions.md §6).
import { isIP } from 'node:net';
import { isEmailAddress } from './core/forms/form-fields.js';
import { InvalidInput } from './core/errors.js';
import { parseSmtpUrl } from './core/settings.js';

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
  /** MAIL_CONCURRENCY: messages each process sends at once, over as many reused SMTP connections */
  readonly mailConcurrency: number;
  /**
   * MAIL_WORKER: where `serve` runs the outbox delivery. 'thread' (default): a worker thread with its own
   * database connection(s), so mail has a core of its own; 'inline': on the main event loop, beside the API.
   */
  readonly mailWorker: 'thread' | 'inline';
  /** WEBHOOK_TIMEOUT_SECONDS: how long one webhook attempt waits for the receiver's answer */
  readonly webhookTimeoutSeconds: number;
  /** WEBHOOK_GIVE_UP_AFTER_HOURS: a delivery still failing this long after it was queued is given up (at least 24) */
  readonly webhookGiveUpAfterHours: number;
  /** PostgreSQL connections per process */
  readonly databasePoolMax: number;
  /** PostgreSQL: bound on opening (or waiting for) a connection, ms */
  readonly databaseConnectTimeoutMs: number;
  /** PostgreSQL: statement_timeout, and the client's bound on an answer (+500 ms), ms; 0: none */
  readonly databaseStatementTimeoutMs: number;
  /**
   * DATABASE_PREPARED_STATEMENTS: PostgreSQL, the per-request reads and a booking's marked statements
   * (db/prepared.ts) as named prepared statements (planned once per connection; about half the server's work
   * per read). Off for a PgBouncer in transaction mode older than 1.21 or without max_prepared_statements
   * (docs/operations.md)
   */
  readonly databasePreparedStatements: boolean;
  /** SQLite: busy_timeout, how long a write waits for another connection's lock, ms */
  readonly sqliteBusyTimeoutMs: number;
  readonly logLevel: string;
  /**
   * TRUST_PROXY: which reverse proxies may name the client (X-Forwarded-For) and protocol (X-Forwarded-Proto).
   * false: none (unset); a number: that many hops in front (1: the one nginx); a list: the proxies' addresses
   * or CIDR ranges. Never "every hop": that would let a client write its own address (docs/security.md).
   */
  readonly trustProxy: TrustProxy;
  /**
   * PUBLIC_URL: the address customers reach this installation at (https://booking.example.com), for the
   * manage link in their mail (docs/manage-link.md); null: mails carry no link.
   */
  readonly publicUrl: string | null;
}

export type TrustProxy = false | number | readonly string[];

/** An IPv4/IPv6 address, optionally with a /prefix. */
function isAddressOrRange(text: string): boolean {
  const [address = '', prefix, extra] = text.split('/');
  const version = isIP(address);
  if (version === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  return /^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128);
}

/**
 * '' / unset / 0: trust no proxy. 1-32: that many hops. A comma-separated list of addresses or CIDR ranges:
 * those proxies. Anything else (such as "yes") trusts none, as before hop counts existed.
 */
export function trustProxy(text: string | undefined): TrustProxy {
  const value = (text ?? '').trim();
  if (value === '' || value === '0') return false;
  if (/^[0-9]{1,2}$/.test(value)) return Number(value) <= 32 ? Number(value) : false;
  const list = value.split(',').map((s) => s.trim());
  if (list.every(isAddressOrRange)) return Object.freeze(list);
  return false;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(text)}`);
  return value;
}

function mailWorker(text: string | undefined): 'thread' | 'inline' {
  const value = (text ?? '').trim() || 'thread';
  if (value !== 'thread' && value !== 'inline') throw new Error(`MAIL_WORKER must be thread or inline, got ${JSON.stringify(text)}`);
  return value;
}

function onOff(name: string, text: string | undefined, fallback: boolean): boolean {
  const value = (text ?? '').trim();
  if (value === '') return fallback;
  if (value !== 'on' && value !== 'off') throw new Error(`${name} must be on or off, got ${JSON.stringify(text)}`);
  return value === 'on';
}

function mailFrom(text: string | undefined): string | null {
  if (text === undefined || text.trim() === '') return null;
  if (!isEmailAddress(text.trim())) throw new Error(`MAIL_FROM must be a plain e-mail address, got ${JSON.stringify(text)}`);
  return text.trim();
}

/** SMTP_URL is checked as the admin area checks a saved URL: smtp:// or smtps://, only the documented options. */
function smtpUrl(text: string | undefined): string | null {
  if (!text) return null;
  try {
    return parseSmtpUrl(text) || null;
  } catch (error) {
    if (error instanceof InvalidInput) throw new Error(`SMTP_URL: ${error.reason}`, { cause: error });
    throw error;
  }
}

/** An http(s) origin, optionally with a path prefix; no query or fragment. Kept without a trailing slash. */
export function publicUrl(text: string | undefined): string | null {
  const value = (text ?? '').trim();
  if (value === '') return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`PUBLIC_URL must be an http:// or https:// address, got ${JSON.stringify(text)}`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.search !== '' || url.hash !== '' || url.username || url.password)
    throw new Error(`PUBLIC_URL must be an http:// or https:// address without query, fragment or user, got ${JSON.stringify(text)}`);
  return url.href.replace(/\/+$/, '');
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return Object.freeze({
    databaseUrl: env.DATABASE_URL || 'sqlite:data/booking.db',
    host: env.HOST || '127.0.0.1',
    port: integer(env, 'PORT', 3000, 0, 65535),
    redisUrl: env.REDIS_URL || null,
    redisPrefix: env.REDIS_PREFIX ?? 'booking:',
    smtpUrl: smtpUrl(env.SMTP_URL),
    mailFrom: mailFrom(env.MAIL_FROM),
    mailGiveUpAfterHours: integer(env, 'MAIL_GIVE_UP_AFTER_HOURS', 72, 1, 24 * 366),
    mailConcurrency: integer(env, 'MAIL_CONCURRENCY', 4, 1, 64),
    mailWorker: mailWorker(env.MAIL_WORKER),
    webhookTimeoutSeconds: integer(env, 'WEBHOOK_TIMEOUT_SECONDS', 10, 1, 60),
    webhookGiveUpAfterHours: integer(env, 'WEBHOOK_GIVE_UP_AFTER_HOURS', 24, 24, 24 * 366),
    databasePoolMax: integer(env, 'DATABASE_POOL_MAX', 10, 1, 1000),
    // defaults: DATABASE_BOUNDS in db/connect.ts (config may not import the database layer, so repeated here)
    databaseConnectTimeoutMs: integer(env, 'DATABASE_CONNECT_TIMEOUT_MS', 2000, 100, 600_000),
    databaseStatementTimeoutMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 3000, 0, 86_400_000),
    databasePreparedStatements: onOff('DATABASE_PREPARED_STATEMENTS', env.DATABASE_PREPARED_STATEMENTS, true),
    sqliteBusyTimeoutMs: integer(env, 'SQLITE_BUSY_TIMEOUT_MS', 2000, 0, 600_000),
    logLevel: env.LOG_LEVEL || 'info',
    trustProxy: trustProxy(env.TRUST_PROXY),
    publicUrl: publicUrl(env.PUBLIC_URL),
  });
}
