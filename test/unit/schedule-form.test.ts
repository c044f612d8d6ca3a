import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FormProblems, formFromRows, scheduleFromForm, scheduleValues } from '../../src/http/admin/schedule-form.js';

const form = (extra: Record<string, string>) => ({ ...scheduleValues(null), name: 'Desk', ...extra });

/** The one problem the form has: its field (path) and reason. */
function invalid(run: () => unknown): { path: string; reason: string } {
  const problems = allProblems(run);
  assert.equal(Object.keys(problems).length, 1, JSON.stringify(problems));
  const [path, reason] = Object.entries(problems)[0]!;
  return { path, reason };
}

function allProblems(run: () => unknown): Readonly<Record<string, string>> {
  try {
    run();
  } catch (error) {
    if (error instanceof FormProblems) return error.problems;
    throw error;
  }
  assert.fail('no FormProblems');
}

test('interval text splits at the dash, with or without spaces, hyphen or en dash', () => {
  const schedule = scheduleFromForm(
    form({ 'weekly_hours.mon': '13:00–17:00, 09:00 - 12:00', 'weekly_hours.tue': '08:00 -09:00; 10:00- 11:00' }),
  );
  assert.deepEqual(schedule.weeklyHours.mon, [
    { start: 540, end: 720 },
    { start: 780, end: 1020 },
  ]);
  assert.deepEqual(schedule.weeklyHours.tue, [
    { start: 480, end: 540 },
    { start: 600, end: 660 },
  ]);
  assert.deepEqual(schedule.weeklyHours.wed, []);
});

test('an error names the form field and gives the reason without a path', () => {
  const hours = invalid(() => scheduleFromForm(form({ 'weekly_hours.mon': '12:00-09:00' })));
  assert.equal(hours.path, 'weekly_hours.mon');
  assert.equal(hours.reason, 'end 09:00 is not after start 12:00');
  const setting = invalid(() => scheduleFromForm(form({ capacity: '0' })));
  assert.equal(setting.path, 'capacity');
  assert.match(setting.reason, /^must be an integer from 1/);
  const exception = invalid(() => scheduleFromForm(form({ exceptions: '2026-02-30 closed' })));
  assert.equal(exception.path, 'exceptions');
  const row = {
    row: 2,
    position: 1,
    name: 'x',
    label: '',
    formType: 'select',
    inputType: 'text',
    required: false,
    options: '',
    remove: false,
  };
  const field = invalid(() => formFromRows([row]));
  assert.equal(field.path, 'f2_options');
  assert.equal(field.reason, 'a select needs a non-empty list of non-empty strings');
});

test('hours as people type them: "8-12, 13:30-17", "8.30-12"', () => {
  const schedule = scheduleFromForm(
    form({ 'weekly_hours.mon': '8-12, 13:30-17', 'weekly_hours.tue': '8.30 - 12', exceptions: '2026-12-24 9-12' }),
  );
  assert.deepEqual(schedule.weeklyHours.mon, [
    { start: 480, end: 720 },
    { start: 810, end: 1020 },
  ]);
  assert.deepEqual(schedule.weeklyHours.tue, [{ start: 510, end: 720 }]);
  assert.deepEqual(schedule.exceptions[0]!.hours, [{ start: 540, end: 720 }]);
  // still refused: not a time
  assert.deepEqual(Object.keys(allProblems(() => scheduleFromForm(form({ 'weekly_hours.mon': '8-125' })))), ['weekly_hours.mon']);
});

test('every problem of the form at once, each under its field', () => {
  const problems = allProblems(() =>
    scheduleFromForm(form({ name: ' ', capacity: '0', 'weekly_hours.mon': '12:00-09:00', exceptions: '24.12.2026 closed' })),
  );
  assert.deepEqual(Object.keys(problems).sort(), ['capacity', 'exceptions', 'name', 'weekly_hours.mon']);
  const row = (i: number, name: string, formType: string) => ({
    row: i,
    position: i + 1,
    name,
    label: '',
    formType,
    inputType: 'text',
    required: false,
    options: '',
    remove: false,
  });
  const rows = allProblems(() => formFromRows([row(0, 'size', 'select'), row(1, 'size', 'textbox'), row(2, 'colour', 'select')]));
  assert.deepEqual(Object.keys(rows).sort(), ['f0_options', 'f1_name', 'f2_options']);
});

test('a long malformed interval is rejected in linear time', () => {
  const started = performance.now();
  const error = invalid(() => scheduleFromForm(form({ 'weekly_hours.mon': `0${' '.repeat(100_000)}0 x-` })));
  assert.equal(error.path, 'weekly_hours.mon');
  assert.ok(performance.now() - started < 1000);
});
