// Read use-cases behind GET /reasons, /days, /slots and /forms: the cached schedule, cached answers
// checked by version reads, and on a miss one indexed range read of the bookings and the pure engine.
import type { Db } from '../db/connect.js';
import { answerCachesOf, type DaySlots, type ListAnswer, type Versions } from './answer-cache.js';
import { bookedTimes } from '../db/repos/booking.repository.js';
import { NotFound } from '../core/errors.js';
import {
  bookingWindow,
  freeDaysWithExpiry,
  freeSlotsWithExpiry,
  findFreeSlot,
  relevantBookingStarts,
  type AvailabilityContext,
  type BookedTime,
  type FreeSlot,
} from '../core/availability/free-slots.js';
import { publicFields, type FormField } from '../core/forms/form-fields.js';
import { formatDate, formatLocalDateTime, parseDate, parseLocalDateTime } from '../core/time/calendar.js';
import type { ScheduleView, Snapshot } from './snapshot.js';
import type { StoredReason } from '../core/schedules/schedule.js';

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
  const cache = answerCachesOf(db).days;
  const key = `${schedule.id}:${reason.id}`;
  const hit = cache.get(key, snapshot.version, version, now);
  if (hit) return hit;
  const window = bookingWindow(ctx);
  const bookings = await readBookingsAround(db, schedule, ctx, window.firstDay, window.lastDay);
  const { days, validUntil } = freeDaysWithExpiry(ctx, bookings);
  const answer = { items: days.map(formatDate) };
  cache.set(key, snapshot.version, version, now, validUntil, answer);
  return answer;
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
  const cache = answerCachesOf(db).slots;
  const key = `${schedule.id}:${reason.id}:${day}`;
  const hit = cache.get(key, snapshot.version, version, now);
  if (hit) return hit;
  const bookings = await readBookingsAround(db, schedule, ctx, day, day);
  const { slots, validUntil } = freeSlotsWithExpiry(ctx, day, bookings)!;
  const answer = { slots, items: slots.map((s) => formatLocalDateTime(s.day, s.minute)) };
  cache.set(key, snapshot.version, version, now, validUntil, answer);
  return answer;
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

/**
 * The free time a slot string names, or NotFound (docs/decisions.md §5: taken, closed, past, off-grid,
 * nonexistent…). Uncached, from the bookings as `trx` sees them: the booking's own transaction re-checks here.
 */
export async function freeSlotAt(trx: Db['kysely'], schedule: ScheduleView, ctx: AvailabilityContext, slotText: string): Promise<FreeSlot> {
  const local = parseLocalDateTime(slotText);
  if (local === null || local.second !== 0) throw new NotFound('Time not available');
  const window = bookingWindow(ctx);
  if (local.day < window.firstDay || local.day > window.lastDay) throw new NotFound('Time not available');
  const { from, to } = relevantBookingStarts(ctx, local.day, local.day);
  const bookings = await bookedTimes(trx, schedule.id, from, to);
  const slot = findFreeSlot(ctx, local.day, local.minute, bookings);
  if (!slot) throw new NotFound('Time not available');
  return slot;
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
