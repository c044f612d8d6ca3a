// E-mail exactly once across real database faults (issue 15, item 1). The worker sends to a real SMTP
// server; right after the server has a message in full, and before it answers 250, the test takes the
// database away, so the worker's 'sent' record fails although the message was accepted:
//
// - PostgreSQL: a server of the test's own (initdb in a temporary directory), stopped with
//   `pg_ctl stop -m fast` and later `-m immediate`, and started again a moment later, while messages are
//   being delivered four at a time;
// - SQLite: another process holds the database's write lock (BEGIN IMMEDIATE) longer than the busy
//   timeout, so the 'sent' UPDATE fails with SQLITE_BUSY.
//
// Claims are short here (3 s), so a row left 'sending' becomes due again within the test. Every message
// must arrive exactly once (counted per Message-ID and per recipient and booking at the SMTP server) and
// every row end 'sent'.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { connect } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { listMessages } from '../../src/app/outbox.js';
import { startOutboxWorker, type OutboxLog, type OutboxWorker } from '../../src/app/outbox-delivery.js';
import { OWN_POSTGRES_SKIP, ownPostgres } from '../support/own-postgres.js';
import {
  TestSmtpServer,
  localDate,
  mailInstallation,
  messageIdOf,
  messageKey,
  recentPast,
  until,
  type ReceivedMail,
} from './mail-support.js';

const DAY = 86_400_000;
const CLAIM_MS = 3_000;

/** The worker's log, kept for the assertions' messages; `onError` sees every error line. */
function recordingLog(onError: (msg: string) => void = () => {}): OutboxLog & { lines: string[] } {
  const lines: string[] = [];
  const line = (level: string) => (obj: object, msg: string) => {
    const { err, ...rest } = obj as { err?: unknown };
    lines.push(`${level} ${msg} ${JSON.stringify(rest)}${err instanceof Error ? ` (${err.message})` : ''}`);
    if (level === 'error') onError(msg);
  };
  return { lines, info: line('info'), warn: line('warn'), error: line('error') };
}

/** Each message once: per Message-ID, and per recipient, calendar method and booking. */
function assertEachOnce(received: readonly ReceivedMail[], expected: number, log: string[]): void {
  const count = (keys: string[]) => {
    const counts = new Map<string, number>();
    for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
    return [...counts].filter(([, n]) => n > 1);
  };
  const ids = received.map(messageIdOf);
  assert.deepEqual(count(ids), [], `no Message-ID twice; worker log:\n${log.join('\n')}`);
  assert.deepEqual(count(received.map(messageKey)), [], 'no recipient got the same message twice');
  assert.equal(new Set(ids).size, expected, 'every message arrived');
  for (const id of ids) assert.match(id, /^<outbox-\d+\.[A-Za-z0-9_-]+@example\.com>$/);
}

test('mail: PostgreSQL stopped and restarted twice while mail is delivered: every message exactly once, all rows sent', async (t) => {
  if (OWN_POSTGRES_SKIP) {
    t.skip(OWN_POSTGRES_SKIP);
    return;
  }
  const pg = await ownPostgres();
  const db = connect(pg.url);
  const smtp = await TestSmtpServer.start();
  let worker: OutboxWorker | null = null;
  try {
    await migrate(db);
    const now = recentPast();
    const inst = await mailInstallation('postgres', now, { db, url: pg.url, dispose: async () => {} });
    const bookings = 15;
    for (let i = 0; i < bookings; i += 1) await inst.book(`${localDate(now + DAY)} 09:00:00`, `customer${i}@example.com`);

    // at the 5th and the 18th arrival: the database goes away before the server's 250, back 1.5 s later
    const faults = new Map<number, 'fast' | 'immediate'>([
      [5, 'fast'],
      [18, 'immediate'],
    ]);
    let arrivals = 0;
    let restarts: Promise<void> = Promise.resolve();
    const stops: string[] = [];
    smtp.beforeAccept = async () => {
      arrivals += 1;
      const mode = faults.get(arrivals);
      if (!mode) return;
      await restarts;
      await pg.stop(mode);
      stops.push(mode);
      restarts = new Promise((r) => setTimeout(r, 1_500)).then(() => pg.start());
    };

    const log = recordingLog();
    worker = startOutboxWorker({
      db,
      smtpUrl: smtp.url,
      giveUpAfterMs: 3_600_000,
      pollIntervalMs: 50,
      claimMs: CLAIM_MS,
      concurrency: 4,
      log,
    });
    await until('two database stops', () => stops.length === 2, 60_000);
    await restarts;
    await until('every row sent', async () => (await listMessages(db, { limit: 500 })).every((m) => m.state === 'sent'), 60_000);
    // longer than a claim: a row wrongly left 'sending' would be claimed and sent again now
    await new Promise((r) => setTimeout(r, CLAIM_MS + 1_500));
    await worker.stop();
    worker = null;

    assert.ok(
      log.lines.some((l) => l.includes('recording it failed')),
      `the fault hit a 'sent' record (else the test proved nothing):\n${log.lines.join('\n')}`,
    );
    assertEachOnce(smtp.received, bookings * 2, log.lines);
    const rows = await listMessages(db, { limit: 500 });
    assert.equal(rows.length, bookings * 2);
    assert.deepEqual(
      rows.filter((m) => m.state !== 'sent'),
      [],
    );
  } finally {
    await worker?.stop();
    await smtp.down();
    await db.close().catch(() => {});
    await pg.destroy();
  }
});

