// Read use-cases behind GET /reasons, /days, /slots and /forms: the cached schedule, one indexed
// range read of its bookings, then the pure engine.
import type { Db } from '../db/connect.js';
import { bookedTimes, bookingsVersion } from '../db/repos/booking.repository.js';
import { NotFound } from '../core/errors.js';
import {
  bookingWindow, freeDaysWithExpiry, freeSlotsOn, findFreeSlot, relevantBookingStarts,
  type AvailabilityContext, type BookedTime, type FreeSlot,
} from '../core/availability/free-slots.js';
import { publicFields, type FormField } from '../core/forms/form-fields.js';
import { formatDate, formatLocalDateTime, parseDate, parseLocalDateTime } from '../core/time/calendar.js';
import type { ReasonView, ScheduleView, Snapshot } from './snapshot.js';

export function findSchedule(snapshot: Snapshot, scheduleId: number | null): ScheduleView {
  const schedule = scheduleId === null ? undefined : snapshot.schedules.get(scheduleId);
  if (!schedule) throw new NotFound('Schedule not found');
  return schedule;
}

export function findReason(schedule: ScheduleView, reasonId: number | null): ReasonView {
  const reason = reasonId === null ? undefined : schedule.reasons.get(reasonId);
  if (!reason) throw new NotFound('Reason not found');
  return reason;
}

export function availabilityContext(snapshot: Snapshot, schedule: ScheduleView, reason: ReasonView, now: number): AvailabilityContext {
  if (!snapshot.zone) throw new Error('installation has no time zone');
  return { rules: schedule.rules, durationMinutes: reason.durationMinutes, zone: snapshot.zone, now };
}

export async function bookingsAround(db: Db['kysely'], schedule: ScheduleView, ctx: AvailabilityContext, firstDay: number, lastDay: number): Promise<BookedTime[]> {
  const { from, to } = relevantBookingStarts(ctx, firstDay, lastDay);
  return bookedTimes(db, schedule.id, from, to);
}

export function listReasons(snapshot: Snapshot, scheduleId: number | null): ReasonView[] {
  return [...findSchedule(snapshot, scheduleId).reasons.values()];
}

interface CachedDays {
  configVersion: number;
  bookingsVersion: number;
  /** the answer holds for `now` in [validFrom, validUntil) */
  validFrom: number;
  validUntil: number;
  days: string[];
}

/**
 * Computed /days answers, per database and per (schedule, reason). A 365-day horizon means reading every
 * booking of the year and scanning every day, tens of milliseconds; the answer changes only when the
 * configuration changes (config version), when the schedule is booked or cancelled by any process
 * (its bookings version, bumped in the booking's transaction) or when time passes a point the engine
 * names (validUntil). The version is read before the bookings, so an answer is never stored under a
 * version newer than the bookings it saw.
 */
const daysCache = new WeakMap<Db, Map<string, CachedDays>>();

export async function listDays(db: Db, snapshot: Snapshot, scheduleId: number | null, reasonId: number | null, now: number): Promise<string[]> {
  const schedule = findSchedule(snapshot, scheduleId);
  const reason = findReason(schedule, reasonId);
  const ctx = availabilityContext(snapshot, schedule, reason, now);
  const version = await bookingsVersion(db.kysely, schedule.id);
  let cache = daysCache.get(db);
  if (!cache) daysCache.set(db, (cache = new Map()));
  const key = `${schedule.id}:${reason.id}`;
  const hit = cache.get(key);
  if (hit && hit.configVersion === snapshot.version && hit.bookingsVersion === version && hit.validFrom <= now && now < hit.validUntil) {
    return hit.days;
  }
  const window = bookingWindow(ctx);
  const bookings = await bookingsAround(db.kysely, schedule, ctx, window.firstDay, window.lastDay);
  const { days, validUntil } = freeDaysWithExpiry(ctx, bookings);
  const answer = days.map(formatDate);
  cache.set(key, { configVersion: snapshot.version, bookingsVersion: version, validFrom: now, validUntil, days: answer });
  return answer;
}

export async function listSlots(db: Db, snapshot: Snapshot, scheduleId: number | null, reasonId: number | null, dayText: string, now: number): Promise<string[]> {
  const schedule = findSchedule(snapshot, scheduleId);
  const ctx = availabilityContext(snapshot, schedule, findReason(schedule, reasonId), now);
  const day = parseDate(dayText);
  const window = bookingWindow(ctx);
  if (day === null || day < window.firstDay || day > window.lastDay) throw new NotFound('Day not found');
  const bookings = await bookingsAround(db.kysely, schedule, ctx, day, day);
  return (freeSlotsOn(ctx, day, bookings) ?? []).map((s) => formatLocalDateTime(s.day, s.minute));
}

/** The free time a slot string names, or NotFound (decisions §5: taken, closed, past, off-grid, nonexistent…). */
export async function freeSlotAt(db: Db['kysely'], schedule: ScheduleView, ctx: AvailabilityContext, slotText: string): Promise<FreeSlot> {
  const local = parseLocalDateTime(slotText);
  if (local === null || local.second !== 0) throw new NotFound('Time not available');
  const window = bookingWindow(ctx);
  if (local.day < window.firstDay || local.day > window.lastDay) throw new NotFound('Time not available');
  const bookings = await bookingsAround(db, schedule, ctx, local.day, local.day);
  const slot = findFreeSlot(ctx, local.day, local.minute, bookings);
  if (!slot) throw new NotFound('Time not available');
  return slot;
}

export async function formFor(db: Db, snapshot: Snapshot, scheduleId: number | null, reasonId: number | null, slotText: string, now: number): Promise<FormField[]> {
  const schedule = findSchedule(snapshot, scheduleId);
  const ctx = availabilityContext(snapshot, schedule, findReason(schedule, reasonId), now);
  await freeSlotAt(db.kysely, schedule, ctx, slotText);
  return publicFields(schedule.form);
}
