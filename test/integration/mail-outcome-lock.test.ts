// The outbox's outcome records wait for another connection's SQLite write lock, as a claim does, instead of
// giving up after the driver's few milliseconds: with delivery in a thread of its own (MAIL_WORKER=thread)
// the API's bookings on the main thread hold that lock all the time under load, and every 'sent' record
// that met one was refused, logged as an error and left for the next poll. Here another process holds the
// write lock for 400 ms (well under the busy bound of 2 s) from the moment the SMTP server has the message
// until just after it answers: the record waits and is written; nothing is logged as failed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { startOutboxWorker, type OutboxWorker } from '../../src/app/outbox-delivery.js';
import { listMessages } from '../../src/app/outbox.js';
import { TestSmtpServer, localDate, mailInstallation, messageKey, recentPast, until } from './mail-support.js';

const DAY = 86_400_000;
const HOLD_MS = 400;

/** Another process takes the database's write lock and commits HOLD_MS later on its own; resolves once it holds it. */
async function holdWriteLockBriefly(file: string): Promise<{ done: Promise<void> }> {
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked\\n');
    setTimeout(() => { db.exec('COMMIT'); db.close(); process.exit(0); }, ${HOLD_MS});
  `;
  const child = spawn(process.execPath, ['-e', script, file], { stdio: ['ignore', 'pipe', 'inherit'], cwd: process.cwd() });
  const done = new Promise<void>((ok) => child.on('exit', () => ok()));
  await new Promise<void>((ok, fail) => {
    child.stdout.once('data', () => ok());
    child.once('exit', (code) => fail(new Error(`the lock holder exited with ${code}`)));
  });
  return { done };
}

test('mail: a SQLite write lock held briefly as a message is accepted: its sent record waits for it, nothing fails', async () => {
  const now = recentPast();
  const inst = await mailInstallation('sqlite', now);
  const smtp = await TestSmtpServer.start();
  let worker: OutboxWorker | null = null;
  const errors: string[] = [];
  try {
    const booking = await inst.book(`${localDate(now + DAY)} 09:00:00`, 'ada@example.com');
    const lock: { released: Promise<void> | null } = { released: null };
    smtp.beforeAccept = async () => {
      // the first message only: the lock is held when the server answers, so its record meets it
      if (lock.released) return;
      lock.released = (await holdWriteLockBriefly(inst.url.replace(/^sqlite:/, ''))).done;
      await new Promise((r) => setTimeout(r, 50));
    };
    const note = (level: string) => (obj: object, msg: string) => {
      if (level === 'error') errors.push(`${msg} ${JSON.stringify(obj)}`);
    };
    worker = startOutboxWorker({
      db: inst.db,
      smtpUrl: smtp.url,
      giveUpAfterMs: 3_600_000,
      pollIntervalMs: 50,
      concurrency: 1,
      log: { info: note('info'), warn: note('warn'), error: note('error') },
    });
    await until('both rows sent', async () => (await listMessages(inst.db)).every((m) => m.state === 'sent'), 30_000);
    assert.ok(lock.released, 'the lock was taken');
    await lock.released;
    await worker.stop();
    worker = null;

    assert.deepEqual(errors, [], 'no record refused');
    assert.deepEqual(smtp.received.map(messageKey).sort(), [
      `ada@example.com REQUEST ${booking.detailsId}`,
      `desk@example.com REQUEST ${booking.detailsId}`,
    ]);
  } finally {
    await worker?.stop();
    await smtp.down();
    await inst.dispose();
  }
});
