// Read use-cases behind GET /reasons, /days, /slots and /forms: the cached schedule, cached answers
// checked by version reads, and on a miss one indexed range read of the bookings and the pure engine.
import type { Db } from '../db/connect.js';
import type { ChangeReach } from '../db/hot-reads.js';
import {
  answerCachesOf,
  type CachedAnswer,
  type Computed,
  type DaySlots,
  type FreeDays,
  type ListAnswer,
  type Versions,
} from './answer-cache.js';
import { bookedTimes } from '../db/repos/booking.repository.js';
import { NotFound } from '../core/errors.js';
import {
  bookingWindow,
  daysTouchedBy,
  firstFreeStarts,
  MAX_DURATION_MINUTES,
  freeDaysOf,
  freeSlotsWithExpiry,
  freeSlotsOn,
  findFreeSlot,
  relevantBookingStarts,
  type AvailabilityContext,
  type BookedTime,
  type FreeSlot,
} from '../core/availability/free-slots.js';
import { publicFields, type FormField } from '../core/forms/form-fields.js';
import { DAY_MS, MINUTE_MS, formatDate, formatLocalDateTime, parseDate, parseLocalDateTime } from '../core/time/calendar.js';
import type { ScheduleView, Snapshot } from './snapshot.js';
import type { StoredReason } from '../core/schedules/schedule.js';
import type { StaffOverride } from '../core/bookings.js';

export function findSchedule(snapshot: Snapshot, scheduleId: number | null): ScheduleView {
  const schedule = scheduleId === null ? undefined : snapshot.schedules.get(scheduleId);
  if (!schedule) throw new NotFound('Schedule not found');
  return schedule;
}

export function findReason(schedule: ScheduleView, reasonId: number | null): StoredReason {
  const reason = reasonId === null ? undefined : schedule.reasons.get(reasonId);
  if (!reason) throw new NotFound('Reason not found');
  return reason;
}

export function availabilityContext(snapshot: Snapshot, schedule: ScheduleView, reason: StoredReason, now: number): AvailabilityContext {
  if (!snapshot.zone) throw new Error('installation has no time zone');
  return { rules: schedule.rules, durationMinutes: reason.durationMinutes, zone: snapshot.zone, now };
}

export function listReasons(snapshot: Snapshot, scheduleId: number | null): StoredReason[] {
  return [...findSchedule(snapshot, scheduleId).reasons.values()];
}

/** The schedule's bookings version: the one read with the config version when it is this schedule's, else a read. */
function bookingsVersionOf(db: Db, scheduleId: number, known: Versions | undefined): Promise<number> | number {
  return known?.scheduleId === scheduleId && known.bookings !== null ? known.bookings : db.hot.bookingsVersion(scheduleId);
}

/** Outside transactions: the bookings that matter for candidates on these days, through the prepared read. */
function readBookingsAround(
  db: Db,
  schedule: ScheduleView,
  ctx: AvailabilityContext,
  firstDay: number,
  lastDay: number,
): Promise<BookedTime[]> {
  const { from, to } = relevantBookingStarts(ctx, firstDay, lastDay);
  return db.hot.bookedTimes(schedule.id, from, to);
}

export async function listDays(
  db: Db,
  snapshot: Snapshot,
  scheduleId: number | null,
  reasonId: number | null,
  now: number,
  known?: Versions,
): Promise<ListAnswer> {
  const schedule = findSchedule(snapshot, scheduleId);
  const reason = findReason(schedule, reasonId);
  const ctx = availabilityContext(snapshot, schedule, reason, now);
  const version = await bookingsVersionOf(db, schedule.id, known);
  return answerCachesOf(db).days.obtain(`${schedule.id}:${reason.id}`, snapshot.version, version, now, async (previous) => {
    const window = bookingWindow(ctx);
    const updated = previous && (await updatedDays(db, schedule, ctx, window.firstDay, previous));
    if (updated) return updated;
    const bookings = await readBookingsAround(db, schedule, ctx, window.firstDay, window.lastDay);
    return freeDaysAnswer(ctx, window.firstDay, firstFreeStarts(ctx, bookings, window.firstDay, window.lastDay));
  });
}

function freeDaysAnswer(ctx: AvailabilityContext, firstDay: number, starts: number[]): Computed<FreeDays> {
  const { days, validUntil } = freeDaysOf(ctx, firstDay, starts);
  return { value: { items: days.map(formatDate), firstDay, starts }, validUntil };
}

