// Each rule of docs/decisions.md §4 on its own, at a fixed clock, in UTC so the arithmetic is plain to read.
// DST edges and random schedules against a reference: availability-*.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freeDays, freeSlotsOn, findFreeSlot, type BookedTime } from '../../src/core/availability/free-slots.js';
import type { ScheduleRules } from '../../src/core/schedules/schedule.js';
import { formatClock, formatDate, parseDate } from '../../src/core/time/calendar.js';
import { TimeZone } from '../../src/core/time/zone.js';

const UTC = TimeZone.of('UTC');
const MONDAY = parseDate('2026-06-01')!; // a Monday
const at = (date: string, clock: string) => Date.parse(`${date}T${clock}:00Z`);
const hours = (...pairs: [string, string][]) =>
  pairs.map(([s, e]) => {
    const [sh, sm] = s.split(':').map(Number);
    const [eh, em] = e.split(':').map(Number);
    return { start: sh! * 60 + sm!, end: eh! * 60 + em! };
  });

function rules(extra: Partial<ScheduleRules> = {}): ScheduleRules {
  return {
    slotIntervalMinutes: 30,
    minNoticeMinutes: 0,
    horizonDays: 7,
    capacity: 1,
    bufferBeforeMinutes: 0,
    bufferAfterMinutes: 0,
    weeklyHours: { mon: hours(['09:00', '12:00']), tue: hours(['09:00', '12:00']) },
    exceptions: new Map(),
    ...extra,
  };
}

function slots(r: ScheduleRules, durationMinutes: number, now: number, day: number, bookings: BookedTime[] = []) {
  return freeSlotsOn({ rules: r, durationMinutes, zone: UTC, now }, day, bookings)?.map((s) => formatClock(s.minute)) ?? null;
}

const SUNDAY_NIGHT = at('2026-05-31', '22:00');

test('weekly hours, grid from each interval start, duration inside one interval', () => {
  const r = rules({ weeklyHours: { mon: hours(['09:00', '10:30'], ['13:15', '14:30']) } });
  assert.deepEqual(slots(r, 30, SUNDAY_NIGHT, MONDAY), ['09:00', '09:30', '10:00', '13:15', '13:45']);
  assert.deepEqual(slots(r, 60, SUNDAY_NIGHT, MONDAY), ['09:00', '09:30', '13:15']);
  assert.deepEqual(slots(r, 120, SUNDAY_NIGHT, MONDAY), []);
});

test('an exception replaces the weekday; an empty one closes the day', () => {
  const r = rules({
    exceptions: new Map([
      [MONDAY, hours(['15:00', '16:00'])],
      [MONDAY + 1, []],
    ]),
  });
  assert.deepEqual(slots(r, 30, SUNDAY_NIGHT, MONDAY), ['15:00', '15:30']);
  assert.deepEqual(slots(r, 30, SUNDAY_NIGHT, MONDAY + 1), []);
});

test('24:00 ends the day', () => {
  const r = rules({ weeklyHours: { mon: hours(['23:00', '24:00']) }, slotIntervalMinutes: 20 });
  assert.deepEqual(slots(r, 20, SUNDAY_NIGHT, MONDAY), ['23:00', '23:20', '23:40']);
});

test('minimum notice, to the minute', () => {
  const r = rules({ minNoticeMinutes: 60 });
  assert.deepEqual(slots(r, 30, at('2026-06-01', '08:00'), MONDAY), ['09:00', '09:30', '10:00', '10:30', '11:00', '11:30']);
  assert.deepEqual(slots(r, 30, at('2026-06-01', '08:01'), MONDAY), ['09:30', '10:00', '10:30', '11:00', '11:30']);
  assert.deepEqual(slots(rules(), 30, at('2026-06-01', '10:00'), MONDAY), ['10:00', '10:30', '11:00', '11:30']);
});

test('horizon: from today to the end of local day today + horizon; outside answers null', () => {
  const r = rules({
    horizonDays: 1,
    weeklyHours: { mon: hours(['09:00', '10:00']), tue: hours(['09:00', '10:00']), wed: hours(['09:00', '10:00']) },
  });
  const now = at('2026-06-01', '23:59');
  assert.deepEqual(freeDays({ rules: r, durationMinutes: 30, zone: UTC, now }, []).map(formatDate), ['2026-06-02']);
  assert.equal(slots(r, 30, now, MONDAY + 2), null);
  assert.equal(slots(r, 30, now, MONDAY - 1), null);
  assert.deepEqual(slots(r, 30, now, MONDAY), [], 'today is inside the window even when nothing is left');
});

test('capacity counts overlapping bookings', () => {
  const r = rules({ capacity: 2 });
  const booking = { start: at('2026-06-01', '09:00'), end: at('2026-06-01', '10:00') };
  assert.deepEqual(slots(r, 30, SUNDAY_NIGHT, MONDAY, [booking]), ['09:00', '09:30', '10:00', '10:30', '11:00', '11:30']);
  assert.deepEqual(slots(r, 30, SUNDAY_NIGHT, MONDAY, [booking, booking]), ['10:00', '10:30', '11:00', '11:30']);
  // a 90-minute candidate at 09:00 overlaps two bookings that do not overlap each other: it conflicts with two
  const apart = [
    { start: at('2026-06-01', '09:00'), end: at('2026-06-01', '09:30') },
    { start: at('2026-06-01', '10:00'), end: at('2026-06-01', '10:30') },
  ];
  assert.deepEqual(slots(r, 90, SUNDAY_NIGHT, MONDAY, apart), ['09:30', '10:00', '10:30']);
});

test('buffers: the example of docs/decisions.md §4 (60 minutes, buffer_after 30, a booking at 10:00)', () => {
  const r = rules({ bufferAfterMinutes: 30, weeklyHours: { mon: hours(['08:00', '14:00']) } });
  const booking = { start: at('2026-06-01', '10:00'), end: at('2026-06-01', '11:00') };
  const free = slots(r, 60, SUNDAY_NIGHT, MONDAY, [booking])!;
  assert.deepEqual(free, ['08:00', '08:30', '11:30', '12:00', '12:30', '13:00']);
  assert.equal(
    findFreeSlot({ rules: r, durationMinutes: 60, zone: UTC, now: SUNDAY_NIGHT }, MONDAY, 9 * 60, [booking]),
    null,
    '09:00 would end at 10:00 and its buffer reach 10:30',
  );
});

test('buffer_before reaches outside opening hours and before a booking', () => {
  const r = rules({ bufferBeforeMinutes: 30, weeklyHours: { mon: hours(['09:00', '12:00']) } });
  const booking = { start: at('2026-06-01', '11:00'), end: at('2026-06-01', '11:30') };
  // 10:00-10:30 occupies 09:30-10:30 and the booking 10:30-11:30: they touch, no overlap;
  // 11:30 would occupy 11:00-12:00, reaching into the booking
  assert.deepEqual(slots(r, 30, SUNDAY_NIGHT, MONDAY, [booking]), ['09:00', '09:30', '10:00']);
});

test('findFreeSlot: on the grid and free, else null', () => {
  const ctx = { rules: rules(), durationMinutes: 30, zone: UTC, now: SUNDAY_NIGHT };
  assert.equal(findFreeSlot(ctx, MONDAY, 9 * 60, [])?.start, at('2026-06-01', '09:00'));
  assert.equal(findFreeSlot(ctx, MONDAY, 9 * 60 + 10, []), null);
  assert.equal(findFreeSlot(ctx, MONDAY, 12 * 60, []), null);
});
