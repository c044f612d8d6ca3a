// The one rule that decides what a customer can book (docs/decisions.md §4). /days, /slots, /forms and
// POST /bookings all ask these functions, so they cannot disagree. Pure: the clock, the zone, the
// settings and the existing bookings are arguments.
import { MINUTE_MS, weekdayOf } from '../time/calendar.js';
import type { TimeZone } from '../time/zone.js';
import type { Interval, ScheduleRules } from '../schedules/schedule.js';
import type { StaffOverride } from '../bookings.js';

/** An existing booking, as instants (ms); buffers are added from the schedule's current rules. */
export interface BookedTime {
  readonly start: number;
  readonly end: number;
}

export interface AvailabilityContext {
  readonly rules: ScheduleRules;
  readonly durationMinutes: number;
  readonly zone: TimeZone;
  readonly now: number;
  /** rules set aside by staff booking by hand (admin area only); each relaxes exactly its rule */
  readonly overrides?: ReadonlySet<StaffOverride>;
}

/** How far ahead staff may book when they set the horizon aside: far enough for any practice, bounded for the scan. */
export const STAFF_HORIZON_DAYS = 3660;
const WHOLE_DAY: readonly Interval[] = [{ start: 0, end: 1440 }];

export interface FreeSlot {
  /** local day, days since epoch */
  readonly day: number;
  /** local wall-clock minute of day */
  readonly minute: number;
  /** the instant the appointment starts */
  readonly start: number;
}

export interface BookingWindow {
  readonly firstDay: number;
  readonly lastDay: number;
  /** no start earlier than this instant (now + notice) */
  readonly earliestStart: number;
}

/** Longest booking we accept, so a range query can find every booking that may overlap a span. */
export const MAX_DURATION_MINUTES = 1440;
export const MAX_BUFFER_MINUTES = 1440;

export function bookingWindow({ rules, zone, now, overrides }: AvailabilityContext): BookingWindow {
  const firstDay = zone.localDayOf(now);
  return {
    firstDay,
    lastDay: firstDay + (overrides?.has('horizon') ? Math.max(rules.horizonDays, STAFF_HORIZON_DAYS) : rules.horizonDays),
    // never in the past, notice or not
    earliestStart: now + (overrides?.has('notice') ? 0 : rules.minNoticeMinutes * MINUTE_MS),
  };
}

/** The instants between which a booking's start must lie to matter for candidates on these days. */
export function relevantBookingStarts(ctx: AvailabilityContext, firstDay: number, lastDay: number): { from: number; to: number } {
  const { rules, zone } = ctx;
  const reach = (rules.bufferBeforeMinutes + rules.bufferAfterMinutes) * MINUTE_MS;
  return {
    from: zone.boundInstant(firstDay, 0) - reach - MAX_DURATION_MINUTES * MINUTE_MS,
    to: zone.boundInstant(lastDay + 1, 0) + ctx.durationMinutes * MINUTE_MS + reach,
  };
}

/** Counts existing bookings whose occupied span overlaps a candidate's, over bookings sorted by start. */
class Occupancy {
  private readonly starts: number[];
  private readonly ends: number[];
  private readonly longest: number;

  constructor(
    bookings: readonly BookedTime[],
    private readonly before: number,
    private readonly after: number,
  ) {
    const sorted = [...bookings].sort((a, b) => a.start - b.start);
    this.starts = sorted.map((b) => b.start);
    this.ends = sorted.map((b) => b.end);
    this.longest = sorted.reduce((max, b) => Math.max(max, b.end - b.start), 0);
  }

  /** Bookings conflicting with an appointment at [start, end), counting up to `limit`. */
  conflicts(start: number, end: number, limit: number): number {
    // occupied spans [s - before, e + after) and [start - before, end + after) overlap iff
    // s < end + before + after and e > start - before - after
    const reach = this.before + this.after;
    const lowestStart = start - reach - this.longest;
    let lo = 0;
    let hi = this.starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.starts[mid]! <= lowestStart) lo = mid + 1;
      else hi = mid;
    }
    let count = 0;
    for (let i = lo; i < this.starts.length && this.starts[i]! < end + reach; i++) {
      if (this.ends[i]! > start - reach && ++count >= limit) break;
    }
    return count;
  }
}

/** A local day's opening hours: none on a practice-wide closure, else its exception if it has one, else its weekday's hours. */
export function openingIntervals(rules: ScheduleRules, day: number): readonly Interval[] {
  if (rules.closedDays?.has(day)) return [];
  return rules.exceptions.get(day) ?? rules.weeklyHours[weekdayOf(day)] ?? [];
}

/** Free starts of one local day, ascending. `stopAtFirst` serves /days, which only asks whether there is one. */
function scanDay(ctx: AvailabilityContext, window: BookingWindow, occupancy: Occupancy, day: number, stopAtFirst: boolean): FreeSlot[] {
  const { rules, zone, durationMinutes } = ctx;
  const duration = durationMinutes * MINUTE_MS;
  const found: FreeSlot[] = [];
  const intervals = ctx.overrides?.has('hours') ? WHOLE_DAY : [...openingIntervals(rules, day)].sort((a, b) => a.start - b.start);
  const overCapacity = ctx.overrides?.has('capacity') === true;
  for (const interval of intervals) {
    const intervalEnd = zone.boundInstant(day, interval.end);
    for (let minute = interval.start; minute < interval.end; minute += rules.slotIntervalMinutes) {
      const start = zone.startInstant(day, minute);
      if (start === null || start < window.earliestStart) continue; // nonexistent wall time, or too soon
      // first occurrences grow with the wall time, so once one ends too late, all later ones do
      if (start + duration > intervalEnd) break;
      if (!overCapacity && occupancy.conflicts(start, start + duration, rules.capacity) >= rules.capacity) continue;
      found.push({ day, minute, start });
      if (stopAtFirst) return found;
    }
  }
  return found;
}

