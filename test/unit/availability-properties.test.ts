// The free-time engine against a deliberately naive reference (docs/decisions.md §4), on random schedules.
//
// The reference walks real instants minute by minute and reads each one's wall clock with Intl, nothing
// else: no offsets, no transition search, no grid arithmetic on instants. A wall time's meaning is the
// first instant that reads it; an interval bound's instant is the first instant whose wall clock reads
// the bound or later (so a bound inside a spring-forward gap is the instant the clock jumps over it).
// It is slow, so horizons stay small and wall-clock readings are memoised per (zone, instant).
//
// A failure prints fast-check's seed and path; rerun one with FC_SEED=<seed> FC_PATH=<path>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  freeDays,
  freeDaysWithExpiry,
  freeSlotsOn,
  freeSlotsWithExpiry,
  findFreeSlot,
  relevantBookingStarts,
  type AvailabilityContext,
  type BookedTime,
} from '../../src/core/availability/free-slots.js';
import type { Interval, ScheduleRules } from '../../src/core/schedules/schedule.js';
import { WEEKDAYS, type Weekday } from '../../src/core/time/calendar.js';
import { TimeZone } from '../../src/core/time/zone.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

// ---------------------------------------------------------------------------------------------------
// The reference: Intl's reading of the wall clock, and nothing else

const WALL_RE = /^(\d+)\/(\d+)\/(\d+), (\d+):(\d+)$/;
const formatters = new Map<string, Intl.DateTimeFormat>();
const readings = new Map<string, Map<number, number>>();

/** The wall clock at a whole-minute instant, as ms since 1970-01-01 00:00 of that wall calendar. */
function wallClock(zone: string, instant: number): number {
  let memo = readings.get(zone);
  if (!memo) readings.set(zone, (memo = new Map()));
  const known = memo.get(instant);
  if (known !== undefined) return known;
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    formatters.set(zone, format);
  }
  const m = WALL_RE.exec(format.format(new Date(instant)));
  if (!m) throw new Error(`unexpected Intl output for ${zone}`);
  const wall = Date.UTC(Number(m[3]), Number(m[1]) - 1, Number(m[2]), Number(m[4]), Number(m[5]));
  memo.set(instant, wall);
  return wall;
}

interface Scenario {
  zone: string;
  now: number;
  durationMinutes: number;
  rules: {
    slotIntervalMinutes: number;
    minNoticeMinutes: number;
    horizonDays: number;
    capacity: number;
    bufferBeforeMinutes: number;
    bufferAfterMinutes: number;
    weeklyHours: Partial<Record<Weekday, Interval[]>>;
    /** by offset from today (local day of now), so they land inside the window */
    exceptions: { dayOffset: number; hours: Interval[] }[];
  };
  bookings: BookedTime[];
}

interface RefSlot {
  day: number;
  minute: number;
  start: number;
}

/** Every free time of every day from today to the horizon, by walking instants minute by minute. */
function referenceSlots(s: Scenario): Map<number, RefSlot[]> {
  const { zone, now, rules } = s;
  const nowMinute = Math.floor(now / MINUTE) * MINUTE;
  const today = Math.floor(wallClock(zone, nowMinute) / DAY);
  const lastDay = today + rules.horizonDays;
  const exceptions = new Map(s.rules.exceptions.map((e) => [today + e.dayOffset, e.hours]));
  // UTC offsets lie within [-12h, +14h]: this span holds every instant of every wall time we ask about
  const from = today * DAY - 15 * HOUR;
  const to = (lastDay + 2) * DAY + 15 * HOUR;
  const instants: number[] = [];
  const walls: number[] = [];
  for (let t = from; t < to; t += MINUTE) {
    instants.push(t);
    walls.push(wallClock(zone, t));
  }
  const boundInstant = (wall: number) => instants[walls.findIndex((w) => w >= wall)]!;
  const weekday = (day: number) => WEEKDAYS[(((day + 3) % 7) + 7) % 7]!;
  const before = rules.bufferBeforeMinutes * MINUTE;
  const after = rules.bufferAfterMinutes * MINUTE;
  const duration = s.durationMinutes * MINUTE;

  const seen = new Set<number>();
  const result = new Map<number, RefSlot[]>();
  for (let day = today; day <= lastDay; day++) result.set(day, []);
  for (let i = 0; i < instants.length; i++) {
    const t = instants[i]!;
    const wall = walls[i]!;
    if (seen.has(wall)) continue; // a wall time that occurs twice means its first occurrence
    seen.add(wall);
    const day = Math.floor(wall / DAY);
    const minute = (wall - day * DAY) / MINUTE;
    if (day < today || day > lastDay) continue;
    const intervals = exceptions.get(day) ?? rules.weeklyHours[weekday(day)] ?? [];
    const interval = intervals.find((iv) => iv.start <= minute && minute < iv.end && (minute - iv.start) % rules.slotIntervalMinutes === 0);
    if (!interval) continue;
    if (t < now + rules.minNoticeMinutes * MINUTE) continue;
    if (t < boundInstant(day * DAY + interval.start * MINUTE)) continue;
    if (t + duration > boundInstant(day * DAY + interval.end * MINUTE)) continue;
    const conflicts = s.bookings.filter((b) => b.start - before < t + duration + after && b.end + after > t - before).length;
    if (conflicts >= rules.capacity) continue;
    result.get(day)!.push({ day, minute, start: t });
  }
  for (const slots of result.values()) slots.sort((a, b) => a.minute - b.minute);
  return result;
}

