// Named cases where schedulers go wrong (docs/decisions.md §4), each with a fixed clock and its expected answer
// worked out by hand. Europe/Berlin 2026: spring forward 2026-03-29 02:00 CET -> 03:00 CEST (01:00Z),
// fall back 2026-10-25 03:00 CEST -> 02:00 CET (01:00Z).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freeDays, freeSlotsOn, findFreeSlot, type AvailabilityContext, type BookedTime } from '../../src/core/availability/free-slots.js';
import type { Interval, ScheduleRules } from '../../src/core/schedules/schedule.js';
import { WEEKDAYS, formatClock, formatDate, formatUtc, parseClock, parseDate } from '../../src/core/time/calendar.js';
import { TimeZone } from '../../src/core/time/zone.js';

const MINUTE = 60_000;
const utc = (iso: string) => Date.parse(iso);
const day = (date: string) => parseDate(date)!;
const hours = (...pairs: [string, string][]): Interval[] =>
  pairs.map(([a, b]) => ({ start: parseClock(a)!, end: parseClock(b, { allow24: true })! }));

interface Case {
  name: string;
  zone?: string;
  now: string;
  rules?: Partial<Omit<ScheduleRules, 'weeklyHours' | 'exceptions'>>;
  /** the same hours every day */
  open: Interval[];
  exceptions?: [string, Interval[]][];
  duration: number;
  bookings?: [string, string][];
  date: string;
  /** the free times of `date`: local 'HH:MM' = UTC instant */
  expected: string[];
}

function contextOf(c: Case): AvailabilityContext {
  const rules: ScheduleRules = {
    slotIntervalMinutes: 15,
    minNoticeMinutes: 0,
    horizonDays: 60,
    capacity: 1,
    bufferBeforeMinutes: 0,
    bufferAfterMinutes: 0,
    ...c.rules,
    weeklyHours: Object.fromEntries(WEEKDAYS.map((d) => [d, c.open])),
    exceptions: new Map((c.exceptions ?? []).map(([date, iv]) => [day(date), iv])),
  };
  return { rules, durationMinutes: c.duration, zone: TimeZone.of(c.zone ?? 'Europe/Berlin'), now: utc(c.now) };
}

const bookedOf = (c: Case): BookedTime[] => (c.bookings ?? []).map(([s, e]) => ({ start: utc(s), end: utc(e) }));

