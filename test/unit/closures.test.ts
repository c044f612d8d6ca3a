// Practice-wide closures in the engine: a closed day opens nothing, whatever the weekday's hours or a date
// exception say; /days skips it; the days around it are untouched. And the snapshot's expansion of stored
// closures (first to last day, inclusive) into the set the engine reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freeDays, freeSlotsOn, openingIntervals } from '../../src/core/availability/free-slots.js';
import type { ScheduleRules } from '../../src/core/schedules/schedule.js';
import { formatDate, parseDate } from '../../src/core/time/calendar.js';
import { TimeZone } from '../../src/core/time/zone.js';
import { closedDaysOf } from '../../src/app/snapshot.js';
import { checkClosure } from '../../src/app/closures.js';

const UTC = TimeZone.of('UTC');
const MONDAY = parseDate('2026-06-01')!;
const NOW = Date.parse('2026-05-31T22:00:00Z');
const NINE_TO_TWELVE = [{ start: 9 * 60, end: 12 * 60 }];

function rules(extra: Partial<ScheduleRules> = {}): ScheduleRules {
  return {
    slotIntervalMinutes: 60,
    minNoticeMinutes: 0,
    horizonDays: 7,
    capacity: 1,
    bufferBeforeMinutes: 0,
    bufferAfterMinutes: 0,
    weeklyHours: Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, NINE_TO_TWELVE])),
    exceptions: new Map(),
    ...extra,
  };
}

test('a closed day has no opening hours and no free times, even where an exception opens it', () => {
  const open = rules({ exceptions: new Map([[MONDAY + 1, [{ start: 14 * 60, end: 15 * 60 }]]]) });
  const closed = rules({ exceptions: open.exceptions, closedDays: new Set([MONDAY, MONDAY + 1]) });
  assert.deepEqual(openingIntervals(open, MONDAY), NINE_TO_TWELVE);
  assert.deepEqual(openingIntervals(closed, MONDAY), []);
  assert.deepEqual(openingIntervals(closed, MONDAY + 1), []);
  assert.equal(freeSlotsOn({ rules: open, durationMinutes: 60, zone: UTC, now: NOW }, MONDAY, [])?.length, 3);
  assert.deepEqual(freeSlotsOn({ rules: closed, durationMinutes: 60, zone: UTC, now: NOW }, MONDAY, []) ?? [], []);
  assert.deepEqual(openingIntervals(closed, MONDAY + 2), NINE_TO_TWELVE);
});

test('/days skips the closed days and keeps the others', () => {
  const ctx = (r: ScheduleRules) => ({ rules: r, durationMinutes: 60, zone: UTC, now: NOW });
  const days = (r: ScheduleRules) => freeDays(ctx(r), []).map(formatDate);
  const all = days(rules());
  const closed = days(rules({ closedDays: new Set([MONDAY + 2, MONDAY + 3]) }));
  assert.ok(all.includes('2026-06-03') && all.includes('2026-06-04'));
  assert.deepEqual(
    closed,
    all.filter((d) => d !== '2026-06-03' && d !== '2026-06-04'),
  );
});

test('stored closures become the set of local days, first to last inclusive', () => {
  const days = closedDaysOf([
    { id: 1, firstDay: '2026-12-24', lastDay: '2026-12-26', label: 'Christmas', createdAt: 0 },
    { id: 2, firstDay: '2027-01-01', lastDay: '2027-01-01', label: '', createdAt: 0 },
  ]);
  assert.deepEqual([...days].sort((a, b) => a - b).map(formatDate), ['2026-12-24', '2026-12-25', '2026-12-26', '2027-01-01']);
});

test('a closure is checked: real dates, last not before first, at most a year, a one-line label', () => {
  assert.deepEqual(checkClosure({ firstDay: '2026-12-24', lastDay: '', label: ' Christmas Eve ' }), {
    firstDay: '2026-12-24',
    lastDay: '2026-12-24',
    label: 'Christmas Eve',
  });
  assert.throws(() => checkClosure({ firstDay: '2026-02-30', lastDay: '', label: '' }), { path: 'first_day' });
  assert.throws(() => checkClosure({ firstDay: '2026-12-24', lastDay: '2026-12-23', label: '' }), { path: 'last_day' });
  assert.throws(() => checkClosure({ firstDay: '2026-01-01', lastDay: '2027-06-01', label: '' }), { path: 'last_day' });
  assert.throws(() => checkClosure({ firstDay: '2026-12-24', lastDay: '', label: 'a\nb' }), { path: 'label' });
});