// ---------------------------------------------------------------------------------------------------
// Generated scenarios

const ZONES = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'Pacific/Chatham', 'America/Sao_Paulo', 'UTC'];

/** Instants where the zone's offset changes in a year, to the minute (found with Intl alone). */
function transitionsIn(zone: string, year: number): number[] {
  const offset = (t: number) => wallClock(zone, t) - t;
  const found: number[] = [];
  for (let t = Date.UTC(year, 0, 1); t < Date.UTC(year + 1, 0, 1); t += 6 * HOUR) {
    if (offset(t) === offset(t + 6 * HOUR)) continue;
    let lo = t;
    let hi = t + 6 * HOUR;
    while (hi - lo > MINUTE) {
      const mid = lo + Math.floor((hi - lo) / 2 / MINUTE) * MINUTE;
      if (offset(mid) === offset(lo)) lo = mid;
      else hi = mid;
    }
    found.push(hi);
  }
  return found;
}

/** The instant of local midnight starting the local day that contains `instant` (first instant of that day). */
function localMidnight(zone: string, instant: number): number {
  const day = Math.floor(wallClock(zone, Math.floor(instant / MINUTE) * MINUTE) / DAY);
  let t = Math.floor(instant / MINUTE) * MINUTE - 30 * HOUR;
  while (Math.floor(wallClock(zone, t) / DAY) < day) t += MINUTE;
  return t;
}

// Sao Paulo has had no DST since 2019; 2018 had both of its midnight transitions (00:00 -> 01:00, 00:00 -> 23:00)
const ANCHORS: Record<string, number[]> = Object.fromEntries(
  ZONES.map((zone) => {
    const transitions = [...transitionsIn(zone, 2026), ...(zone === 'America/Sao_Paulo' ? transitionsIn(zone, 2018) : [])];
    const ordinary = Date.UTC(2026, 6, 14, 10);
    const anchors = [ordinary, localMidnight(zone, ordinary)];
    for (const t of transitions) anchors.push(t, localMidnight(zone, t), localMidnight(zone, t + DAY));
    return [zone, anchors];
  }),
);

test("the anchors include the zones' DST transitions", () => {
  assert.equal(transitionsIn('Europe/Berlin', 2026).length, 2);
  assert.equal(transitionsIn('Australia/Lord_Howe', 2026).length, 2);
  assert.equal(transitionsIn('America/Sao_Paulo', 2018).length, 2);
  assert.equal(transitionsIn('Asia/Kolkata', 2026).length, 0);
});

const delta = fc.oneof(
  fc.constantFrom(0, -1, 1, -1000, 1000, -MINUTE, MINUTE, -HOUR, HOUR),
  fc.integer({ min: -180, max: 180 }).map((m) => m * MINUTE),
  fc.tuple(fc.integer({ min: -10 * 24 * 60, max: 24 * 60 }), fc.integer({ min: 0, max: 59_999 })).map(([m, ms]) => m * MINUTE + ms),
);