const CASES: Case[] = [
  {
    name: 'spring-forward gap: 02:00 and 02:30 do not exist and are never offered',
    now: '2026-03-28T12:00:00Z',
    open: hours(['01:00', '05:00']),
    rules: { slotIntervalMinutes: 30 },
    duration: 30,
    date: '2026-03-29',
    expected: ['01:00=00:00Z', '01:30=00:30Z', '03:00=01:00Z', '03:30=01:30Z', '04:00=02:00Z', '04:30=02:30Z'],
  },
  {
    name: 'spring-forward gap: a 60-minute booking at 01:30 lasts 60 real minutes (to 03:30) and blocks exactly what it overlaps',
    now: '2026-03-28T12:00:00Z',
    open: hours(['01:00', '05:00']),
    rules: { slotIntervalMinutes: 30 },
    duration: 30,
    date: '2026-03-29',
    bookings: [['2026-03-29T00:30:00Z', '2026-03-29T01:30:00Z']],
    expected: ['01:00=00:00Z', '03:30=01:30Z', '04:00=02:00Z', '04:30=02:30Z'],
  },
  {
    name: 'spring-forward gap: an interval that starts in the gap starts when the clock jumps; its grid still counts from 02:30',
    now: '2026-03-28T12:00:00Z',
    open: hours(['02:30', '04:00']),
    rules: { slotIntervalMinutes: 45 },
    duration: 45,
    date: '2026-03-29',
    expected: ['03:15=01:15Z'],
  },
  {
    name: 'spring-forward gap: an interval ending in the gap ends when the clock jumps (01:00-02:30 is one real hour)',
    now: '2026-03-28T12:00:00Z',
    open: hours(['01:00', '02:30']),
    rules: { slotIntervalMinutes: 30 },
    duration: 60,
    date: '2026-03-29',
    expected: ['01:00=00:00Z'],
  },
  {
    name: 'fall-back overlap: each wall time once, meaning its first occurrence',
    now: '2026-10-24T12:00:00Z',
    open: hours(['01:30', '04:00']),
    rules: { slotIntervalMinutes: 30 },
    duration: 30,
    date: '2026-10-25',
    expected: ['01:30=23:30Z', '02:00=00:00Z', '02:30=00:30Z', '03:00=02:00Z', '03:30=02:30Z'],
  },
  {
    name: 'fall-back overlap: 02:00-03:00 is two real hours, so a 120-minute appointment fits it',
    now: '2026-10-24T12:00:00Z',
    open: hours(['02:00', '03:00']),
    rules: { slotIntervalMinutes: 60 },
    duration: 120,
    date: '2026-10-25',
    expected: ['02:00=00:00Z'],
  },
  {
    name: 'fall-back overlap: a booking in the second 02:30 (01:30Z) blocks the first-occurrence times it overlaps, not the first 02:30',
    now: '2026-10-24T12:00:00Z',
    open: hours(['01:30', '04:00']),
    rules: { slotIntervalMinutes: 30 },
    duration: 30,
    date: '2026-10-25',
    bookings: [['2026-10-25T01:30:00Z', '2026-10-25T02:30:00Z']],
    expected: ['01:30=23:30Z', '02:00=00:00Z', '02:30=00:30Z', '03:30=02:30Z'],
  },
  {
    name: "24:00 ends: the day's last hour can be booked up to midnight, not past it",
    now: '2026-06-01T06:00:00Z',
    open: hours(['22:00', '24:00']),
    rules: { slotIntervalMinutes: 30 },
    duration: 60,
    date: '2026-06-02',
    expected: ['22:00=20:00Z', '22:30=20:30Z', '23:00=21:00Z'],
  },
  {
    name: '24:00 ends on a date exception',
    now: '2026-06-01T06:00:00Z',
    open: hours(['09:00', '10:00']),
    exceptions: [['2026-06-02', hours(['23:00', '24:00'])]],
    rules: { slotIntervalMinutes: 60 },
    duration: 60,
    date: '2026-06-02',
    expected: ['23:00=21:00Z'],
  },
  {
    name: "the grid is counted from each opening interval's start",
    now: '2026-06-01T06:00:00Z',
    open: hours(['09:10', '10:00'], ['10:05', '11:00']),
    rules: { slotIntervalMinutes: 20 },
    duration: 10,
    date: '2026-06-02',
    expected: ['09:10=07:10Z', '09:30=07:30Z', '09:50=07:50Z', '10:05=08:05Z', '10:25=08:25Z', '10:45=08:45Z'],
  },
  {
    name: 'notice to the minute: now 08:00:30 + 60 minutes allows 09:01, not 09:00',
    now: '2026-06-01T06:00:30Z',
    open: hours(['09:00', '09:05']),
    rules: { slotIntervalMinutes: 1, minNoticeMinutes: 60 },
    duration: 1,
    date: '2026-06-01',
    expected: ['09:01=07:01Z', '09:02=07:02Z', '09:03=07:03Z', '09:04=07:04Z'],
  },
  {
    name: 'notice to the minute: a start exactly at now + notice is allowed',
    now: '2026-06-01T06:00:00Z',
    open: hours(['09:00', '09:03']),
    rules: { slotIntervalMinutes: 1, minNoticeMinutes: 60 },
    duration: 1,
    date: '2026-06-01',
    expected: ['09:00=07:00Z', '09:01=07:01Z', '09:02=07:02Z'],
  },
  {
    name: 'horizon: the last day is today + horizon, up to its last minute',
    now: '2026-06-01T21:59:00Z',
    open: hours(['23:58', '24:00']),
    rules: { slotIntervalMinutes: 1, horizonDays: 2 },
    duration: 1,
    date: '2026-06-03',
    expected: ['23:58=21:58Z', '23:59=21:59Z'],
  },
  {
    name: 'buffers reach outside opening hours: a 07:00-08:00 booking with buffer_after 30 blocks 08:00 (docs/decisions.md §4 example)',
    now: '2026-06-01T04:00:00Z',
    open: hours(['08:00', '13:00']),
    rules: { slotIntervalMinutes: 30, bufferAfterMinutes: 30 },
    duration: 60,
    date: '2026-06-01',
    bookings: [
      ['2026-06-01T05:00:00Z', '2026-06-01T06:00:00Z'],
      ['2026-06-01T08:00:00Z', '2026-06-01T09:00:00Z'],
    ],
    expected: ['08:30=06:30Z', '11:30=09:30Z', '12:00=10:00Z'],
  },
  {
    name: 'buffers: the first and last times of a day are offered though their buffers lie outside opening hours',
    now: '2026-06-01T04:00:00Z',
    open: hours(['08:00', '10:00']),
    rules: { slotIntervalMinutes: 60, bufferBeforeMinutes: 45, bufferAfterMinutes: 45 },
    duration: 60,
    date: '2026-06-01',
    expected: ['08:00=06:00Z', '09:00=07:00Z'],
  },
  {
    name: 'mixed durations with capacity 2: a time is taken only where two bookings overlap it',
    now: '2026-06-01T04:00:00Z',
    open: hours(['09:00', '11:00']),
    rules: { capacity: 2 },
    duration: 30,
    date: '2026-06-01',
    bookings: [
      ['2026-06-01T07:00:00Z', '2026-06-01T08:00:00Z'],
      ['2026-06-01T07:30:00Z', '2026-06-01T07:45:00Z'],
    ],
    expected: ['09:00=07:00Z', '09:45=07:45Z', '10:00=08:00Z', '10:15=08:15Z', '10:30=08:30Z'],
  },
  {
    name: "capacity 2 with buffers: a time is taken where two bookings' occupied spans (buffers included) overlap it",
    now: '2026-06-01T04:00:00Z',
    open: hours(['09:00', '11:00']),
    rules: { capacity: 2, slotIntervalMinutes: 30, bufferBeforeMinutes: 15 },
    duration: 30,
    date: '2026-06-01',
    bookings: [
      ['2026-06-01T07:00:00Z', '2026-06-01T07:30:00Z'],
      ['2026-06-01T07:45:00Z', '2026-06-01T08:45:00Z'],
    ],
    expected: ['09:00=07:00Z', '10:00=08:00Z', '10:30=08:30Z'],
  },
  {
    name: 'midnight gap (Sao Paulo 2018-11-04, 00:00 -> 01:00): the day starts at 01:00 and 00:00-01:00 is closed',
    zone: 'America/Sao_Paulo',
    now: '2018-11-03T12:00:00Z',
    open: hours(['00:00', '02:00']),
    rules: { slotIntervalMinutes: 30 },
    duration: 30,
    date: '2018-11-04',
    expected: ['01:00=03:00Z', '01:30=03:30Z'],
  },
  {
    name: "Lord Howe's 30-minute fall-back (2026-04-05 02:00 -> 01:30): 01:30-01:59 are offered once",
    zone: 'Australia/Lord_Howe',
    now: '2026-04-04T00:00:00Z',
    open: hours(['01:00', '02:30']),
    rules: { slotIntervalMinutes: 30 },
    duration: 30,
    date: '2026-04-05',
    expected: ['01:00=14:00Z', '01:30=14:30Z', '02:00=15:30Z'],
  },
];

