// Reminders and contact details: the admin form's reminder text, the stale rule of a reminder, which
// reminders a booking queues, and the contact settings' parsers (docs/reminders.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  FormProblems,
  reminderMinutesFromText,
  reminderMinutesToText,
  scheduleFromForm,
  scheduleValues,
} from '../../src/http/admin/schedule-form.js';
import { reminderDueTimes, staleMessageReason } from '../../src/core/messages.js';
import { parseOperatorSetting } from '../../src/core/settings.js';
import { InvalidInput } from '../../src/core/errors.js';
import { contactBlock } from '../../src/mail/templates.js';

const form = (reminders: string) => ({ ...scheduleValues(null), name: 'Desk', reminder_minutes_before: reminders });

function problems(run: () => unknown): Readonly<Record<string, string>> {
  try {
    run();
  } catch (error) {
    if (error instanceof FormProblems) return error.problems;
    throw error;
  }
  return assert.fail('no FormProblems');
}

test('reminders are typed as people write them, and shown back the same way', () => {
  assert.deepEqual(reminderMinutesFromText('1440, 120'), [1440, 120]);
  assert.deepEqual(reminderMinutesFromText('24 hours, 2 hours'), [1440, 120]);
  assert.deepEqual(reminderMinutesFromText('1 day; 30 min\n1.5h, 2 weeks'), [1440, 30, 90, 20_160]);
  assert.deepEqual(reminderMinutesFromText(' '), []);
  assert.equal(reminderMinutesToText([2880, 1440, 120, 90, 60, 1]), '2 days, 24 hours, 2 hours, 90 minutes, 1 hour, 1 minute');
  // what the page shows is read back to the same minutes
  assert.deepEqual(reminderMinutesFromText(reminderMinutesToText([2880, 1440, 90])), [2880, 1440, 90]);
  assert.deepEqual(scheduleFromForm(form('2 hours, 1 day')).reminderMinutesBefore, [1440, 120], 'stored largest first');
  assert.deepEqual(scheduleFromForm(form('')).reminderMinutesBefore, []);
});

test('a wrong reminder is named beside its field, in words', () => {
  assert.deepEqual(
    problems(() => scheduleFromForm(form('24 hours, 2 fortnights'))),
    {
      reminder_minutes_before: '"2 fortnights" is not a time before the appointment: write e.g. 24 hours, 2 hours or 30 minutes',
    },
  );
  assert.match(problems(() => scheduleFromForm(form('0 hours'))).reminder_minutes_before!, /at least 1 minute/);
  assert.match(problems(() => scheduleFromForm(form('0.5 minutes'))).reminder_minutes_before!, /whole number of minutes/);
  assert.match(problems(() => scheduleFromForm(form('24 hours, 1 day'))).reminder_minutes_before!, /1440 minutes is listed twice/);
  assert.match(problems(() => scheduleFromForm(form('2 years'))).reminder_minutes_before!, /is not a time before/);
  assert.match(problems(() => scheduleFromForm(form('60 weeks'))).reminder_minutes_before!, /from 1 to 525600 \(a year\)/);
  assert.match(problems(() => scheduleFromForm(form('1,2,3,4,5,6'))).reminder_minutes_before!, /at most 5 reminders/);
});

test('a reminder goes only while the booking stands and before the appointment starts', () => {
  const start = 10_000_000;
  const booked = { cancelled: false, start, end: start + 1_800_000 };
  assert.equal(staleMessageReason('booking_reminder', booked, start - 1), null);
  assert.match(staleMessageReason('booking_reminder', booked, start)!, /had begun before the reminder went out/);
  assert.match(staleMessageReason('booking_reminder', { ...booked, cancelled: true }, start - 60_000)!, /cancelled/);
});

test('a reminder due before the booking is made is not queued; due times are instants before the start', () => {
  const start = Date.UTC(2026, 9, 25, 8); // the morning after the DST change: 24 hours is an instant, not a wall time
  assert.deepEqual(reminderDueTimes(start, [1440, 120], start - 48 * 3_600_000), [start - 86_400_000, start - 7_200_000]);
  assert.deepEqual(reminderDueTimes(start, [1440, 120], start - 3_600_000), [], 'booked an hour ahead: none');
  assert.deepEqual(reminderDueTimes(start, [1440, 120], start - 7_200_000), [], 'due exactly at the booking: not queued');
  assert.deepEqual(reminderDueTimes(start, [1440, 120], start - 3 * 3_600_000), [start - 7_200_000]);
});

test('contact settings: one line, sane length, the website an http(s) URL; empty clears', () => {
  assert.equal(parseOperatorSetting('installation.phone', ' +49 30 1234567 '), '+49 30 1234567');
  assert.equal(parseOperatorSetting('installation.phone', ''), '');
  assert.equal(parseOperatorSetting('installation.address', 'Hauptstraße 1, 10115 Berlin'), 'Hauptstraße 1, 10115 Berlin');
  assert.equal(parseOperatorSetting('installation.website', 'https://practice.example/team'), 'https://practice.example/team');
  assert.equal(parseOperatorSetting('installation.website', ''), '');
  for (const [key, value, reason] of [
    ['installation.phone', 'call us', /must contain a phone number/],
    ['installation.phone', '1'.repeat(41), /at most 40 characters/],
    ['installation.phone', '030\n1234', /single line/],
    ['installation.address', 'Street 1\r\nBcc: x@example.com', /single line/],
    ['installation.address', 'x'.repeat(201), /at most 200 characters/],
    ['installation.website', 'practice.example', /https:\/\//],
    ['installation.website', 'javascript:alert(1)', /must start with https:\/\/ or http:\/\//],
    ['installation.website', 'ftp://practice.example', /must start with https:\/\/ or http:\/\//],
    ['installation.website', 'https://user:pw@practice.example', /user name or password/],
  ] as const) {
    assert.throws(
      () => parseOperatorSetting(key, value),
      (error: unknown) => error instanceof InvalidInput && reason.test(error.message) && error.message.startsWith(key),
      `${key} ${JSON.stringify(value)}`,
    );
  }
});

test('the contact block lists what is set, escapes HTML, links only an http(s) website', () => {
  assert.deepEqual(contactBlock({ phone: '', address: '', website: '' }), { text: [], html: [] });
  const block = contactBlock({ phone: '+49 30 1', address: '<b>Main</b> St', website: 'https://x.example/?a=1&b=2' });
  assert.deepEqual(block.text, [
    '',
    'How to reach us:',
    '  Phone:   +49 30 1',
    '  Address: <b>Main</b> St',
    '  Website: https://x.example/?a=1&b=2',
  ]);
  assert.ok(block.html[0]!.includes('&lt;b&gt;Main&lt;/b&gt; St'));
  assert.ok(block.html[0]!.includes('<a href="https://x.example/?a=1&amp;b=2">'));
  assert.ok(block.html[0]!.includes('<a href="tel:+49301">'));
  assert.ok(!contactBlock({ phone: '', address: '', website: 'javascript:alert(1)' }).html[0]!.includes('<a'));
});
