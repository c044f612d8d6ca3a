// Issue 15, mail throughput: a slow send holds up only its own lane (the others keep taking the next
// message, where a batch used to wait for its slowest send before the next claim), and the 'sent'
// records written together keep each message's own outcome. Real SMTP server on loopback; SQLite and
// PostgreSQL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachDatabase } from '../support/databases.js';
import { startOutboxWorker, type OutboxLog } from '../../src/app/outbox-delivery.js';
import { listMessages } from '../../src/app/outbox.js';
import { markSent } from '../../src/db/repos/outbox.repository.js';
import { TestSmtpServer, localDate, mailInstallation, recentPast, until } from './mail-support.js';

const DAY = 86_400_000;

/** Slot i of a 16-slot day (09:00-16:30), day by day, so that every booking has a time of its own. */
const slot = (now: number, i: number) => {
  const minute = (i % 16) * 30;
  return `${localDate(now + (1 + Math.floor(i / 16)) * DAY)} ${String(9 + Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}:00`;
};

describeEachDatabase('mail lanes', (dialect) => {
  let smtp: TestSmtpServer;
  before(async () => {
    smtp = await TestSmtpServer.start();
  });
  after(async () => {
    await smtp.down();
  });

  test('a send the SMTP server holds keeps only its own lane: the other 19 messages arrive meanwhile, each once', async () => {
    const now = recentPast();
    const inst = await mailInstallation(dialect, now);
    const warnings: string[] = [];
    const log: OutboxLog = { info() {}, warn: (_o, msg) => warnings.push(msg), error: (_o, msg) => warnings.push(msg) };
    // the first booking's confirmation (the first message claimed) is held until every other message has
    // arrived, or 10 s: with the batch waiting for its slowest send, the others would wait for it
    await inst.book(slot(now, 0), 'slow@example.com');
    for (let i = 1; i < 10; i += 1) await inst.book(slot(now, i), `customer${i}@example.com`);
    let arrivedWhileHeld = -1;
    smtp.beforeAccept = async (mail) => {
      if (!mail.envelopeTo.includes('slow@example.com')) return;
      const limit = Date.now() + 10_000;
      while (smtp.received.length < 19 && Date.now() < limit) await new Promise((r) => setTimeout(r, 20));
      arrivedWhileHeld = smtp.received.length;
    };
    const worker = startOutboxWorker({ db: inst.db, smtpUrl: smtp.url, giveUpAfterMs: 3_600_000, pollIntervalMs: 50, concurrency: 2, log });
    try {
      await smtp.waitFor(20, 30_000);
      await until('every row sent', async () => (await listMessages(inst.db, { state: 'sent', limit: 50 })).length === 20);
    } finally {
      await worker.stop();
      smtp.beforeAccept = null;
    }
    try {
      assert.equal(arrivedWhileHeld, 19, 'the other messages went out while the slow one was held');
      assert.equal(smtp.received.at(-1)!.envelopeTo.join(), 'slow@example.com');
      const recipients = smtp.received.map((m) => m.envelopeTo.join());
      assert.equal(recipients.length, 20);
      assert.equal(recipients.filter((r) => r === 'desk@example.com').length, 10);
      assert.equal(new Set(recipients.filter((r) => r !== 'desk@example.com')).size, 10, 'each customer once');
      assert.deepEqual(warnings, [], 'nothing recorded twice, nothing failed');
    } finally {
      smtp.received.length = 0;
      await inst.dispose();
    }
  });

  test("'sent' records written together: each row gets its own time; a row already sent is left as it was", async () => {
    const now = recentPast();
    const inst = await mailInstallation(dialect, now);
    try {
      await inst.book(slot(now, 0), 'a@example.com');
      await inst.book(slot(now, 1), 'b@example.com');
      const [first, second, third, fourth] = (await listMessages(inst.db, { limit: 10 })).map((m) => m.id).sort((a, b) => a - b);
      assert.deepEqual([...(await markSent(inst.db.kysely, [{ id: first!, sentAt: now + 1_000 }]))], [first]);
      const recorded = await markSent(inst.db.kysely, [
        { id: first!, sentAt: now + 9_000 },
        { id: second!, sentAt: now + 2_000 },
        { id: third!, sentAt: now + 3_000 },
      ]);
      assert.deepEqual(
        [...recorded].sort((a, b) => a - b),
        [second, third],
        'the row already sent is not recorded again',
      );
      const byId = new Map((await listMessages(inst.db, { limit: 10 })).map((m) => [m.id, m]));
      assert.deepEqual(
        [first, second, third, fourth].map((id) => [byId.get(id!)!.state, byId.get(id!)!.sentAt, byId.get(id!)!.attempts]),
        [
          ['sent', now + 1_000, 1],
          ['sent', now + 2_000, 1],
          ['sent', now + 3_000, 1],
          ['queued', null, 0],
        ],
      );
    } finally {
      await inst.dispose();
    }
  });
});
