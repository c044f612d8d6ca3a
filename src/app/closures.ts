// Practice-wide closures (docs/admin.md, "Closures"): holidays that close every schedule at once. Stored
// once; the snapshot turns them into the set of closed local days every schedule's rules carry, and the
// engine opens nothing on those days (src/core/availability/free-slots.ts, openingIntervals). Adding or
// removing one bumps the config version in the same transaction, so every process's snapshot and cached
// answers (keyed by config version) are replaced on the next request. Bookings already inside a new closure
// stay booked: the admin is shown them, to cancel or keep.
import type { Db } from '../db/connect.js';
import { deleteClosure, insertClosure, loadClosures, type Closure } from '../db/repos/closure.repository.js';
import { bumpConfigVersion } from '../db/repos/installation.repository.js';
import { InvalidInput } from '../core/errors.js';
import { controlCharacterProblem } from '../core/text.js';
import { parseDate } from '../core/time/calendar.js';
import type { OnCreated } from './form-tokens.js';

export type { Closure };

/** Longest closure, in days: a year, so a typo in the year cannot close the practice for a decade. */
export const MAX_CLOSURE_DAYS = 366;

export interface ClosureInput {
  firstDay: string;
  /** empty: the first day only */
  lastDay: string;
  label: string;
}

/** Checks every field; throws InvalidInput for the first problem (field named). */
export function checkClosure(input: ClosureInput): { firstDay: string; lastDay: string; label: string } {
  const first = parseDate(input.firstDay);
  if (first === null) throw new InvalidInput('Enter a date (YYYY-MM-DD).', 'first_day');
  const lastText = input.lastDay.trim() === '' ? input.firstDay : input.lastDay;
  const last = parseDate(lastText);
  if (last === null) throw new InvalidInput('Enter a date (YYYY-MM-DD), or leave it empty for one day.', 'last_day');
  if (last < first) throw new InvalidInput('The last day is before the first day.', 'last_day');
  if (last - first + 1 > MAX_CLOSURE_DAYS) throw new InvalidInput(`A closure lasts at most ${MAX_CLOSURE_DAYS} days.`, 'last_day');
  const label = input.label.trim();
  if (label.length > 200) throw new InvalidInput('At most 200 characters.', 'label');
  const problem = controlCharacterProblem(label);
  if (problem) throw new InvalidInput(`${problem}.`, 'label');
  return { firstDay: input.firstDay.trim(), lastDay: lastText.trim(), label };
}

export async function listClosures(db: Db): Promise<Closure[]> {
  return loadClosures(db.kysely);
}

export async function addClosure(db: Db, input: ClosureInput, now: number, onCreated?: OnCreated<number>): Promise<number> {
  const closure = checkClosure(input);
  return db.write(async (trx) => {
    const id = await insertClosure(trx, { ...closure, createdAt: now });
    await bumpConfigVersion(trx);
    await onCreated?.(trx, id);
    return id;
  });
}

/** false when there was no such closure (removed before: the outcome asked for) */
export async function removeClosure(db: Db, id: number): Promise<boolean> {
  return db.write(async (trx) => {
    const removed = await deleteClosure(trx, id);
    if (removed) await bumpConfigVersion(trx);
    return removed;
  });
}
