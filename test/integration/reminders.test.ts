// Reminders (docs/reminders.md) and the practice's contact details in customer mail: a real SMTP server on
// loopback receives what the outbox worker sends, driven by a clock the test moves. SQLite and PostgreSQL.
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, deskSchedule, testInstallation, testClock, type TestInstallation } from '../support/installation.js';
import { startOutboxWorker, type OutboxWorker } from '../../src/app/outbox-delivery.js';
import { cancelBooking } from '../../src/app/bookings.js';
import { listMessages } from '../../src/app/outbox.js';
import { setOperatorSetting } from '../../src/app/installation.js';
import { importSchedules } from '../../src/app/schedules.js';
import { getSchedule, updateSchedule } from '../../src/app/admin-schedules.js';
import { InvalidInput } from '../../src/core/errors.js';
import { TestSmtpServer, messageIdOf, parseIcs, parseMime, partOf, until, type ReceivedMail } from './mail-support.js';

// Monday 2026-06-01 06:00Z = 08:00 in Berlin (UTC+02:00)
const NOW = Date.UTC(2026, 5, 1, 6, 0);
const HOUR = 3_600_000;

const SCHEDULE = deskSchedule({
  name: 'Dr. Remind',
  capacity: 20,
  weekly_hours: ALL_WEEK([['07:00', '18:00']]),
  reasons: [{ name: 'Check-up', duration_minutes: 30 }],
  reminder_minutes_before: [120, 1440],
  form: {
    first_name: { label: 'First name', input_type: 'text', required: true },
    email: { label: 'E-mail', input_type: 'email', required: true },
  },
});

const CONTACT = { phone: '+49 30 1234567', address: 'Hauptstraße 1, 10115 Berlin', website: 'https://practice.example' };