function occupancyFor(ctx: AvailabilityContext, bookings: readonly BookedTime[]): Occupancy {
  const { rules } = ctx;
  return new Occupancy(bookings, rules.bufferBeforeMinutes * MINUTE_MS, rules.bufferAfterMinutes * MINUTE_MS);
}

/** Local days from today to the horizon with at least one free time, ascending. */
export function freeDays(ctx: AvailabilityContext, bookings: readonly BookedTime[]): number[] {
  return freeDaysWithExpiry(ctx, bookings).days;
}

/**
 * freeDays, and the first instant at which the mere passing of time could change that answer (with the
 * same rules and bookings): the next local midnight (the window moves), or the moment the earliest free
 * time falls inside the notice period, whichever comes first. Later free times only pass after it.
 */
export function freeDaysWithExpiry(ctx: AvailabilityContext, bookings: readonly BookedTime[]): { days: number[]; validUntil: number } {
  const window = bookingWindow(ctx);
  return freeDaysOf(ctx, window.firstDay, firstFreeStarts(ctx, bookings, window.firstDay, window.lastDay));
}

/**
 * The first free start of each local day from `fromDay` to `toDay` (both within the window), NaN for a
 * day without one: what /days keeps, so that a booking's change is applied by rescanning only the days
 * it touches (daysTouchedBy) with the bookings around them.
 */
export function firstFreeStarts(ctx: AvailabilityContext, bookings: readonly BookedTime[], fromDay: number, toDay: number): number[] {
  const window = bookingWindow(ctx);
  const occupancy = occupancyFor(ctx, bookings);
  const starts: number[] = [];
  for (let day = fromDay; day <= toDay; day++) starts.push(scanDay(ctx, window, occupancy, day, true)[0]?.start ?? Number.NaN);
  return starts;
}

/**
 * The free days and their expiry (as freeDaysWithExpiry) from the first free start of each day of the
 * window, `starts[i]` being day `firstDay + i`'s.
 */
export function freeDaysOf(ctx: AvailabilityContext, firstDay: number, starts: readonly number[]): { days: number[]; validUntil: number } {
  const days: number[] = [];
  let validUntil = ctx.zone.boundInstant(firstDay + 1, 0);
  for (let i = 0; i < starts.length; i++) {
    const start = starts[i]!;
    if (Number.isNaN(start)) continue;
    if (!days.length) validUntil = Math.min(validUntil, start - ctx.rules.minNoticeMinutes * MINUTE_MS + 1);
    days.push(firstDay + i);
  }
  return { days, validUntil };
}

/**
 * The local days whose free times a booking (booked or cancelled) of this span can change, for this
 * reason: those with a candidate [t, t + duration) whose occupied span, buffers added, overlaps the
 * booking's, i.e. t in (start - duration - buffers, end + buffers). One day more on each side, so that
 * a day's wall times that fall on a neighbouring date (time-zone changes) are covered too.
 */
export function daysTouchedBy(ctx: AvailabilityContext, span: BookedTime): { first: number; last: number } {
  const { rules, zone, durationMinutes } = ctx;
  const reach = (rules.bufferBeforeMinutes + rules.bufferAfterMinutes) * MINUTE_MS;
  return {
    first: zone.localDayOf(span.start - durationMinutes * MINUTE_MS - reach) - 1,
    last: zone.localDayOf(span.end + reach) + 1,
  };
}

/** Free times of one local day, ascending; null when the day lies outside today..horizon. */
export function freeSlotsOn(ctx: AvailabilityContext, day: number, bookings: readonly BookedTime[]): FreeSlot[] | null {
  return freeSlotsWithExpiry(ctx, day, bookings)?.slots ?? null;
}

/**
 * freeSlotsOn, and the first instant at which the mere passing of time could change that answer (with
 * the same rules and bookings): the next local midnight (the window moves), or the moment the earliest
 * of the free times falls inside the notice period. Time passing only ever removes free times of a day.
 */
export function freeSlotsWithExpiry(
  ctx: AvailabilityContext,
  day: number,
  bookings: readonly BookedTime[],
): { slots: FreeSlot[]; validUntil: number } | null {
  const window = bookingWindow(ctx);
  if (day < window.firstDay || day > window.lastDay) return null;
  const slots = scanDay(ctx, window, occupancyFor(ctx, bookings), day, false);
  let validUntil = ctx.zone.boundInstant(window.firstDay + 1, 0);
  for (const slot of slots) validUntil = Math.min(validUntil, slot.start - ctx.rules.minNoticeMinutes * MINUTE_MS + 1);
  return { slots, validUntil };
}

/** The free time at this local wall time, or null when it is not one (taken, closed, off-grid, past, nonexistent…). */
export function findFreeSlot(ctx: AvailabilityContext, day: number, minute: number, bookings: readonly BookedTime[]): FreeSlot | null {
  return freeSlotsOn(ctx, day, bookings)?.find((slot) => slot.minute === minute) ?? null;
}