const shown = (slots: readonly { minute: number; start: number }[]) =>
  slots.map((s) => `${formatClock(s.minute)}=${formatUtc(s.start).slice(11, 16)}Z`);

for (const c of CASES) {
  test(c.name, () => {
    const ctx = contextOf(c);
    const slots = freeSlotsOn(ctx, day(c.date), bookedOf(c));
    assert.deepEqual(shown(slots ?? []), c.expected);
    // the other three views of the one rule agree with it
    assert.equal(freeDays(ctx, bookedOf(c)).includes(day(c.date)), c.expected.length > 0);
    for (let minute = 0; minute < 1440; minute++) {
      const found = findFreeSlot(ctx, day(c.date), minute, bookedOf(c));
      assert.deepEqual(found, slots!.find((s) => s.minute === minute) ?? null, formatClock(minute));
    }
  });
}

test('spring-forward: a 60-minute appointment starting 01:30 ends at 03:30 local, 60 real minutes later', () => {
  const ctx = contextOf({ ...CASES[0]!, duration: 60 });
  const slot = findFreeSlot(ctx, day('2026-03-29'), parseClock('01:30')!, [])!;
  assert.equal(formatUtc(slot.start), '2026-03-29T00:30:00Z');
  assert.equal(formatClock(ctx.zone.localMinuteOf(slot.start + 60 * MINUTE)), '03:30');
});

test('horizon: the day after today + horizon is outside the window (null), the last one inside', () => {
  const c = CASES.find((x) => x.name.startsWith('horizon'))!;
  const ctx = contextOf(c);
  assert.equal(freeSlotsOn(ctx, day('2026-06-04'), []), null);
  assert.equal(freeSlotsOn(ctx, day('2026-05-31'), []), null);
  assert.deepEqual(freeDays(ctx, []).map(formatDate), ['2026-06-01', '2026-06-02', '2026-06-03']);
  // one minute later it is 2026-06-02 in Berlin: the window moves by a whole day
  const later = { ...ctx, now: ctx.now + 60_000 };
  assert.deepEqual(freeDays(later, []).map(formatDate), ['2026-06-02', '2026-06-03', '2026-06-04']);
  // and 23:58 today has passed: the first day still has 23:59
  const lastMinutes = { ...ctx, now: utc('2026-06-01T21:58:30Z') };
  assert.deepEqual(shown(freeSlotsOn(lastMinutes, day('2026-06-01'), [])!), ['23:59=21:59Z']);
});
