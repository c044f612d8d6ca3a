// The one database seam: a Kysely instance over SQLite (better-sqlite3, the embedded default) or
// PostgreSQL (pg), chosen by DATABASE_URL, plus the few things the two engines do differently.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect, sql, type SqliteDatabase } from 'kysely';
import type { Database } from './schema.js';
import { postgresHotReads, sqliteHotReads, type HotReads } from './hot-reads.js';
import { mappingUnavailable } from './unavailable.js';

export type DialectName = 'sqlite' | 'postgres';

export interface DatabaseTarget {
  dialect: DialectName;
  /** file path (or ':memory:') for SQLite, connection string for PostgreSQL */
  location: string;
}

export function parseDatabaseUrl(url: string): DatabaseTarget {
  if (/^postgres(ql)?:\/\//.test(url)) return { dialect: 'postgres', location: url };
  const m = /^sqlite:(?:\/\/)?(.+)$/.exec(url);
  if (m) return { dialect: 'sqlite', location: m[1]! };
  throw new Error(`DATABASE_URL must be sqlite:<path> or postgres://…, got ${JSON.stringify(url.replace(/\/\/[^@/]*@/, '//***@'))}`);
}

export interface Db {
  readonly kysely: Kysely<Database>;
  readonly dialect: DialectName;
  /** the per-request reads, prepared outside Kysely (hot-reads.ts); outside transactions only */
  readonly hot: HotReads;
  /**
   * Runs `work` in a transaction that may write. On SQLite it is BEGIN IMMEDIATE: the write lock is
   * taken before the first read, so a check-then-insert cannot interleave with another process.
   */
  write<T>(work: (trx: Kysely<Database>) => Promise<T>): Promise<T>;
  /** Within `write`: serialises bookings of one schedule (PostgreSQL row lock; SQLite already holds the write lock). */
  lockSchedule(trx: Kysely<Database>, scheduleId: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** PostgreSQL pool size for this process */
  poolMax?: number;
  /** PostgreSQL: bound on opening a connection and on waiting for a free one in the pool (DATABASE_CONNECT_TIMEOUT_MS) */
  connectTimeoutMs?: number;
  /**
   * PostgreSQL: the server's statement_timeout, and (plus half a second, so a live server's own cancel
   * wins) the client's bound on waiting for an answer at all, which is what ends a query on a frozen
   * server (DATABASE_STATEMENT_TIMEOUT_MS); 0: no bound
   */
  statementTimeoutMs?: number;
  /** SQLite: how long a write waits for another connection's write lock before SQLITE_BUSY (SQLITE_BUSY_TIMEOUT_MS) */
  busyTimeoutMs?: number;
}

/** The defaults of the bounds above; config.ts reads the environment's overrides (docs/operations.md, "Faults"). */
export const DATABASE_BOUNDS = { connectTimeoutMs: 2_000, statementTimeoutMs: 3_000, busyTimeoutMs: 2_000 } as const;

// PostgreSQL returns bigint (int8) and count() as strings; every such value here fits a double.
pg.types.setTypeParser(20, (v) => Number(v));

export function connect(url: string, options: ConnectOptions = {}): Db {
  const target = parseDatabaseUrl(url);
  return target.dialect === 'sqlite' ? connectSqlite(target.location, options) : connectPostgres(target.location, options);
}

/** Resolves when the database answers a trivial query. */
export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db.kysely);
}

function connectSqlite(location: string, { busyTimeoutMs = DATABASE_BOUNDS.busyTimeoutMs }: ConnectOptions): Db {
  if (location !== ':memory:') mkdirSync(dirname(resolve(location)), { recursive: true });
  const database = new SQLite(location);
  database.pragma('journal_mode = WAL');
  // better-sqlite3 waits for a lock synchronously (the whole process waits), so the bound is short: long
  // enough for any other connection's write transaction (milliseconds; an import a fraction of a second),
  // short enough that a client sees a 503 (or the booking's 500) within about two seconds
  database.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
  database.pragma('foreign_keys = ON');
  database.pragma('synchronous = NORMAL');
  const kysely = new Kysely<Database>({ dialect: mappingUnavailable(new SqliteDialect({ database: withStatementCache(database) })) });
  return {
    kysely,
    dialect: 'sqlite',
    hot: sqliteHotReads(database, kysely),
    write: (work) =>
      kysely.connection().execute(async (conn) => {
        await sql`begin immediate`.execute(conn);
        try {
          const result = await work(conn);
          await sql`commit`.execute(conn);
          return result;
        } catch (error) {
          if (database.inTransaction) await sql`rollback`.execute(conn);
          throw error;
        }
      }),
    lockSchedule: async (trx, scheduleId) =>
      (await trx.selectFrom('schedules').select('id').where('id', '=', scheduleId).executeTakeFirst()) !== undefined,
    close: () => kysely.destroy(),
  };
}

/**
 * Kysely's SQLite driver prepares every query anew; a fast API call spent about a tenth of its time there
 * (profiled /slots). Statements are kept by their SQL text. Safe because Kysely runs one query at a time
 * on this connection and we never stream (a streaming statement cannot be reused while it iterates).
 * One of the hot path's four caches, listed together in app/answer-cache.ts.
 */
function withStatementCache(database: SQLite.Database, max = 500): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => database.close(),
    prepare: (text) => {
      let statement = statements.get(text);
      if (!statement) {
        if (statements.size >= max) statements.clear();
        statement = database.prepare(text);
        statements.set(text, statement);
      }
      return statement;
    },
  };
}

function connectPostgres(
  connectionString: string,
  {
    poolMax = 10,
    connectTimeoutMs = DATABASE_BOUNDS.connectTimeoutMs,
    statementTimeoutMs = DATABASE_BOUNDS.statementTimeoutMs,
  }: ConnectOptions,
): Db {
  const pool = new pg.Pool({
    connectionString,
    max: poolMax,
    idleTimeoutMillis: 30_000,
    // without these a frozen server (SIGSTOP, a hung host) holds every request until TCP gives up
    connectionTimeoutMillis: connectTimeoutMs,
    ...(statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs, query_timeout: statementTimeoutMs + 500 } : {}),
  });
  // an idle client losing its connection must not crash the process; the pool replaces it
  pool.on('error', () => {});
  // nor may a checked-out one (PostgreSQL restarting under load): its query fails on its own, and the
  // pool discards the broken client on release; without a listener the 'error' event kills the process
  pool.on('connect', (client) => client.on('error', () => {}));
  const kysely = new Kysely<Database>({ dialect: mappingUnavailable(new PostgresDialect({ pool })) });
  return {
    kysely,
    dialect: 'postgres',
    hot: postgresHotReads(pool),
    write: (work) => kysely.transaction().execute(work),
    lockSchedule: async (trx, scheduleId) =>
      (await trx.selectFrom('schedules').select('id').where('id', '=', scheduleId).forUpdate().executeTakeFirst()) !== undefined,
    close: () => kysely.destroy(),
  };
}
