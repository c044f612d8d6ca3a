// Workers that die or compete. (1) A real child process claims messages and is SIGKILLed before it sends
// them; a `bin/booking serve` started afterwards delivers them, once. (2) Two workers with their own
// connections on one database drain many queued messages: each is delivered exactly once.
// Real SMTP server on loopback; SQLite and PostgreSQL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describeEachDatabase } from '../support/databases.js';
import { serve } from '../support/processes.js';
import { connect } from '../../src/db/connect.js';
import { startOutboxWorker } from '../../src/app/outbox-delivery.js';
import { listMessages } from '../../src/app/outbox.js';
import { TestSmtpServer, localDate, mailInstallation, messageKey, recentPast, until } from './mail-support.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DAY = 86_400_000;

// A worker in its own process that stops for good right after claiming (the test seam afterClaim) and
// says which rows it holds; its claim is short so that it expires soon after the process is killed.
const CLAIM_AND_HANG = `
import { connect } from ${JSON.stringify(pathToFileURL(join(ROOT, 'src/db/connect.ts')).href)};
import { startOutboxWorker } from ${JSON.stringify(pathToFileURL(join(ROOT, 'src/app/outbox-delivery.ts')).href)};
const db = connect(process.env.DATABASE_URL);
startOutboxWorker({
  db, smtpUrl: process.env.SMTP_URL, giveUpAfterMs: 3600000, claimMs: 1500, pollIntervalMs: 50,
  afterClaim: async (rows) => {
    process.stdout.write(JSON.stringify(rows.map((r) => r.id)) + '\\n');
    // stay alive (a timer keeps the event loop busy) until the test kills this process
    await new Promise(() => setInterval(() => {}, 1000));
  },
});
`;

describeEachDatabase('mail workers', (dialect) => {
  let smtp: TestSmtpServer;
  let scratch: string;
  before(async () => {
    smtp = await TestSmtpServer.start();
    scratch = mkdtempSync(join(tmpdir(), 'booking-mail-'));
  });
  after(async () => {
    await smtp.down();
    rmSync(scratch, { recursive: true, force: true });
  });

  test('a process SIGKILLed between claiming and sending: after a restart the message arrives, once', async () => {
    const now = recentPast();
    const inst = await mailInstallation(dialect, now);
    const child = (() => {
      const script = join(scratch, `claim-and-hang-${dialect}.mjs`);
      writeFileSync(script, CLAIM_AND_HANG);
      return spawn(process.execPath, ['--import', join(ROOT, 'node_modules/tsx/dist/loader.mjs'), script], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: inst.url, SMTP_URL: smtp.url },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    })();
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    const exited = new Promise<NodeJS.Signals | null>((ok) => child.on('exit', (_code, signal) => ok(signal)));
    let server: Awaited<ReturnType<typeof serve>> | null = null;
    try {
      const booking = await inst.book(`${localDate(now + DAY)} 09:00:00`, 'ada@example.com');
      await until(`the child claimed the messages (output: ${output})`, () => output.includes(']'));
      const claimed = JSON.parse(output.slice(0, output.indexOf('\n'))) as number[];
      assert.equal(claimed.length, 2);
      const held = await listMessages(inst.db, { state: 'sending' });
      assert.deepEqual(held.map((m) => m.id).sort(), [...claimed].sort());

      child.kill('SIGKILL');
      assert.equal(await exited, 'SIGKILL');
      assert.equal(smtp.received.length, 0, 'nothing was sent before the kill');

      // the restart: a real `booking serve` with SMTP_URL; its worker takes over once the dead claim expires
      server = await serve(inst.url, { SMTP_URL: smtp.url, LOG_LEVEL: 'warn' });
      const received = await smtp.waitFor(2);
      await until('both rows sent', async () => (await listMessages(inst.db)).every((m) => m.state === 'sent'));
      assert.deepEqual(received.map(messageKey).sort(), [
        `ada@example.com REQUEST ${booking.detailsId}`,
        `desk@example.com REQUEST ${booking.detailsId}`,
      ]);
      const stopped = await server.stop('SIGTERM');
      server = null;
      assert.equal(stopped.code, 0);
      assert.equal(smtp.received.length, 2);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await server?.stop('SIGKILL');
      await inst.dispose();
      smtp.received.length = 0;
    }
  });

  test('two workers with their own connections drain 150 messages: each delivered exactly once', async () => {
    const now = recentPast();
    const inst = await mailInstallation(dialect, now);
    const second = connect(inst.url);
    const expected: string[] = [];
    try {
      for (let i = 0; i < 75; i += 1) {
        const minute = (i % 16) * 30;
        const slot = `${localDate(now + (1 + Math.floor(i / 16)) * DAY)} ${String(9 + Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}:00`;
        const b = await inst.book(slot, `customer${i}@example.com`);
        expected.push(`customer${i}@example.com REQUEST ${b.detailsId}`, `desk@example.com REQUEST ${b.detailsId}`);
      }
      assert.equal((await listMessages(inst.db, { state: 'queued', limit: 500 })).length, 150);
      const options = { smtpUrl: smtp.url, giveUpAfterMs: 3_600_000, pollIntervalMs: 20, batchSize: 5 };
      const workers = [startOutboxWorker({ db: inst.db, ...options }), startOutboxWorker({ db: second, ...options })];
      try {
        await smtp.waitFor(150, 120_000);
        await until('every row sent', async () => (await listMessages(inst.db, { state: 'sent', limit: 500 })).length === 150, 60_000);
        // let both poll a few more times: nothing goes out again
        await new Promise((r) => setTimeout(r, 300));
      } finally {
        await Promise.all(workers.map((w) => w.stop()));
      }
      const keys = smtp.received.map(messageKey);
      assert.equal(keys.length, 150);
      assert.deepEqual([...keys].sort(), [...expected].sort());
    } finally {
      await second.close();
      await inst.dispose();
      smtp.received.length = 0;
    }
  });
});