describeEachDatabase('reminders', (dialect) => {
  let inst: TestInstallation;
  let smtp: TestSmtpServer;
  const workers: OutboxWorker[] = [];
  const clock = testClock(NOW);

  beforeEach(async () => {
    inst = await testInstallation(dialect, { now: NOW, schedules: [SCHEDULE] });
    await setOperatorSetting(inst.db, 'installation.phone', CONTACT.phone);
    await setOperatorSetting(inst.db, 'installation.address', CONTACT.address);
    await setOperatorSetting(inst.db, 'installation.website', CONTACT.website);
    smtp = await TestSmtpServer.start();
    clock.now = NOW;
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    await smtp.down();
    await inst.close();
  });

  const worker = () => {
    const w = startOutboxWorker({ db: inst.db, smtpUrl: smtp.url, giveUpAfterMs: 72 * HOUR, pollIntervalMs: 20, clock });
    workers.push(w);
    return w;
  };

  const book = async (slot: string, who: string) => {
    const res = await inst.api({
      method: 'POST',
      url: '/api/bookings',
      payload: {
        schedule: inst.schedules[0]!.id,
        reason: inst.schedules[0]!.reasons[0]!.id,
        slot,
        submission: { first_name: who, email: `${who}@example.com` },
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().booking_details_id as string;
  };

  const reminders = async (detailsId: string) =>
    (await listMessages(inst.db, { detailsId })).filter((m) => m.kind === 'booking_reminder').sort((a, b) => a.id - b.id);
  const subjectOf = (mail: ReceivedMail) => parseMime(mail.raw).headers.get('subject') ?? '';
  const received = (who: string) => smtp.received.filter((m) => m.envelopeTo.includes(`${who}@example.com`));
  const settled = async () => (await listMessages(inst.db)).every((m) => ['sent', 'skipped', 'failed'].includes(m.state));

  test('each reminder arrives at its time, not before, with the local time, the contact details and the .ics of the confirmation', async () => {
    // Wednesday 10:00 Berlin = 08:00Z: reminders due Tuesday 08:00Z (24 h) and Wednesday 06:00Z (2 h)
    const detailsId = await book('2026-06-03 10:00:00', 'ada');
    const start = Date.UTC(2026, 5, 3, 8, 0);
    assert.deepEqual(
      (await reminders(detailsId)).map((m) => m.nextAttemptAt),
      [start - 24 * HOUR, start - 2 * HOUR],
      'queued with the booking, each due at its time',
    );
    const w = worker();
    await until('the confirmation arrived', () => received('ada').length === 1);
    // recorded before the clock jumps a day (a claim that the jump expires would be taken again)
    await until(
      'the confirmation and the notification recorded',
      async () => (await listMessages(inst.db, { detailsId })).filter((m) => m.state === 'sent').length === 2,
    );
    const confirmation = received('ada')[0]!;
    assert.match(subjectOf(confirmation), /^Appointment confirmed/);
    for (const value of Object.values(CONTACT))
      assert.ok(partOf(confirmation.raw, 'text/plain').body.includes(value), `confirmation: ${value}`);

    // a millisecond before its time, nothing goes (runOnce: one whole claim-and-send, no waiting on timers)
    clock.now = start - 24 * HOUR - 1;
    await w.runOnce();
    assert.equal(received('ada').length, 1, 'no reminder before its time');

    clock.now = start - 24 * HOUR;
    await until('the 24-hour reminder arrived', () => received('ada').length === 2);
    const reminder = received('ada')[1]!;
    assert.match(subjectOf(reminder), /^Reminder: Check-up, Wednesday, 3 June 2026 10:00$/);
    const text = partOf(reminder.raw, 'text/plain').body;
    assert.ok(text.includes('Wednesday, 3 June 2026, 10:00–10:30 (Europe/Berlin, UTC+02:00)'), text);
    assert.ok(text.includes('Check-up') && text.includes('Dr. Remind'), 'reason and schedule');
    for (const value of Object.values(CONTACT)) assert.ok(text.includes(value), `reminder text: ${value}`);
    const html = partOf(reminder.raw, 'text/html').body;
    assert.ok(html.includes(`<a href="${CONTACT.website}">`), 'the website is a link');
    assert.ok(html.includes('Hauptstraße 1, 10115 Berlin'));

    const ics = parseIcs(partOf(reminder.raw, 'text/calendar').body);
    const confirmationIcs = parseIcs(partOf(confirmation.raw, 'text/calendar').body);
    assert.equal(ics.get('METHOD'), 'REQUEST');
    assert.equal(ics.get('UID'), detailsId);
    assert.equal(ics.get('UID'), confirmationIcs.get('UID'), 'the same event as the confirmation');
    assert.equal(ics.get('SEQUENCE'), confirmationIcs.get('SEQUENCE'), 'unchanged booking, unchanged SEQUENCE');
    assert.equal(ics.get('DTSTART'), '20260603T080000Z');
    assert.equal(ics.get('LOCATION'), CONTACT.address);
    assert.notEqual(messageIdOf(reminder), messageIdOf(confirmation));
    assert.match(messageIdOf(reminder), /^<outbox-\d+\./);

    await until('the 24-hour reminder recorded', async () => (await reminders(detailsId))[0]!.state === 'sent');
    clock.now = start - 2 * HOUR;
    await until('the 2-hour reminder arrived', () => received('ada').length === 3);
    assert.match(subjectOf(received('ada')[2]!), /^Reminder: /);
    await until('both reminders recorded as sent', async () => (await reminders(detailsId)).every((m) => m.state === 'sent'));
  });

  test('two workers over the same outbox send each reminder exactly once', async () => {
    const people = Array.from({ length: 12 }, (_, i) => `p${i}`);
    // all at Tuesday 12:00 Berlin (10:00Z): reminders due Monday 10:00Z and Tuesday 08:00Z
    for (const who of people) await book('2026-06-02 12:00:00', who);
    clock.now = Date.UTC(2026, 5, 2, 9, 0); // every message due at once, none stale
    worker();
    worker();
    await until('all settled', settled);
    const reminderMails = smtp.received.filter((m) => subjectOf(m).startsWith('Reminder:'));
    assert.equal(reminderMails.length, people.length * 2, 'two reminders per booking');
    const ids = reminderMails.map(messageIdOf);
    assert.equal(new Set(ids).size, ids.length, 'no Message-ID twice');
    for (const who of people) assert.equal(received(who).filter((m) => subjectOf(m).startsWith('Reminder:')).length, 2, who);
  });

  test('no reminder for a cancelled booking; the cancellation carries the contact details', async () => {
    const detailsId = await book('2026-06-03 10:00:00', 'bob');
    assert.equal(await cancelBooking(inst.db, detailsId, NOW + 60_000), true);
    clock.now = Date.UTC(2026, 5, 3, 7, 0); // both reminders due, the appointment still ahead
    worker();
    await until('all settled', settled);
    assert.deepEqual(
      (await reminders(detailsId)).map((m) => `${m.state}: ${m.skipReason}`),
      ['skipped: the booking was cancelled before the reminder was due', 'skipped: the booking was cancelled before the reminder was due'],
    );
    const subjects = received('bob').map(subjectOf);
    assert.deepEqual(
      subjects.map((s) => s.split(':')[0]),
      ['Appointment cancelled'],
      'only the cancellation (the confirmation of a cancelled booking is skipped too)',
    );
    const cancellation = received('bob')[0]!;
    for (const value of Object.values(CONTACT)) assert.ok(partOf(cancellation.raw, 'text/plain').body.includes(value), value);
  });

  test('a reminder due before the booking was made is not queued', async () => {
    // Monday 12:00 Berlin = 10:00Z, booked at 06:00Z: the 24-hour reminder was due yesterday, the 2-hour one at 08:00Z
    const soon = await book('2026-06-01 12:00:00', 'cy');
    assert.deepEqual(
      (await reminders(soon)).map((m) => m.nextAttemptAt),
      [Date.UTC(2026, 5, 1, 8, 0)],
    );
    // Monday 09:30 Berlin = 07:30Z: both would have been due before 06:00Z
    const sooner = await book('2026-06-01 09:30:00', 'dee');
    assert.deepEqual(await reminders(sooner), []);
  });

  test('a reminder that could not go out before the appointment started is dropped as skipped', async () => {
    const detailsId = await book('2026-06-02 09:00:00', 'eve');
    // the worker starts only after the appointment has begun (it was down over both reminders' times)
    clock.now = Date.UTC(2026, 5, 2, 7, 0);
    worker();
    await until('all settled', settled);
    assert.deepEqual(
      (await reminders(detailsId)).map((m) => `${m.state}: ${m.skipReason}`),
      [
        'skipped: the appointment had begun before the reminder went out',
        'skipped: the appointment had begun before the reminder went out',
      ],
    );
    assert.equal(received('eve').filter((m) => subjectOf(m).startsWith('Reminder:')).length, 0);
  });

  test('a change of the reminder set applies to bookings made afterwards', async () => {
    const before = await book('2026-06-04 10:00:00', 'fay');
    const stored = await getSchedule(inst.db, inst.schedules[0]!.id);
    await updateSchedule(inst.db, stored.id, { ...stored, reminderMinutesBefore: [60] });
    const afterChange = await book('2026-06-04 11:00:00', 'gus');
    assert.equal((await reminders(before)).length, 2, 'queued reminders keep their times');
    assert.deepEqual(
      (await reminders(afterChange)).map((m) => m.nextAttemptAt),
      [Date.UTC(2026, 5, 4, 8, 0)],
    );
  });

  test('import: reminder_minutes_before accepted, bad values reject the whole file with a reason', async () => {
    const imported = await importSchedules(
      inst.db,
      { schedules: [{ ...SCHEDULE, name: 'Two', reminder_minutes_before: [30, 2880] }] },
      NOW,
    );
    assert.deepEqual((await getSchedule(inst.db, imported.schedules[0]!.id)).reminderMinutesBefore, [2880, 30], 'stored, largest first');
    const count = async () => (await inst.db.kysely.selectFrom('schedules').select('id').execute()).length;
    const schedulesBefore = await count();
    for (const [bad, reason] of [
      [[0], /schedules\[1\]\.reminder_minutes_before\[0\]: must be whole minutes before the appointment, from 1 to 525600/],
      [[60, 60], /schedules\[1\]\.reminder_minutes_before\[1\]: 60 minutes is listed twice/],
      [['24h'], /reminder_minutes_before\[0\]: must be whole minutes/],
      [[1.5], /reminder_minutes_before\[0\]: must be whole minutes/],
      [1440, /reminder_minutes_before: must be a list of minutes/],
      [[1, 2, 3, 4, 5, 6], /reminder_minutes_before: at most 5 reminders/],
    ] as const) {
      await assert.rejects(
        importSchedules(
          inst.db,
          {
            schedules: [
              { ...SCHEDULE, name: 'Fine' },
              { ...SCHEDULE, name: 'Bad', reminder_minutes_before: bad },
            ],
          },
          NOW,
        ),
        (error: unknown) => error instanceof InvalidInput && reason.test(error.message),
        JSON.stringify(bad),
      );
    }
    assert.equal(await count(), schedulesBefore, 'nothing stored');
    for (const none of [[], null, undefined]) {
      const { schedules } = await importSchedules(
        inst.db,
        { schedules: [{ ...SCHEDULE, name: 'None', reminder_minutes_before: none }] },
        NOW,
      );
      assert.deepEqual((await getSchedule(inst.db, schedules[0]!.id)).reminderMinutesBefore, []);
    }
  });
});
