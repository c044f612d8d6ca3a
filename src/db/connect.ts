// The one database seam: a Kysely instance over SQLite (better-sqlite3, the embedded default) or
// PostgreSQL (pg), chosen by DATABASE_URL, plus the few things the two engines do differently.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect, sql, type SqliteDatabase } from 'kysely';
import type { Database } from './schema.js';
import { postgresHotReads, sqliteHotReads, type HotReads } from './hot-reads.js';
import { prepareMarkedStatements } from './prepared.js';
import { mappingUnavailable } from './unavailable.js';
import { DatabaseUnavailable } from '../core/errors.js';

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
  /** PostgreSQL connections of this process at most (of them, hotReadConnections for the per-request reads) */
  poolMax?: number;
  /** PostgreSQL: bound on opening a connection and on waiting for a free one in the pool (DATABASE_CONNECT_TIMEOUT_MS) */
  connectTimeoutMs?: number;
  /**
   * PostgreSQL: the server's statement_timeout, and (plus half a second, so a live server's own cancel
   * wins) the client's bound on waiting for an answer at all, which is what ends a query on a frozen
   * server (DATABASE_STATEMENT_TIMEOUT_MS); 0: no bound
   */
  statementTimeoutMs?: number;
  /**
   * PostgreSQL: run the per-request reads (hot-reads.ts) and a booking's statements marked PREPARED
   * (prepared.ts) as named prepared statements, planned once per connection (DATABASE_PREPARED_STATEMENTS);
   * default true. Session state: a PgBouncer in transaction mode must track them (1.21 or newer,
   * max_prepared_statements > 0), or this must be off
   */
  preparedStatements?: boolean;
  /** SQLite: how long a write waits for another connection's write lock before SQLITE_BUSY (SQLITE_BUSY_TIMEOUT_MS) */
  busyTimeoutMs?: number;
  /**
   * SQLite: wait for a lock synchronously for all of busyTimeoutMs, as the driver does by itself. For work
   * no client waits for (migrations, the CLI), where stalling the process costs nothing and every statement,
   * not only a write transaction's BEGIN, should ride out another process's lock. Default false (serving).
   */
  blockingBusyWait?: boolean;
}

/** The defaults of the bounds above; config.ts reads the environment's overrides (docs/operations.md, "Faults"). */
export const DATABASE_BOUNDS = { connectTimeoutMs: 2_000, statementTimeoutMs: 3_000, busyTimeoutMs: 2_000 } as const;
/** For work no client waits for (migrations, the CLI): no statement bound, SQLite's former 10 s busy wait. */
export const UNBOUNDED_WORK = { statementTimeoutMs: 0, busyTimeoutMs: 10_000, blockingBusyWait: true } as const;

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

function connectSqlite(location: string, { busyTimeoutMs = DATABASE_BOUNDS.busyTimeoutMs, blockingBusyWait = false }: ConnectOptions): Db {
  if (location !== ':memory:') mkdirSync(dirname(resolve(location)), { recursive: true });
  const database = new SQLite(location);
  database.pragma('journal_mode = WAL');
  // better-sqlite3 waits for a lock synchronously: the whole process, every request, waits with it. So the
  // driver waits only a moment per try (a statement outside a transaction, e.g. a sign-in counter, still
  // rides out another process's commit), and a write transaction that meets another process's write lock
  // retries its BEGIN IMMEDIATE asynchronously (write, LOCKED) up to the bound, the event loop and the
  // connection free between tries: long enough for any other connection's write (milliseconds; an import a fraction of a second),
  // short enough that a client sees a 503 (or the booking's 500) within about two seconds
  database.pragma(`busy_timeout = ${Math.trunc(blockingBusyWait ? busyTimeoutMs : Math.min(SYNC_BUSY_WAIT_MS, busyTimeoutMs))}`);
  database.pragma('foreign_keys = ON');
  database.pragma('synchronous = NORMAL');
  const kysely = new Kysely<Database>({ dialect: mappingUnavailable(new SqliteDialect({ database: withStatementCache(database) })) });
  return {
    kysely,
    dialect: 'sqlite',
    hot: sqliteHotReads(database, kysely),
    write: async (work) => {
      const deadline = Date.now() + busyTimeoutMs;
      for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
        const outcome = await kysely.connection().execute(async (conn) => {
          // waited for the connection itself past the bound (other writes' tries went first): done waiting
          if (Date.now() >= deadline) throw new DatabaseUnavailable('database unavailable: the write lock is held by another process');
          try {
            await sql`begin immediate`.execute(conn);
          } catch (error) {
            // another process holds the write lock: give the connection back and try again later
            if (error instanceof DatabaseUnavailable && Date.now() + pause < deadline) return LOCKED;
            throw error;
          }
          try {
            const result = await work(conn);
            await sql`commit`.execute(conn);
            return { result };
          } catch (error) {
            if (database.inTransaction) await sql`rollback`.execute(conn);
            throw error;
          }
        });
        if (outcome !== LOCKED) return outcome.result;
        await delay(pause);
      }
    },
    lockSchedule: async (trx, scheduleId) =>
      (await trx.selectFrom('schedules').select('id').where('id', '=', scheduleId).executeTakeFirst()) !== undefined,
    close: () => kysely.destroy(),
  };
}

