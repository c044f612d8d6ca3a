// The reads every API request makes (the config version) and every availability request makes (a
// schedule's bookings version and booked spans), as fixed SQL outside Kysely (on SQLite prepared once).
// Why: building and running one query through Kysely costs about 20 µs under load, as much as Fastify's
// whole request handling (a bare Fastify route served 50k req/s; with one Kysely read in a hook 25k, with
// the same read prepared directly 43k, on the benchmark machine). Writes and everything else stay on Kysely.
// Use-cases reach them as `db.hot`; the caches of the hot path are listed together in app/answer-cache.ts.
import type SQLite from 'better-sqlite3';
import type pg from 'pg';
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { BookedTime } from '../core/availability/free-slots.js';
import { configVersion } from './repos/installation.repository.js';
import { bookedTimes, bookingsVersion, findBookingsVersion } from './repos/booking.repository.js';
import { rethrow } from './unavailable.js';

/** The versions a request checks its cached answers against, read in one statement. */
export interface Versions {
  /** `meta.config_version`: bumped by every change the API reads */
  readonly config: number;
  /** the schedule asked about, if any */
  readonly scheduleId: number | null;
  /** its bookings version; null when no schedule was asked about or it does not exist */
  readonly bookings: number | null;
}

export interface HotReads {
  /** the config version and, when `scheduleId` is given, that schedule's bookings version: one read, not two */
  versions(scheduleId: number | null): Promise<Versions>;
  /** the schedule's bookings version (0 when there is no such schedule) */
  bookingsVersion(scheduleId: number): Promise<number>;
  /** booked (not cancelled) spans of a schedule starting in [from, to) */
  bookedTimes(scheduleId: number, from: number, to: number): Promise<BookedTime[]>;
}

const SQL = {
  versions: 'select config_version, (select bookings_version from schedules where id = $1) as bookings_version from meta where id = 1',
  bookingsVersion: 'select bookings_version from schedules where id = $1',
  // served from the index bookings_schedule_span alone
  bookedTimes: "select start_at, end_at from bookings where schedule_id = $1 and start_at >= $2 and start_at < $3 and status = 'booked'",
} as const;

const MISSING_META = 'the meta row is missing: the database is not migrated';

const versionsOf = (config: unknown, scheduleId: number | null, bookings: unknown): Versions => ({
  config: Number(config),
  scheduleId,
  bookings: bookings === null || bookings === undefined ? null : Number(bookings),
});

async function versionsThroughKysely(kysely: Kysely<Database>, scheduleId: number | null): Promise<Versions> {
  const config = await configVersion(kysely);
  return versionsOf(config, scheduleId, scheduleId === null ? null : await findBookingsVersion(kysely, scheduleId));
}

const spansOf = (rows: unknown[][]): BookedTime[] => rows.map(([start, end]) => ({ start: Number(start), end: Number(end) }));

/**
 * SQLite: statements on the process's one connection, run synchronously, so they see exactly what is
 * committed, except while this process has a write transaction open between two of its statements:
 * then they would see its uncommitted rows (and cache an answer it may roll back). In that case the read
 * goes through Kysely, which queues it behind the transaction.
 */
export function sqliteHotReads(database: SQLite.Database, kysely: Kysely<Database>): HotReads {
  // prepared on first use: the connection is opened before migrations create the tables
  const prepared = new Map<keyof typeof SQL, SQLite.Statement>();
  const statement = (name: keyof typeof SQL, mode: 'pluck' | 'raw') => {
    let st = prepared.get(name);
    if (!st) prepared.set(name, (st = database.prepare(SQL[name].replace(/\$\d/g, '?'))[mode]()));
    return st;
  };
  // SQLITE_BUSY (a lock held past busy_timeout) as DatabaseUnavailable, like every query through Kysely
  const run = <T>(read: () => T): T => {
    try {
      return read();
    } catch (error) {
      return rethrow(error);
    }
  };
  return {
    versions: async (scheduleId) => {
      if (database.inTransaction) return versionsThroughKysely(kysely, scheduleId);
      const row = run(() => statement('versions', 'raw').get(scheduleId) as [number, number | null] | undefined);
      if (!row) throw new Error(MISSING_META);
      return versionsOf(row[0], scheduleId, row[1]);
    },
    bookingsVersion: async (scheduleId) =>
      database.inTransaction
        ? bookingsVersion(kysely, scheduleId)
        : Number(run(() => statement('bookingsVersion', 'pluck').get(scheduleId)) ?? 0),
    bookedTimes: async (scheduleId, from, to) =>
      database.inTransaction
        ? bookedTimes(kysely, scheduleId, from, to)
        : spansOf(run(() => statement('bookedTimes', 'raw').all(scheduleId, from, to) as unknown[][])),
  };
}

/**
 * PostgreSQL: plain parameterised queries. Not named prepared statements: those are session state, which
 * breaks behind PgBouncer in transaction mode (docs/operations.md). int8 arrives as a number (connect.ts).
 */
export function postgresHotReads(pool: pg.Pool): HotReads {
  interface VersionsRow {
    config_version?: unknown;
    bookings_version: unknown;
  }
  // connection and timeout errors as DatabaseUnavailable, like every query through Kysely
  const rows = async (name: keyof typeof SQL, values: unknown[]) =>
    (await pool.query<VersionsRow>({ text: SQL[name], values }).catch(rethrow)).rows;
  const arrays = async (name: keyof typeof SQL, values: unknown[]) =>
    (await pool.query<unknown[]>({ text: SQL[name], values, rowMode: 'array' }).catch(rethrow)).rows;
  return {
    versions: async (scheduleId) => {
      const [row] = await rows('versions', [scheduleId]);
      if (!row) throw new Error(MISSING_META);
      return versionsOf(row.config_version, scheduleId, row.bookings_version);
    },
    bookingsVersion: async (scheduleId) => Number((await rows('bookingsVersion', [scheduleId]))[0]?.bookings_version ?? 0),
    bookedTimes: async (scheduleId, from, to) => spansOf(await arrays('bookedTimes', [scheduleId, from, to])),
  };
}
