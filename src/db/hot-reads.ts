// The reads every API request makes (the config version) and every availability request makes (a
// schedule's bookings version and booked spans), as fixed SQL outside Kysely (on SQLite prepared once).
// Why: building and running one query through Kysely costs about 20 µs under load, as much as Fastify's
// whole request handling (a bare Fastify route served 50k req/s; with one Kysely read in a hook 25k, with
// the same read prepared directly 43k, on the benchmark machine). Writes and everything else stay on Kysely.
// Use-cases reach them as `db.hot`; the caches of the hot path are listed together in app/answer-cache.ts.
import type SQLite from 'better-sqlite3';
import type pg from 'pg';
import { CompiledQuery, type Kysely } from 'kysely';
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

/** How far from a changed booking the bookings around it are wanted (before its start, after its end), in ms. */
export interface ChangeReach {
  readonly before: number;
  readonly after: number;
}

export interface HotReads {
  /** The config version and, when `scheduleId` is given, that schedule's bookings version: one read, not two. */
  versions(scheduleId: number | null): Promise<Versions>;
  /** the schedule's bookings version (0 when there is no such schedule) */
  bookingsVersion(scheduleId: number): Promise<number>;
  /** booked (not cancelled) spans of a schedule starting in [from, to) */
  bookedTimes(scheduleId: number, from: number, to: number): Promise<BookedTime[]>;
  /**
   * The schedule's bookings booked or cancelled after bookings version `since`, and the booked ones starting
   * in [start - before, end + after) of any of them, in one statement; null when more than MAX_CHANGES
   * changed. While it runs, the requests for the answer it updates (at its version) wait for it.
   */
  changesAround(scheduleId: number, since: number, before: number, after: number): Promise<BookingChanges | null>;
}

/**
 * More changes than this since an answer's version, and the answer is computed whole instead (null from
 * changesAround): that reads one range of the schedule's bookings, where the changes would bring a few
 * days of bookings around each of them.
 */
export const MAX_CHANGES = 200;

/** What changed in a schedule's bookings after a version, and the bookings around it. */
export interface BookingChanges {
  /** spans of the bookings booked or cancelled after the version (either way, the days they touch may have changed) */
  readonly changed: BookedTime[];
  /** the booked (not cancelled) bookings around any of them */
  readonly around: BookedTime[];
}

const SQL = {
  versions: 'select config_version, (select bookings_version from schedules where id = $1) as bookings_version from meta where id = 1',
  bookingsVersion: 'select bookings_version from schedules where id = $1',
  // served from the index bookings_schedule_span alone
  bookedTimes: "select start_at, end_at from bookings where schedule_id = $1 and start_at >= $2 and start_at < $3 and status = 'booked'",
} as const;

/**
 * SQLite: the changes from the index bookings_schedule_changes, the bookings around each by a range of
 * bookings_schedule_span (distinct with the id, so a booking near two changes comes once), none when there
 * are more than MAX_CHANGES (the answer is then computed whole). A booking row is never deleted while its
 * schedule lives (a cancellation keeps it; deleting a schedule or a reason bumps the config version, and
 * then no answer is updated).
 */
const SQLITE_CHANGES_AROUND = `with changed as (select start_at, end_at from bookings where schedule_id = $1 and changed_in > $2
  order by changed_in limit ${MAX_CHANGES + 1})
select 1 as changed, start_at, end_at, 0 as id from changed
union all
select distinct 0, b.start_at, b.end_at, b.id from changed c join bookings b
on b.schedule_id = $3 and b.status = 'booked' and b.start_at >= c.start_at - $4 and b.start_at < c.end_at + $5
where (select count(*) from changed) <= ${MAX_CHANGES}`;
const SQLITE_SQL = { ...SQL, changesAround: SQLITE_CHANGES_AROUND };

/**
 * PostgreSQL plans a prepared statement once for any parameters (a generic plan), guessing that a third of
 * the bookings changed after `since` and taking every booking in a range: it scanned all of a schedule's
 * bookings by hash join for each read of changes (2.6 ms against 0.44 for 10,000 bookings, more
 * once ANALYZE had run; issue 13). Each part is therefore a LATERAL subquery that cannot be merged into a
 * join (LIMIT, OFFSET 0), so it runs per outer row by its index: the changes by bookings_schedule_changes
 * in changed_in order (the LIMIT shows when there are more than MAX_CHANGES, and then no bookings around
 * them are read), the bookings around each by a range of bookings_schedule_span.
 */
export const POSTGRES_CHANGES_AROUND = `with changed as (select b.start_at, b.end_at from (select $1::int8 as schedule_id, $2::int8 as since) w
  cross join lateral (select start_at, end_at from bookings b where b.schedule_id = w.schedule_id and b.changed_in > w.since
  order by b.changed_in limit ${MAX_CHANGES + 1}) b)
select 1 as changed, start_at, end_at, 0 as id from changed
union all
select distinct 0, b.start_at, b.end_at, b.id from changed c cross join lateral (select b.start_at, b.end_at, b.id from bookings b
where b.schedule_id = $3 and b.status = 'booked' and b.start_at >= c.start_at - $4 and b.start_at < c.end_at + $5 offset 0) b
where (select count(*) from changed) <= ${MAX_CHANGES}`;

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