/** How long better-sqlite3 may block the process on a lock in one try (see connectSqlite). */
const SYNC_BUSY_WAIT_MS = 5;

/**
 * A write transaction's BEGIN IMMEDIATE (the write lock, taken before the first read) that met another
 * process's lock: each try blocks at most SYNC_BUSY_WAIT_MS, and between tries the process's one connection
 * is given back, so other requests (and other writes' tries) go on; past the bound the busy error goes up
 * (as DatabaseUnavailable: the lock counts as the database not answering).
 */
const LOCKED = Symbol('another process holds the write lock');

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

/** Of a process's PostgreSQL connections, those kept for the per-request reads (db.hot): a third, 1 to 3; none of 1. */
export const hotReadConnections = (poolMax: number) => (poolMax < 2 ? 0 : Math.max(1, Math.min(3, Math.floor(poolMax / 3))));

function connectPostgres(
  connectionString: string,
  {
    poolMax = 10,
    connectTimeoutMs = DATABASE_BOUNDS.connectTimeoutMs,
    statementTimeoutMs = DATABASE_BOUNDS.statementTimeoutMs,
    preparedStatements = true,
  }: ConnectOptions,
): Db {
  const newPool = (max: number) => {
    const pool = new pg.Pool({
      connectionString,
      max,
      idleTimeoutMillis: 30_000,
      // without these a frozen server (SIGSTOP, a hung host) holds every request until TCP gives up
      connectionTimeoutMillis: connectTimeoutMs,
      ...(statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs, query_timeout: statementTimeoutMs + 500 } : {}),
    });
    // an idle client losing its connection must not crash the process; the pool replaces it
    pool.on('error', () => {});
    // nor may a checked-out one (PostgreSQL restarting under load): its query fails on its own, and the
    // pool discards the broken client on release; without a listener the 'error' event kills the process
    pool.on('connect', (client) => {
      client.on('error', () => {});
      if (preparedStatements) prepareMarkedStatements(client);
    });
    return pool;
  };
  // The per-request reads have connections of their own, out of the poolMax: bookings of one schedule wait
  // for each other on its row lock while holding a connection, and when they held them all, every read
  // queued behind them (issue 13: /days fell to a few per second while 100 bookings/s landed)
  const hotConnections = hotReadConnections(poolMax);
  const pool = newPool(poolMax - hotConnections);
  const hotPool = hotConnections > 0 ? newPool(hotConnections) : pool;
  const kysely = new Kysely<Database>({ dialect: mappingUnavailable(new PostgresDialect({ pool })) });
  return {
    kysely,
    dialect: 'postgres',
    hot: postgresHotReads(hotPool, preparedStatements),
    write: (work) => kysely.transaction().execute(work),
    lockSchedule: async (trx, scheduleId) =>
      (await trx.selectFrom('schedules').select('id').where('id', '=', scheduleId).forUpdate().executeTakeFirst()) !== undefined,
    close: async () => {
      await Promise.all([kysely.destroy(), hotPool === pool ? undefined : hotPool.end()]);
    },
  };
}