/** Non-overlapping intervals on a 15-minute (sometimes 5-minute) raster, 24:00 allowed as an end. */
const dayHours = fc.oneof(
  { weight: 1, arbitrary: fc.constant([] as Interval[]) },
  {
    weight: 4,
    arbitrary: fc
      .tuple(fc.constantFrom(5, 15, 30), fc.uniqueArray(fc.integer({ min: 0, max: 288 }), { minLength: 2, maxLength: 6 }))
      .map(([step, marks]) => {
        const cuts = [...new Set(marks.map((m) => Math.min(1440, Math.round((m * 5) / step) * step)))].sort((a, b) => a - b);
        const intervals: Interval[] = [];
        for (let i = 0; i + 1 < cuts.length; i += 2) intervals.push({ start: cuts[i]!, end: cuts[i + 1]! });
        return intervals;
      }),
  },
  { weight: 1, arbitrary: fc.constant([{ start: 0, end: 1440 }] as Interval[]) },
);

const scenario: fc.Arbitrary<Scenario> = fc
  .constantFrom(...ZONES)
  .chain((zone) =>
    fc.record({
      zone: fc.constant(zone),
      now: fc.tuple(fc.constantFrom(...ANCHORS[zone]!), delta).map(([a, d]) => a + d),
      durationMinutes: fc.oneof(fc.constantFrom(15, 30, 45, 60, 90, 120, 240), fc.integer({ min: 1, max: 600 })),
      rules: fc.record({
        slotIntervalMinutes: fc.oneof(fc.constantFrom(5, 10, 15, 20, 30, 45, 60, 90), fc.integer({ min: 1, max: 180 })),
        minNoticeMinutes: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3000 })),
        horizonDays: fc.integer({ min: 0, max: 10 }),
        capacity: fc.integer({ min: 1, max: 3 }),
        bufferBeforeMinutes: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 120 })),
        bufferAfterMinutes: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 120 })),
        weeklyHours: fc.record(Object.fromEntries(WEEKDAYS.map((d) => [d, dayHours])) as Record<Weekday, fc.Arbitrary<Interval[]>>, {
          requiredKeys: [],
        }),
        exceptions: fc.uniqueArray(fc.record({ dayOffset: fc.integer({ min: -1, max: 11 }), hours: dayHours }), {
          maxLength: 3,
          selector: (e) => e.dayOffset,
        }),
      }),
      bookings: fc.array(
        fc
          .tuple(
            fc.integer({ min: -2 * 24 * 12, max: 12 * 24 * 12 }),
            fc.oneof(fc.constantFrom(15, 30, 60, 90, 120), fc.integer({ min: 1, max: 1440 })),
          )
          // starts on a 5-minute raster from the minute of `now`, so they often meet candidate times exactly
          .map(([fiveMinutes, minutes]) => ({ start: fiveMinutes * 5 * MINUTE, end: (fiveMinutes * 5 + minutes) * MINUTE })),
        { maxLength: 12 },
      ),
    }),
  )
  .map((s) => {
    const base = Math.floor(s.now / (5 * MINUTE)) * 5 * MINUTE;
    return { ...s, bookings: s.bookings.map((b) => ({ start: base + b.start, end: base + b.end })) };
  });

function contextOf(s: Scenario): AvailabilityContext {
  const zone = TimeZone.of(s.zone);
  const today = zone.localDayOf(s.now);
  const rules: ScheduleRules = { ...s.rules, exceptions: new Map(s.rules.exceptions.map((e) => [today + e.dayOffset, e.hours])) };
  return { rules, durationMinutes: s.durationMinutes, zone, now: s.now };
}

/** What the app hands the engine: the bookings its indexed range read returns for these days. */
function bookingsRead(ctx: AvailabilityContext, bookings: readonly BookedTime[], firstDay: number, lastDay: number): BookedTime[] {
  const { from, to } = relevantBookingStarts(ctx, firstDay, lastDay);
  return bookings.filter((b) => b.start >= from && b.start < to);
}

const RUNS = Number(process.env.FC_RUNS ?? 150);
const settings = <T extends unknown[]>(): fc.Parameters<T> => ({
  numRuns: RUNS,
  ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}),
  ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}),
});

/** fc.assert's report (seed, path, counterexample) goes to stderr too, so it is seen whatever the reporter shows. */
function check<T extends unknown[]>(property: fc.IProperty<T>): void {
  try {
    fc.assert(property, settings<T>());
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    throw error;
  }
}

const show = (slots: readonly { day: number; minute: number; start: number }[]) =>
  slots.map((s) => `${new Date(s.day * DAY + s.minute * MINUTE).toISOString().slice(0, 16)} = ${new Date(s.start).toISOString()}`);