/**
 * A /days answer computed under an older bookings version, brought up to date: only the days the bookings
 * booked or cancelled since then touch are scanned again, with the bookings around them (a booking
 * changes a few days; the year's scan is what made every booking cost every reader tens of milliseconds).
 * The other days' first free times are unchanged: their bookings are, and time passing has not reached
 * them while `now` is before the old answer's expiry (the earliest free time of all). Null when the old
 * answer cannot be used (another window, or expired): then the whole window is computed.
 */
async function updatedDays(
  db: Db,
  schedule: ScheduleView,
  ctx: AvailabilityContext,
  firstDay: number,
  previous: CachedAnswer<FreeDays>,
): Promise<Computed<FreeDays> | null> {
  if (previous.value.firstDay !== firstDay || ctx.now < previous.validFrom || ctx.now >= previous.validUntil) return null;
  const { before, after } = changeReach(ctx);
  // read after the version the request read, so it holds every change up to it (and perhaps later ones,
  // which the answer then holds too on the days they touch; it keeps the version asked for, the lower bound)
  const changes = await db.hot.changesAround(schedule.id, previous.bookingsVersion, before, after);
  if (!changes) return null; // more than MAX_CHANGES: computed whole
  return updatedStarts(ctx, firstDay, previous, changes);
}

/** The answer with the days the changes touch scanned again with the bookings around them. */
function updatedStarts(
  ctx: AvailabilityContext,
  firstDay: number,
  previous: CachedAnswer<FreeDays>,
  { changed, around }: { changed: readonly BookedTime[]; around: BookedTime[] },
): Computed<FreeDays> {
  const starts = [...previous.value.starts];
  const lastDay = firstDay + starts.length - 1;
  for (const { first, last } of touchedRuns(ctx, changed, firstDay, lastDay)) {
    starts.splice(first - firstDay, last - first + 1, ...firstFreeStarts(ctx, around, first, last));
  }
  return freeDaysAnswer(ctx, firstDay, starts);
}

/**
 * How far from a changed booking the bookings that matter for the days it touches (daysTouchedBy) may start:
 * those days reach two days and a time-zone shift beyond the booking's span widened by the reason and the
 * buffers, and a day's candidates meet bookings starting up to MAX_DURATION_MINUTES and the buffers before
 * it (relevantBookingStarts). Generous: more bookings than needed change nothing but the read's size.
 */
function changeReach({ rules, durationMinutes }: Pick<AvailabilityContext, 'rules' | 'durationMinutes'>): ChangeReach {
  const reach = (rules.bufferBeforeMinutes + rules.bufferAfterMinutes + durationMinutes) * MINUTE_MS;
  return { before: 2 * reach + MAX_DURATION_MINUTES * MINUTE_MS + 3 * DAY_MS, after: 2 * reach + 3 * DAY_MS };
}

/** The days the changes touch within [firstDay, lastDay], as runs of consecutive days (each scanned once). */
function touchedRuns(ctx: AvailabilityContext, changes: readonly BookedTime[], firstDay: number, lastDay: number) {
  const spans = changes
    .map((change) => daysTouchedBy(ctx, change))
    .map(({ first, last }) => ({ first: Math.max(first, firstDay), last: Math.min(last, lastDay) }))
    .filter(({ first, last }) => first <= last)
    .sort((a, b) => a.first - b.first);
  const runs: { first: number; last: number }[] = [];
  for (const span of spans) {
    const run = runs.at(-1);
    if (run && span.first <= run.last + 1) run.last = Math.max(run.last, span.last);
    else runs.push({ ...span });
  }
  return runs;
}

/** The free times of one local day (cached), or null when the day lies outside today..horizon. */
async function slotsOfDay(
  db: Db,
  snapshot: Snapshot,
  schedule: ScheduleView,
  reason: StoredReason,
  day: number,
  now: number,
  known: Versions | undefined,
): Promise<DaySlots | null> {
  const ctx = availabilityContext(snapshot, schedule, reason, now);
  const window = bookingWindow(ctx);
  if (day < window.firstDay || day > window.lastDay) return null;
  const version = await bookingsVersionOf(db, schedule.id, known);
  return answerCachesOf(db).slots.obtain(`${schedule.id}:${reason.id}:${day}`, snapshot.version, version, now, async () => {
    const bookings = await readBookingsAround(db, schedule, ctx, day, day);
    const { slots, validUntil } = freeSlotsWithExpiry(ctx, day, bookings)!;
    return { value: { slots, items: slots.map((s) => formatLocalDateTime(s.day, s.minute)) }, validUntil };
  });
}

