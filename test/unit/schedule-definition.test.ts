import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseImportFile } from '../../src/core/schedules/schedule-definition.js';
import { DEFAULT_FORM } from '../../src/core/forms/form-fields.js';
import { InvalidInput } from '../../src/core/errors.js';

const base = { name: 'Desk', weekly_hours: { mon: [['09:00', '12:00']] }, reasons: [{ name: 'Talk', duration_minutes: 30 }] };
const withSchedule = (extra: Record<string, unknown>) => ({ schedules: [{ ...base, ...extra }] });

test('omitted settings take the defaults of docs/decisions.md §4; form omitted gives the default form', () => {
  const [schedule] = parseImportFile({ schedules: [base] });
  assert.deepEqual(schedule!.settings, {
    slotIntervalMinutes: 15,
    minNoticeMinutes: 0,
    horizonDays: 60,
    capacity: 1,
    bufferBeforeMinutes: 0,
    bufferAfterMinutes: 0,
    // the manage link's cut-off (docs/manage-link.md): until the start
    cancelCutoffMinutes: 0,
  });
  assert.deepEqual(schedule!.form, DEFAULT_FORM);
  assert.deepEqual(schedule!.weeklyHours, { mon: [{ start: 540, end: 720 }] });
  assert.deepEqual(schedule!.reasons, [{ name: 'Talk', description: '', durationMinutes: 30 }]);
});

test('24:00 ends an interval; intervals are sorted; a form field defaults to textbox with value ""', () => {
  const [schedule] = parseImportFile(
    withSchedule({
      weekly_hours: {
        sun: [
          ['13:00', '24:00'],
          ['00:00', '01:00'],
        ],
      },
      form: { notes: { label: 'Notes', input_type: 'text' } },
    }),
  );
  assert.deepEqual(schedule!.weeklyHours.sun, [
    { start: 0, end: 60 },
    { start: 780, end: 1440 },
  ]);
  assert.deepEqual(schedule!.form, [
    { name: 'notes', label: 'Notes', formType: 'textbox', inputType: 'text', required: false, options: [], value: '' },
  ]);
});

test('every invalid file is rejected with a reason that names the place', () => {
  const cases: [unknown, RegExp][] = [
    [{}, /schedules/],
    [withSchedule({ weekly_hours: { funday: [['09:00', '10:00']] } }), /unknown weekday "funday"/],
    [withSchedule({ weekly_hours: { mon: [['09:00', '25:00']] } }), /weekly_hours\.mon\[0\].*end/],
    [withSchedule({ weekly_hours: { mon: [['09:60', '10:00']] } }), /start/],
    [withSchedule({ weekly_hours: { mon: [['10:00', '10:00']] } }), /not after/],
    [
      withSchedule({
        weekly_hours: {
          mon: [
            ['09:00', '11:00'],
            ['10:00', '12:00'],
          ],
        },
      }),
      /overlap/,
    ],
    [withSchedule({ exceptions: [{ date: '2026-02-30', hours: [] }] }), /exceptions\[0\]\.date/],
    [
      withSchedule({
        exceptions: [
          { date: '2026-12-24', hours: [] },
          { date: '2026-12-24', hours: [] },
        ],
      }),
      /twice/,
    ],
    [withSchedule({ reasons: [{ name: 'Zero', duration_minutes: 0 }] }), /duration_minutes/],
    [withSchedule({ reasons: [{ name: 'Neg', duration_minutes: -5 }] }), /duration_minutes/],
    [withSchedule({ capacity: 0 }), /capacity/],
    [withSchedule({ slot_interval_minutes: 7.5 }), /slot_interval_minutes/],
    [withSchedule({ name: '' }), /name/],
    [withSchedule({ slot_interval_minute: 15 }), /slot_interval_minute\b.*not a schedule setting/],
    [withSchedule({ form: { team: { label: 'Team', form_type: 'select' } } }), /options/],
    [withSchedule({ form: { x: { label: 'X', input_type: 'url' } } }), /input_type/],
    [withSchedule({ form: { '1x': { label: 'X' } } }), /field names/],
  ];
  for (const [document, reason] of cases) {
    assert.throws(
      () => parseImportFile(document),
      (e: unknown) => e instanceof InvalidInput && reason.test(e.message),
      JSON.stringify(document),
    );
  }
});

test('cancel_cutoff_minutes (docs/manage-link.md) is read from the import file and checked', () => {
  const [schedule] = parseImportFile({ schedules: [{ ...base, cancel_cutoff_minutes: 1440 }] });
  assert.equal(schedule!.settings.cancelCutoffMinutes, 1440);
  assert.throws(() => parseImportFile({ schedules: [{ ...base, cancel_cutoff_minutes: -1 }] }), /cancel_cutoff_minutes/);
});
