// The caches of the API's hot path. Each is kept because one request costs microseconds and the work it
// saves costs as much or more (docs/architecture.md, "A request's path"):
//
// - Statements (db/connect.ts, withStatementCache): better-sqlite3 statements for the SQL Kysely builds,
//   per SQLite connection, keyed by the SQL text. Never stale (a text always means the same statement);
//   cleared whole when 500 are held.
// - Prepared reads (db/hot-reads.ts): the per-request reads (versions, a schedule's bookings version, its
//   booked spans, the bookings changed since a version), prepared once per SQLite connection on first use; nothing is held on PostgreSQL. Never
//   stale: fixed SQL.
// - Answers (here, AnswerCache): /days per schedule and reason; /slots and /forms per schedule, reason and
//   day; per Db. An answer serves a request while the config version is the one it was computed under, the
//   schedule's bookings version the request read is not later than the answer's, and `now` lies in
//   [computed at, the expiry the engine named). A /days answer behind by some bookings is brought up to
//   date by rescanning only the days the changed bookings touch (app/availability.ts). Bounded by the
//   days or free times held, dropping the oldest answers first; one computation per key at a time.
// - JSON bodies (here, ListAnswer.body): the bytes of a /days or /slots response, made on the first send
//   of an answer and kept on it, so they live and go with their answer.
//
// The settings and schedules themselves are cached too (app/snapshot.ts, by config version).
import type { Db } from '../db/connect.js';
import type { Versions } from '../db/hot-reads.js';
import type { FreeSlot } from '../core/availability/free-slots.js';

// http carries the versions from the gate to the use-cases, and imports no db types
export type { Versions };

/** A cached answer with what it was computed under. */
export interface CachedAnswer<T> {
  readonly configVersion: number;
  /** the bookings version read before the bookings it saw: the answer reflects this version or a later one */
  readonly bookingsVersion: number;
  readonly validFrom: number;
  readonly validUntil: number;
  readonly value: T;
}

/** What a computation of an answer returns. */
export interface Computed<T> {
  readonly value: T;
  /** the instant from which time passing could change it (the engine's expiry) */
  readonly validUntil: number;
}

/**
 * Computed answers kept per process: a 365-day /days answer means reading the year's bookings and
 * scanning every day (tens of milliseconds), and even one day's /slots costs more than the rest of the
 * request. An answer changes only when the configuration changes (config version), when the schedule is
 * booked or cancelled by any process (its bookings version, bumped in the booking's transaction) or when
 * time passes a point the engine names (validUntil). Callers read the bookings version before the
 * bookings, so an answer is never stored under a version newer than the bookings it saw; an answer stored
 * under a later version than a request read serves it (it holds every change the request must see).
 *
 * One computation per key at a time: requests that miss while an answer for their version (or a later one)
 * is being computed wait for it instead of computing it again. Without that, each booking made every
 * connection's next /days recompute the year at once (issue 13).
 */
export class AnswerCache<T> {
  private readonly entries = new Map<string, CachedAnswer<T> & { weight: number }>();
  private readonly running = new Map<string, { configVersion: number; bookingsVersion: number; done: Promise<CachedAnswer<T>> }>();
  private weight = 0;

  /** bounded by the total weight of the answers held (their number of days or free times), not by count */
  constructor(
    private readonly maxWeight: number,
    private readonly weigh: (value: T) => number,
  ) {}

  get(key: string, configVersion: number, bookingsVersion: number, now: number): T | undefined {
    const hit = this.entries.get(key);
    return hit && serves(hit, configVersion, bookingsVersion, now) ? hit.value : undefined;
  }