test('freeDays lists exactly the days on which the reference finds a free time', () => {
  check(
    fc.property(scenario, (s) => {
      const ctx = contextOf(s);
      const expected = [...referenceSlots(s)].filter(([, slots]) => slots.length).map(([day]) => day);
      const today = ctx.zone.localDayOf(s.now);
      const actual = freeDays(ctx, bookingsRead(ctx, s.bookings, today, today + s.rules.horizonDays));
      assert.deepEqual(actual, expected);
    }),
  );
});

test("freeSlotsOn gives, for every day, the reference's free times, and null outside today..horizon", () => {
  check(
    fc.property(scenario, (s) => {
      const ctx = contextOf(s);
      const expected = referenceSlots(s);
      const days = [...expected.keys()];
      assert.equal(freeSlotsOn(ctx, days[0]! - 1, s.bookings), null);
      assert.equal(freeSlotsOn(ctx, days.at(-1)! + 1, s.bookings), null);
      for (const [day, slots] of expected) {
        const actual = freeSlotsOn(ctx, day, bookingsRead(ctx, s.bookings, day, day));
        assert.deepEqual(show(actual ?? []), show(slots), `day ${new Date(day * DAY).toISOString().slice(0, 10)}`);
      }
    }),
  );
});

test("findFreeSlot accepts exactly the reference's free times", () => {
  check(
    fc.property(
      scenario,
      fc.array(fc.tuple(fc.integer({ min: -1, max: 11 }), fc.integer({ min: 0, max: 1439 })), { maxLength: 30 }),
      (s, probes) => {
        const ctx = contextOf(s);
        const expected = referenceSlots(s);
        const today = [...expected.keys()][0]!;
        const free = new Map([...expected.values()].flat().map((slot) => [slot.day * 1440 + slot.minute, slot]));
        const asked = [
          ...probes.map(([offset, minute]) => [today + offset, minute] as const),
          ...[...free.values()].map((f) => [f.day, f.minute] as const),
        ];
        for (const [day, minute] of asked) {
          const actual = findFreeSlot(ctx, day, minute, bookingsRead(ctx, s.bookings, day, day));
          const want = free.get(day * 1440 + minute) ?? null;
          assert.deepEqual(actual, want, `${new Date(day * DAY + minute * MINUTE).toISOString().slice(0, 16)} local`);
        }
      },
    ),
  );
});

test("freeDays' answer holds for every later now before its validUntil (the /days cache relies on it)", () => {
  check(
    fc.property(scenario, fc.double({ min: 0, max: 1, noNaN: true }), (s, fraction) => {
      const ctx = contextOf(s);
      const { days, validUntil } = freeDaysWithExpiry(ctx, s.bookings);
      assert.ok(validUntil > s.now);
      const later = Math.min(validUntil - 1, s.now + Math.floor(fraction * (validUntil - s.now)));
      assert.deepEqual(freeDays({ ...ctx, now: later }, s.bookings), days, `at ${new Date(later).toISOString()}`);
      assert.deepEqual(freeDays({ ...ctx, now: validUntil - 1 }, s.bookings), days);
    }),
  );
});

test("freeSlotsOn's answer holds for every later now before its validUntil (the /slots cache relies on it)", () => {
  check(
    fc.property(scenario, fc.integer({ min: -1, max: 12 }), fc.double({ min: 0, max: 1, noNaN: true }), (s, offset, fraction) => {
      const ctx = contextOf(s);
      const day = ctx.zone.localDayOf(s.now) + offset;
      const bookings = bookingsRead(ctx, s.bookings, day, day);
      const answer = freeSlotsWithExpiry(ctx, day, bookings);
      if (answer === null) {
        assert.equal(freeSlotsOn(ctx, day, bookings), null);
        return;
      }
      const { slots, validUntil } = answer;
      assert.ok(validUntil > s.now);
      const later = Math.min(validUntil - 1, s.now + Math.floor(fraction * (validUntil - s.now)));
      assert.deepEqual(freeSlotsOn({ ...ctx, now: later }, day, bookings), slots, `at ${new Date(later).toISOString()}`);
      assert.deepEqual(freeSlotsOn({ ...ctx, now: validUntil - 1 }, day, bookings), slots);
    }),
  );
});
