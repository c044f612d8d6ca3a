// Stale messages (docs/mail.md "Stale messages"): messages queued while no SMTP server was set go out when
// one is, but only those whose moment has not passed. A real SMTP server on loopback receives what is sent;
// the rest end 'skipped' with their reason. SQLite and PostgreSQL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachDatabase } from '../support/databases.js';
import { deskSchedule, testInstallation, type TestInstallation } from '../support/installation.js';
import { startOutboxWorker, type OutboxWorker } from '../../src/app/outbox-delivery.js';
import { cancelBooking } from '../../src/app/bookings.js';
import { listMessages } from '../../src/app/outbox.js';
import { TestSmtpServer, until } from './mail-support.js';

// Monday 2026-06-01 06:00Z = 08:00 in Berlin
const NOW = Date.UTC(2026, 5, 1, 6, 0);
// Wednesday 2026-06-03 08:00Z: the server is set two days later, when Tuesday's appointments are over
const LATER = Date.UTC(2026, 5, 3, 8, 0);

const SCHEDULE = deskSchedule({
  name: 'Dr. Late',
  capacity: 5,
  reasons: [{ name: 'Check-up', duration_minutes: 30 }],
  form: {
    first_name: { label: 'First name', input_type: 'text', required: true },
    email: { label: 'E-mail', input_type: 'email', required: true },
  },
});

describeEachDatabase('stale mail is skipped, current mail is sent', (dialect) => {
  let inst: TestInstallation;
  let smtp: TestSmtpServer;
  let worker: OutboxWorker | null = null;

  before(async () => {
    inst = await testInstallation(dialect, { now: NOW, schedules: [SCHEDULE] });
    smtp = await TestSmtpServer.start();
  });
  after(async () => {
    await worker?.stop();
    await smtp.down();
    await inst.close();
  });

  test('a confirmation and a cancellation of a past booking are not sent; those of future bookings are', async () => {
    const schedule = inst.schedules[0]!.id;
    const reason = inst.schedules[0]!.reasons[0]!.id;
    const book = async (slot: string, who: string) => {
      const res = await inst.api({
        method: 'POST',
        url: '/api/bookings',
        payload: { schedule, reason, slot, submission: { first_name: who, email: `${who}@example.com` } },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().booking_details_id as string;
    };
    // queued on Monday, with no SMTP server set
    const pastCancelled = await book('2026-06-02 09:00:00', 'past-cancelled');
    const past = await book('2026-06-02 10:00:00', 'past');
    const future = await book('2026-06-05 09:00:00', 'future');
    const futureCancelled = await book('2026-06-05 10:00:00', 'future-cancelled');
    assert.equal(await cancelBooking(inst.db, pastCancelled, NOW), true);
    assert.equal(await cancelBooking(inst.db, futureCancelled, NOW), true);
    assert.equal((await listMessages(inst.db, { state: 'queued' })).length, 12);

    // the server is set on Wednesday: everything due goes through the worker at once
    worker = startOutboxWorker({ db: inst.db, smtpUrl: smtp.url, giveUpAfterMs: 3_600_000, pollIntervalMs: 50, clock: () => LATER });
    await until('every message handled', async () =>
      (await listMessages(inst.db)).every((m) => m.state === 'sent' || m.state === 'skipped'),
    );
    const outcome = async (detailsId: string) =>
      Object.fromEntries(
        (await listMessages(inst.db, { detailsId })).map((m) => [m.kind, `${m.state}${m.skipReason ? `: ${m.skipReason}` : ''}`]),
      );

    assert.deepEqual(await outcome(pastCancelled), {
      booking_confirmation: 'skipped: the booking was cancelled before the confirmation went out',
      booking_notification: 'skipped: the booking was cancelled before the notification went out',
      booking_cancellation: "skipped: the appointment's time had passed before the cancellation went out",
      booking_cancellation_notification: 'skipped: the appointment was over before the cancellation notice went out',
    });
    assert.deepEqual(await outcome(past), {
      booking_confirmation: 'skipped: the appointment had begun before the confirmation went out',
      booking_notification: 'skipped: the appointment was over before the notification went out',
    });
    assert.deepEqual(await outcome(future), { booking_confirmation: 'sent', booking_notification: 'sent' });
    assert.deepEqual(await outcome(futureCancelled), {
      booking_confirmation: 'skipped: the booking was cancelled before the confirmation went out',
      booking_notification: 'skipped: the booking was cancelled before the notification went out',
      booking_cancellation: 'sent',
      booking_cancellation_notification: 'sent',
    });
    // what the SMTP server received: exactly the four current messages
    assert.deepEqual(smtp.received.map((m) => m.envelopeTo.join()).sort(), [
      'desk@example.com',
      'desk@example.com',
      'future-cancelled@example.com',
      'future@example.com',
    ]);
  });
});
