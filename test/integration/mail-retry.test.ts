// The mail server refusing (4xx, then 5xx) and then down, then back: bookings made meanwhile still answer
// 201, and every message arrives exactly once. A message failing past the give-up time is 'failed' and
// can be retried from the admin area. Real SMTP server on loopback; SQLite and PostgreSQL.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, deskSchedule, runningFrom, testInstallation, type TestInstallation } from '../support/installation.js';
import { startOutboxWorker, type OutboxWorker } from '../../src/app/outbox-delivery.js';
import { listMessages, retryMessage } from '../../src/app/outbox.js';
import { TestSmtpServer, messageIdOf, messageKey, until } from './mail-support.js';

const NOW = Date.UTC(2026, 5, 1, 6, 0);

describeEachDatabase('mail retries', (dialect) => {
  let inst: TestInstallation;
  let smtp: TestSmtpServer;
  let worker: OutboxWorker | null = null;
  let schedule: number, reason: number;
  let slotHour = 9;

  before(async () => {
    inst = await testInstallation(dialect, {
      now: NOW,
      schedules: [deskSchedule({ slot_interval_minutes: 60, capacity: 20, weekly_hours: ALL_WEEK([['09:00', '17:00']]) })],
    });
    schedule = inst.schedules[0]!.id;
    reason = inst.schedules[0]!.reasons[0]!.id;
    smtp = await TestSmtpServer.start();
  });
  // a failed test must not leave its worker polling (the next test would start a second one)
  afterEach(async () => {
    await worker?.stop();
    worker = null;
  });
  after(async () => {
    await smtp.down();
    await inst.close();
  });

  const book = async (name: string) => {
    const slot = `2026-06-02 ${String(slotHour++).padStart(2, '0')}:00:00`;
    const res = await inst.api({
      method: 'POST',
      url: '/api/bookings',
      payload: { schedule, reason, slot, submission: { first_name: name, email: `${name}@example.com` } },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().booking_details_id as string;
  };
  /** every message so far has last failed with this error */
  const allFailedWith = (pattern: RegExp) => async () => (await listMessages(inst.db)).every((m) => pattern.test(m.lastError ?? ''));

  test('4xx, then 5xx, then no server at all, then back: every message arrives exactly once', async () => {
    smtp.mode = 'tempfail';
    worker = startOutboxWorker({
      db: inst.db,
      smtpUrl: smtp.url,
      giveUpAfterMs: 3_600_000,
      pollIntervalMs: 50,
      retryBaseMs: 100,
      retryCapMs: 400,
      clock: runningFrom(NOW),
    });
    const booked = [await book('ada'), await book('grace')];
    await until('every message refused with 451', allFailedWith(/451/));
    assert.ok((await listMessages(inst.db)).every((m) => m.state !== 'sent' && m.state !== 'failed'));

    smtp.mode = 'permfail';
    booked.push(await book('edsger'));
    await until('every message refused with 554', allFailedWith(/554/));

    await smtp.down();
    booked.push(await book('barbara'));
    await until('every message failed to connect', allFailedWith(/ECONNREFUSED|ECONNECTION/));
    assert.equal(smtp.received.length, 0);

    smtp.mode = 'accept';
    await smtp.up();
    await smtp.waitFor(8);
    await until('all rows sent', async () => (await listMessages(inst.db)).every((m) => m.state === 'sent'));
    // a few more polls: nothing arrives a second time
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(smtp.received.length, 8);
    const keys = smtp.received.map(messageKey).sort();
    assert.equal(new Set(keys).size, 8);
    for (const [i, name] of ['ada', 'grace', 'edsger', 'barbara'].entries()) {
      assert.ok(keys.includes(`${name}@example.com REQUEST ${booked[i]}`), name);
      assert.ok(keys.includes(`desk@example.com REQUEST ${booked[i]}`), name);
    }
    const rows = await listMessages(inst.db);
    assert.ok(
      rows.every((m) => m.attempts >= 2 && m.sentAt !== null && m.lastError === null),
      'each was retried before it was sent',
    );
    // one Message-ID per message, the same on every attempt (a duplicate would be recognisable as one)
    const acceptedIds = new Map(smtp.received.map((m) => [messageKey(m), messageIdOf(m)]));
    assert.equal(new Set(acceptedIds.values()).size, 8);
    assert.ok(smtp.refused.length >= 8);
    for (const refused of smtp.refused) assert.equal(messageIdOf(refused), acceptedIds.get(messageKey(refused)));
    for (const m of rows) {
      const found = [...acceptedIds].some(
        ([key, id]) => key.endsWith(` ${m.detailsId}`) && id.startsWith(`<outbox-${m.id}.${m.detailsId}@`),
      );
      assert.ok(found, `message ${m.id} carries <outbox-${m.id}.${m.detailsId}@…>`);
    }
    await worker.stop();
    worker = null;
  });

  test('after the give-up time a failing message is failed; "retry now" sends it once the server accepts', async () => {
    smtp.mode = 'permfail';
    worker = startOutboxWorker({
      db: inst.db,
      smtpUrl: smtp.url,
      giveUpAfterMs: 1,
      pollIntervalMs: 50,
      retryBaseMs: 100,
      retryCapMs: 400,
      clock: runningFrom(NOW + 1000),
    });
    const detailsId = await book('alan');
    await until('both messages given up', async () => (await listMessages(inst.db, { detailsId })).every((m) => m.state === 'failed'));
    const refusalsAtGiveUp = smtp.refusals;
    const failed = await listMessages(inst.db, { state: 'failed' });
    assert.equal(failed.length, 2);
    assert.ok(failed.every((m) => /554/.test(m.lastError ?? '') && m.attempts === 1));
    const before = smtp.received.length;
    // given up means left alone: a few more polls send nothing
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(smtp.refusals, refusalsAtGiveUp);

    smtp.mode = 'accept';
    for (const m of failed) assert.equal(await retryMessage(inst.db, m.id, NOW + 1000), true);
    // the worker may already have taken them; none is failed any more
    assert.ok((await listMessages(inst.db, { detailsId })).every((m) => ['retrying', 'sending', 'sent'].includes(m.state)));
    await smtp.waitFor(before + 2);
    await until('both sent', async () => (await listMessages(inst.db, { detailsId })).every((m) => m.state === 'sent'));
    assert.deepEqual(
      smtp.received
        .slice(before)
        .map((m) => m.envelopeTo[0])
        .sort(),
      ['alan@example.com', 'desk@example.com'],
    );
  });
});