  /**
   * The answer for a request that read these versions at `now`: the cached one, the one another request is
   * computing for these versions or later ones, or `compute`'s. `compute` gets the answer held under the same
   * config version but an older bookings version (or expired), if any, to update instead of starting afresh.
   */
  async obtain(
    key: string,
    configVersion: number,
    bookingsVersion: number,
    now: number,
    compute: (previous: CachedAnswer<T> | undefined) => Promise<Computed<T>>,
  ): Promise<T> {
    const hit = this.get(key, configVersion, bookingsVersion, now);
    if (hit !== undefined) return hit;
    const running = this.running.get(key);
    if (running && running.configVersion === configVersion && running.bookingsVersion >= bookingsVersion) {
      // at this request's versions or later ones, so it holds every change this request must see; only time passing can fail it
      const shared = await running.done;
      if (now < shared.validUntil) return shared.value;
    }
    const held = this.entries.get(key);
    const done = compute(held?.configVersion === configVersion ? held : undefined).then((computed) => {
      const answer: CachedAnswer<T> = {
        configVersion,
        bookingsVersion,
        validFrom: now,
        validUntil: computed.validUntil,
        value: computed.value,
      };
      this.keep(key, answer);
      return answer;
    });
    this.running.set(key, { configVersion, bookingsVersion, done });
    try {
      return (await done).value;
    } finally {
      if (this.running.get(key)?.done === done) this.running.delete(key);
    }
  }

  set(key: string, configVersion: number, bookingsVersion: number, now: number, validUntil: number, value: T): void {
    this.keep(key, { configVersion, bookingsVersion, validFrom: now, validUntil, value });
  }

  /** Keeps `answer` unless the one held is at the same config version, a later bookings version and still current. */
  private keep(key: string, answer: CachedAnswer<T>): void {
    const held = this.entries.get(key);
    if (
      held &&
      held.configVersion === answer.configVersion &&
      held.bookingsVersion > answer.bookingsVersion &&
      held.validUntil > answer.validFrom
    )
      return;
    this.delete(key);
    const weight = 1 + this.weigh(answer.value);
    // insertion order is age: the oldest answers go first
    for (const oldest of this.entries.keys()) {
      if (this.weight + weight <= this.maxWeight) break;
      this.delete(oldest);
    }
    this.entries.set(key, { ...answer, weight });
    this.weight += weight;
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.weight -= entry.weight;
  }
}

const serves = (answer: CachedAnswer<unknown>, configVersion: number, bookingsVersion: number, now: number) =>
  answer.configVersion === configVersion && answer.bookingsVersion >= bookingsVersion && answer.validFrom <= now && now < answer.validUntil;

/** A /days or /slots answer as the API sends it. */
export interface ListAnswer {
  /** days (YYYY-MM-DD) or free times (YYYY-MM-DD HH:MM:SS), ascending */
  readonly items: readonly string[];
  /** `{"data": items}`, once sent: see jsonBody */
  body?: Buffer;
}

/** One day's free times: the /slots answer, and the slots /forms checks a time against. */
export interface DaySlots extends ListAnswer {
  readonly slots: readonly FreeSlot[];
}

/** A /days answer, with the first free start of every day of its window, from which a booking's change is applied. */
export interface FreeDays extends ListAnswer {
  /** the window's first day (today, when computed) */
  readonly firstDay: number;
  /** the first free start of day `firstDay + i`, NaN for a day without one */
  readonly starts: readonly number[];
}

/**
 * The response body of an answer, serialized on its first send and kept on it: for a year of days that
 * was the larger part of the request. Same bytes as the response schema's serializer.
 */
export function jsonBody(answer: ListAnswer): Buffer {
  return (answer.body ??= Buffer.from(JSON.stringify({ data: answer.items })));
}

/**
 * Per database (tests open several in one process). At most about 200,000 days or free times each, some
 * tens of megabytes at worst, whatever the grid and horizon: a year of /days for hundreds of schedule and
 * reason pairs, or a year of /slots at a 30-minute grid for several of them.
 */
const caches = new WeakMap<Db, { days: AnswerCache<FreeDays>; slots: AnswerCache<DaySlots> }>();

export function answerCachesOf(db: Db) {
  let found = caches.get(db);
  if (!found) {
    found = {
      days: new AnswerCache<FreeDays>(200_000, (days) => days.starts.length),
      slots: new AnswerCache<DaySlots>(200_000, (day) => day.slots.length),
    };
    caches.set(db, found);
  }
  return found;
}