/** The changes and the bookings around them; null when there are more than MAX_CHANGES changes. */
function changesOf(rows: readonly (readonly unknown[])[]): BookingChanges | null {
  const changed: BookedTime[] = [];
  const around: BookedTime[] = [];
  for (const [isChange, start, end] of rows) (Number(isChange) === 1 ? changed : around).push({ start: Number(start), end: Number(end) });
  return changed.length > MAX_CHANGES ? null : { changed, around };
}

const changesParameters = (scheduleId: number, since: number, before: number, after: number) => [
  scheduleId,
  since,
  scheduleId,
  before,
  after,
];

/**
 * SQLite: statements on the process's one connection, run synchronously, so they see exactly what is
 * committed, except while this process has a write transaction open between two of its statements:
 * then they would see its uncommitted rows (and cache an answer it may roll back). In that case the read
 * goes through Kysely, which queues it behind the transaction.
 */
export function sqliteHotReads(database: SQLite.Database, kysely: Kysely<Database>): HotReads {
  // prepared on first use: the connection is opened before migrations create the tables
  const prepared = new Map<keyof typeof SQLITE_SQL, SQLite.Statement>();
  const statement = (name: keyof typeof SQLITE_SQL, mode: 'pluck' | 'raw') => {
    let st = prepared.get(name);
    if (!st) prepared.set(name, (st = database.prepare(SQLITE_SQL[name].replace(/\$\d/g, '?'))[mode]()));
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
  const readVersions = (scheduleId: number | null): Versions | Promise<Versions> => {
    if (database.inTransaction) return versionsThroughKysely(kysely, scheduleId);
    const row = run(() => statement('versions', 'raw').get(scheduleId) as [number, number | null] | undefined);
    if (!row) throw new Error(MISSING_META);
    return versionsOf(row[0], scheduleId, row[1]);
  };
  const shared = new TurnSharedVersionReads(readVersions);
  return {
    versions: (scheduleId) => shared.read(scheduleId),
    bookingsVersion: async (scheduleId) =>
      database.inTransaction
        ? bookingsVersion(kysely, scheduleId)
        : Number(run(() => statement('bookingsVersion', 'pluck').get(scheduleId)) ?? 0),
    bookedTimes: async (scheduleId, from, to) =>
      database.inTransaction
        ? bookedTimes(kysely, scheduleId, from, to)
        : spansOf(run(() => statement('bookedTimes', 'raw').all(scheduleId, from, to) as unknown[][])),
    changesAround: async (scheduleId, since, before, after) => {
      const parameters = changesParameters(scheduleId, since, before, after);
      if (!database.inTransaction) return changesOf(run(() => statement('changesAround', 'raw').all(...parameters) as unknown[][]));
      const { rows } = await kysely.executeQuery<{ changed: number; start_at: number; end_at: number }>(
        CompiledQuery.raw(SQLITE_CHANGES_AROUND.replace(/\$\d/g, '?'), parameters),
      );
      return changesOf(rows.map((r) => [r.changed, r.start_at, r.end_at]));
    },
  };
}

/**
 * SQLite: the version reads of the requests that arrive in one turn of the event loop share one statement
 * per schedule asked about, run once that turn's requests have been read (setImmediate: after the poll
 * phase that handed them over). A read is joined only before it runs, so it starts after every request it
 * answers arrived, and each sees every change committed before it arrived: the guarantee of a read of its
 * own, as on PostgreSQL (CoalescedVersionReads). Each read is a SQLite read transaction, whose file-lock
 * system calls made it about a tenth of a cached request's cost (issue 13).
 */
class TurnSharedVersionReads {
  private pending: Map<
    number | null,
    { result: Promise<Versions>; settle(read: Versions | Promise<Versions>): void; fail(error: unknown): void }
  > | null = null;

  constructor(private readonly readVersions: (scheduleId: number | null) => Versions | Promise<Versions>) {}

  read(scheduleId: number | null): Promise<Versions> {
    let pending = this.pending;
    if (pending === null) {
      pending = this.pending = new Map();
      setImmediate(() => this.run());
    }
    let waiting = pending.get(scheduleId);
    if (waiting === undefined) {
      let settle!: (read: Versions | Promise<Versions>) => void;
      let fail!: (error: unknown) => void;
      const result = new Promise<Versions>((resolve, reject) => {
        settle = resolve;
        fail = reject;
      });
      pending.set(scheduleId, (waiting = { result, settle, fail }));
    }
    return waiting.result;
  }

  private run(): void {
    const pending = this.pending!;
    this.pending = null;
    for (const [scheduleId, waiting] of pending) {
      try {
        waiting.settle(this.readVersions(scheduleId));
      } catch (error) {
        waiting.fail(error);
      }
    }
  }
}

/**
 * PostgreSQL: parameterised queries, by default named prepared statements: PostgreSQL parses and plans each
 * once per connection, which halved its work per version read (0.13 -> 0.08 ms a read on one connection,
 * pgbench; issue 13). They are session state: a PgBouncer in transaction mode must track them (1.21 or
 * newer with max_prepared_statements), or `prepared` is false (DATABASE_PREPARED_STATEMENTS=off,
 * docs/operations.md). int8 arrives as a number (connect.ts). The version reads of concurrent requests are
 * coalesced (CoalescedVersionReads).
 */
export function postgresHotReads(pool: pg.Pool, prepared = true): HotReads {
  const query = (name: string, text: string, values: unknown[]): pg.QueryArrayConfig =>
    prepared ? { name: `booking_${name}`, text, values, rowMode: 'array' } : { text, values, rowMode: 'array' };
  // connection and timeout errors as DatabaseUnavailable, like every query through Kysely
  const arrays = async (name: string, text: string, values: unknown[]) =>
    (await pool.query<unknown[]>(query(name, text, values)).catch(rethrow)).rows;
  const coalesced = new CoalescedVersionReads(pool, query);
  return {
    versions: async (scheduleId) => {
      const read = await coalesced.read(scheduleId);
      return versionsOf(read.config, scheduleId, scheduleId === null ? null : (read.bookings.get(scheduleId) ?? null));
    },
    bookingsVersion: async (scheduleId) => (await coalesced.read(scheduleId)).bookings.get(scheduleId) ?? 0,
    bookedTimes: async (scheduleId, from, to) => spansOf(await arrays('bookedTimes', SQL.bookedTimes, [scheduleId, from, to])),
    changesAround: async (scheduleId, since, before, after) =>
      changesOf(await arrays('changesAround', POSTGRES_CHANGES_AROUND, changesParameters(scheduleId, since, before, after))),
  };
}

interface VersionsRead {
  readonly config: number;
  /** bookings version by schedule id, for the asked schedules that exist */
  readonly bookings: ReadonlyMap<number, number>;
}

interface PendingRead {
  /** the asked schedules */
  readonly schedules: Set<number>;
  readonly result: Promise<VersionsRead>;
  settle(read: Promise<VersionsRead>): void;
  sendScheduled: boolean;
}

const VERSIONS_SQL =
  'select m.config_version, s.id, s.bookings_version from meta m left join schedules s on s.id = any($1::int8[]) where m.id = 1';

/**
 * On PostgreSQL each version read is a round trip, and the per-request read was most of a cached request's
 * cost. Concurrent requests share one: a request joins the read that has not been sent yet (asking for its
 * schedule too), and that read is sent once the read before it has answered (MAX_IN_FLIGHT). A read is
 * only ever joined before it is sent, so it starts after every request it answers arrived: each of them
 * sees every change committed before it arrived, the same guarantee as a read of its own
 * (docs/decisions.md §1; docs/architecture.md, "A request's path").
 *
 * The read brings versions only. It once also brought the bookings changed since the schedule's cached
 * answers, sparing the answer a read of its own after a booking; but that statement cost PostgreSQL four
 * times the version read even when nothing had changed (0.22 against 0.06 ms), every shared read waited for
 * it, and /days under 100 bookings a second served 0.40-0.46 of its quiet figure against 0.81-0.92 without it
 * (issue 13). An answer behind by a few bookings now reads their changes itself, once per answer and
 * version (AnswerCache), while the other readers' version reads go on.
 */
class CoalescedVersionReads {
  private static readonly MAX_IN_FLIGHT = 1;
  private next: PendingRead | null = null;
  private inFlight = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly query: (name: string, text: string, values: unknown[]) => pg.QueryArrayConfig,
  ) {}

  read(scheduleId: number | null): Promise<VersionsRead> {
    let pending = this.next;
    if (!pending) {
      let settle!: (read: Promise<VersionsRead>) => void;
      const result = new Promise<VersionsRead>((resolve) => (settle = resolve));
      pending = this.next = { schedules: new Set(), result, settle, sendScheduled: false };
      this.sendWhenFree();
    }
    if (scheduleId !== null) pending.schedules.add(scheduleId);
    return pending.result;
  }

  private sendWhenFree(): void {
    const pending = this.next;
    if (!pending || pending.sendScheduled || this.inFlight >= CoalescedVersionReads.MAX_IN_FLIGHT) return;
    pending.sendScheduled = true;
    // after the requests of this turn of the event loop have joined
    setImmediate(() => this.send(pending));
  }

  private send(pending: PendingRead): void {
    this.next = null;
    this.inFlight++;
    const query = this.pool
      .query<unknown[]>(this.query('versions', VERSIONS_SQL, [[...pending.schedules]]))
      .catch(rethrow)
      .then(({ rows }): VersionsRead => {
        if (rows.length === 0) throw new Error(MISSING_META);
        const bookings = new Map<number, number>();
        for (const [, id, version] of rows) if (id !== null) bookings.set(Number(id), Number(version));
        return { config: Number(rows[0]![0]), bookings };
      });
    pending.settle(query);
    void query
      .catch(() => {})
      .finally(() => {
        this.inFlight--;
        this.sendWhenFree();
      });
  }
}