export async function listSlots(
  db: Db,
  snapshot: Snapshot,
  scheduleId: number | null,
  reasonId: number | null,
  dayText: string,
  now: number,
  known?: Versions,
): Promise<ListAnswer> {
  const schedule = findSchedule(snapshot, scheduleId);
  const reason = findReason(schedule, reasonId);
  const day = parseDate(dayText);
  const slots = day === null ? null : await slotsOfDay(db, snapshot, schedule, reason, day, now, known);
  if (!slots) throw new NotFound('Day not found');
  return slots;
}

/** A requested time within the booking window, and the starts of the bookings that can stand in its way. */
export interface RequestedTime {
  readonly day: number;
  readonly minute: number;
  /** bookings starting in [from, to) are the ones its check needs */
  readonly from: number;
  readonly to: number;
}

/** The local time a slot string names, when it can be free at all (NotFound otherwise: malformed, off-second, outside the window). */
export function requestedTime(ctx: AvailabilityContext, slotText: string): RequestedTime {
  const local = parseLocalDateTime(slotText);
  if (local === null || local.second !== 0) throw new NotFound('Time not available');
  const window = bookingWindow(ctx);
  if (local.day < window.firstDay || local.day > window.lastDay) throw new NotFound('Time not available');
  return { day: local.day, minute: local.minute, ...relevantBookingStarts(ctx, local.day, local.day) };
}

/** The free time at `at` given the bookings starting in its range, or NotFound (docs/decisions.md §5: taken, closed, past, off-grid…). */
export function freeSlotAmong(ctx: AvailabilityContext, at: RequestedTime, bookings: readonly BookedTime[]): FreeSlot {
  const slot = findFreeSlot(ctx, at.day, at.minute, bookings);
  if (!slot) throw new NotFound('Time not available');
  return slot;
}

/**
 * The free time a slot string names, or NotFound (docs/decisions.md §5: taken, closed, past, off-grid,
 * nonexistent…). Uncached, from the bookings as `trx` sees them: a booking's own transaction re-checks here.
 */
export async function freeSlotAt(
  trx: Db['kysely'],
  schedule: ScheduleView,
  ctx: AvailabilityContext,
  slotText: string,
  exceptBookingId?: number,
): Promise<FreeSlot> {
  const at = requestedTime(ctx, slotText);
  return freeSlotAmong(ctx, at, await bookedTimes(trx, schedule.id, at.from, at.to, exceptBookingId));
}

/**
 * Booking by hand with rules set aside: the day's times free under the relaxed rules, each marked whether
 * it needs the overrides (not free for a customer). Uncached (staff pages are few); null when the day lies
 * outside the window even so.
 */
export async function staffSlots(
  db: Db,
  snapshot: Snapshot,
  scheduleId: number,
  reasonId: number,
  dayText: string,
  now: number,
  overrides: ReadonlySet<StaffOverride>,
): Promise<{ time: string; needsOverride: boolean }[] | null> {
  const schedule = findSchedule(snapshot, scheduleId);
  const reason = findReason(schedule, reasonId);
  const day = parseDate(dayText);
  if (day === null) return null;
  const plain = availabilityContext(snapshot, schedule, reason, now);
  const relaxed = { ...plain, overrides };
  const window = bookingWindow(relaxed);
  if (day < window.firstDay || day > window.lastDay) return null;
  const bookings = await readBookingsAround(db, schedule, relaxed, day, day);
  const usual = new Set((freeSlotsOn(plain, day, bookings) ?? []).map((s) => s.minute));
  return (freeSlotsOn(relaxed, day, bookings) ?? []).map((s) => ({
    time: formatLocalDateTime(s.day, s.minute).slice(11),
    needsOverride: !usual.has(s.minute),
  }));
}

export async function formFor(
  db: Db,
  snapshot: Snapshot,
  scheduleId: number | null,
  reasonId: number | null,
  slotText: string,
  now: number,
  known?: Versions,
): Promise<FormField[]> {
  const schedule = findSchedule(snapshot, scheduleId);
  const reason = findReason(schedule, reasonId);
  // the same answer as freeSlotAt's (one rule), from the day's cached free times
  const local = parseLocalDateTime(slotText);
  const day = local === null || local.second !== 0 ? null : await slotsOfDay(db, snapshot, schedule, reason, local.day, now, known);
  if (!day?.slots.some((slot) => slot.minute === local!.minute)) throw new NotFound('Time not available');
  return publicFields(schedule.form);
}
