// The caches of the API's hot path. Each is kept because one request costs microseconds and the work it
// saves costs as much or more (docs/architecture.md, "A request's path"):
//
// - Statements (db/connect.ts, withStatementCache): better-sqlite3 statements for the SQL Kysely builds,
//   per SQLite connection, keyed by the SQL text. Never stale (a text always means the same statement);
//   cleared whole when 500 are held.
// - Prepared reads (db/hot-reads.ts): the per-request reads (versions, a schedule's bookings version, its
//   booked spans), prepared once per SQLite connection on first use; nothing is held on PostgreSQL. Never
//   stale: fixed SQL.
// - Answers (here, AnswerCache): /days per schedule and reason; /slots and /forms per schedule, reason and
//   day; per Db. An answer holds while the config version and the schedule's bookings version are the
//   ones it was computed under and `now` lies in [computed at, the expiry the engine named). Bounded by
//   the days or free times held, dropping the oldest answers first.
// - JSON bodies (here, ListAnswer.body): the bytes of a /days or /slots response, made on the first send
//   of an answer and kept on it, so they live and go with their answer.
//
// The settings and schedules themselves are cached too (app/snapshot.ts, by config version).
import type { Db } from '../db/connect.js';
import type { Versions } from '../db/hot-reads.js';
import type { FreeSlot } from '../core/availability/free-slots.js';

// http carries the versions from the gate to the use-cases, and imports no db types
export type { Versions };

/**
 * Computed answers kept per process: a 365-day /days answer means reading the year's bookings and
 * scanning every day (tens of milliseconds), and even one day's /slots costs more than the rest of the
 * request. An answer changes only when the configuration changes (config version), when the schedule is
 * booked or cancelled by any process (its bookings version, bumped in the booking's transaction) or when
 * time passes a point the engine names (validUntil). Callers read the bookings version before the
 * bookings, so an answer is never stored under a version newer than the bookings it saw.
 */
export class AnswerCache<T> {
  private readonly entries = new Map<
    string,
    { configVersion: number; bookingsVersion: number; validFrom: number; validUntil: number; value: T; weight: number }
  >();
  private weight = 0;

  /** bounded by the total weight of the answers held (their number of days or free times), not by count */
  constructor(
    private readonly maxWeight: number,
    private readonly weigh: (value: T) => number,
  ) {}

  get(key: string, configVersion: number, bookingsVersion: number, now: number): T | undefined {
    const hit = this.entries.get(key);
    if (
      hit &&
      hit.configVersion === configVersion &&
      hit.bookingsVersion === bookingsVersion &&
      hit.validFrom <= now &&
      now < hit.validUntil
    ) {
      return hit.value;
    }
    return undefined;
  }

  set(key: string, configVersion: number, bookingsVersion: number, now: number, validUntil: number, value: T): void {
    this.delete(key);
    const weight = 1 + this.weigh(value);
    // insertion order is age: the oldest answers go first
    for (const oldest of this.entries.keys()) {
      if (this.weight + weight <= this.maxWeight) break;
      this.delete(oldest);
    }
    this.entries.set(key, { configVersion, bookingsVersion, validFrom: now, validUntil, value, weight });
    this.weight += weight;
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.weight -= entry.weight;
  }
}

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
const caches = new WeakMap<Db, { days: AnswerCache<ListAnswer>; slots: AnswerCache<DaySlots> }>();

export function answerCachesOf(db: Db) {
  let found = caches.get(db);
  if (!found) {
    found = {
      days: new AnswerCache<ListAnswer>(200_000, (days) => days.items.length),
      slots: new AnswerCache<DaySlots>(200_000, (day) => day.slots.length),
    };
    caches.set(db, found);
  }
  return found;
}
