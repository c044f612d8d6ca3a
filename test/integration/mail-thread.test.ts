// MAIL_WORKER (docs/mail.md, "Capacity"): a real `bin/booking serve` delivers its outbox from a worker
// thread of its own by default, with its own database connection, and logs through the process's logger
// (each line marked with the thread); MAIL_WORKER=inline delivers on the API's event loop as before. Either
// way every message arrives exactly once and SIGTERM ends the process with 0. (A send in flight at SIGTERM,
// released unsent: mail-shutdown.test.ts, which runs the default, the thread.) SQLite and PostgreSQL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachDatabase } from '../support/databases.js';
import { serve, type ServeProcess } from '../support/processes.js';
import { listMessages, retryMessage } from '../../src/app/outbox.js';
import { TestSmtpServer, localDate, mailInstallation, messageKey, recentPast, until } from './mail-support.js';

const DAY = 86_400_000;

/** The JSON log lines of a serve process with this message. */
const linesOf = (log: string, msg: string) =>
  log
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === msg);

describeEachDatabase('mail: delivery in a worker thread (MAIL_WORKER)', (dialect) => {
  let smtp: TestSmtpServer;
  before(async () => {
    smtp = await TestSmtpServer.start();
  });
  after(async () => {
    await smtp.down();
  });

  for (const worker of ['thread (default)', 'inline'] as const)
    test(`MAIL_WORKER=${worker}: every message arrives once, a refusal is logged through the process's logger, SIGTERM exits 0`, async () => {
      const now = recentPast();
      const inst = await mailInstallation(dialect, now);
      let server: ServeProcess | null = null;
      try {
        const booking = await inst.book(`${localDate(now + DAY)} 09:00:00`, 'ada@example.com');
        // the first attempt is refused (4xx): the worker's warning must reach the process's log
        smtp.mode = 'tempfail';
        const env = { SMTP_URL: smtp.url, LOG_LEVEL: 'info', ...(worker === 'inline' ? { MAIL_WORKER: 'inline' } : {}) };
        server = await serve(inst.url, env);
        await until('both first attempts refused', () => smtp.refusals >= 2);
        const running = server;
        await until('the refusals logged', () => linesOf(running.log(), 'mail failed, will retry').length >= 2);
        smtp.mode = 'accept';
        // retried after the backoff (30 s at least): given back at once instead, as "Retry now" in the admin area does
        for (const message of await listMessages(inst.db)) assert.equal(await retryMessage(inst.db, message.id, Date.now()), true);
        await smtp.waitFor(2);
        await until('both rows sent', async () => (await listMessages(inst.db)).every((m) => m.state === 'sent'));

        const log = server.log();
        const stopped = await server.stop('SIGTERM');
        server = null;
        assert.equal(stopped.code, 0, `exit code 0; log:\n${log}`);
        assert.deepEqual(smtp.received.map(messageKey).sort(), [
          `ada@example.com REQUEST ${booking.detailsId}`,
          `desk@example.com REQUEST ${booking.detailsId}`,
        ]);
        const refused = linesOf(log, 'mail failed, will retry');
        const configured = linesOf(log, 'SMTP server configured');
        assert.equal(configured.length, 1, log);
        for (const line of [...refused, ...configured]) {
          assert.equal(line.component, 'outbox');
          assert.equal(line.level, line.msg === 'SMTP server configured' ? 30 : 40);
          // a thread's id is 1 or more; the main thread logs without the binding
          if (worker === 'inline') assert.equal(line.mailThread, undefined);
          else assert.ok(typeof line.mailThread === 'number' && line.mailThread >= 1, JSON.stringify(line));
        }
        assert.match(String(refused[0]!.error), /451|4\d\d/);
      } finally {
        await server?.stop('SIGKILL');
        await inst.dispose();
        smtp.received.length = 0;
        smtp.refusals = 0;
        smtp.mode = 'accept';
      }
    });
});