/** Another process holding the SQLite database's write lock until `release()`. */
async function holdWriteLock(file: string): Promise<{ release(): void; done: Promise<void> }> {
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked\\n');
    process.stdin.once('data', () => { db.exec('COMMIT'); db.close(); process.exit(0); });
  `;
  const child = spawn(process.execPath, ['-e', script, file], { stdio: ['pipe', 'pipe', 'inherit'], cwd: process.cwd() });
  const done = new Promise<void>((ok) => child.on('exit', () => ok()));
  await new Promise<void>((ok, fail) => {
    child.stdout.once('data', () => ok());
    child.once('exit', (code) => fail(new Error(`the lock holder exited with ${code}`)));
  });
  // once: every error line the worker logs releases it, and a claim may fail too before the holder has committed
  let released = false;
  const release = () => {
    if (!released) child.stdin.end('go\n');
    released = true;
  };
  return { release, done };
}

test('mail: SQLite write lock held past the busy timeout as a message is accepted: it is recorded later, never sent twice', async () => {
  const now = recentPast();
  const inst = await mailInstallation('sqlite', now);
  const smtp = await TestSmtpServer.start();
  let worker: OutboxWorker | null = null;
  const held: { lock: { release(): void; done: Promise<void> } | null } = { lock: null };
  try {
    for (let i = 0; i < 2; i += 1) await inst.book(`${localDate(now + DAY)} 09:00:00`, `customer${i}@example.com`);
    const file = inst.url.replace(/^sqlite:/, '');

    let arrivals = 0;
    smtp.beforeAccept = async () => {
      arrivals += 1;
      if (arrivals === 1) held.lock = await holdWriteLock(file);
    };
    // the first error the worker logs (its write refused as busy) lets the lock go
    const log = recordingLog(() => held.lock?.release());
    worker = startOutboxWorker({
      db: inst.db,
      smtpUrl: smtp.url,
      giveUpAfterMs: 3_600_000,
      pollIntervalMs: 50,
      claimMs: CLAIM_MS,
      concurrency: 1,
      log,
    });
    await until('the lock was taken', () => held.lock !== null, 120_000);
    await held.lock!.done;
    await until('every row sent', async () => (await listMessages(inst.db)).every((m) => m.state === 'sent'), 60_000);
    await new Promise((r) => setTimeout(r, CLAIM_MS + 1_500));
    await worker.stop();
    worker = null;

    assert.ok(
      log.lines.some((l) => l.includes('recording it failed')),
      `the lock hit a 'sent' record (else the test proved nothing):\n${log.lines.join('\n')}`,
    );
    assertEachOnce(smtp.received, 4, log.lines);
    assert.deepEqual(
      (await listMessages(inst.db)).map((m) => m.state),
      ['sent', 'sent', 'sent', 'sent'],
    );
  } finally {
    held.lock?.release();
    await worker?.stop();
    await smtp.down();
    await inst.dispose();
  }
});
