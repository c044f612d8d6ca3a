// Shutdown with a mail send in flight. A real `bin/booking serve` sends to a real SMTP server that takes
// the message and then never answers (stalls after DATA); SIGTERM must still end the process with 0,
// well within its shutdown bound, and give the message back unsent. Restarted with a working SMTP server,
// the message arrives exactly once. SQLite and PostgreSQL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SMTPServer } from 'smtp-server';
import { describeEachDatabase } from '../support/databases.js';
import { freePort, serve, type ServeProcess } from '../support/processes.js';
import { listMessages } from '../../src/app/outbox.js';
import { SHUTDOWN_TIMEOUT_MS } from '../../src/server.js';
import { TestSmtpServer, localDate, mailInstallation, messageKey, recentPast, until } from './mail-support.js';

const DAY = 86_400_000;

/** Reads every message to its end and then never replies, like a server hanging before its 250. */
class StallingSmtpServer {
  /** messages received in full and left without an answer */
  stalled = 0;
  private constructor(
    readonly port: number,
    private readonly server: SMTPServer,
  ) {}

  static async start(): Promise<StallingSmtpServer> {
    const port = await freePort();
    const server = new SMTPServer({
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      // closing the server must not wait for the stalled connections
      closeTimeout: 100,
      onData: (stream) => {
        stream.on('data', () => {});
        stream.on('end', () => {
          smtp.stalled += 1;
        });
      },
    });
    const smtp = new StallingSmtpServer(port, server);
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(port, '127.0.0.1', () => ok());
    });
    server.on('error', () => {});
    return smtp;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}/?ignoreTLS=true`;
  }

  down(): Promise<void> {
    return new Promise((ok) => this.server.close(() => ok()));
  }
}

describeEachDatabase('mail: shutdown with a send in flight', (dialect) => {
  let stalling: StallingSmtpServer;
  let smtp: TestSmtpServer;
  before(async () => {
    stalling = await StallingSmtpServer.start();
    smtp = await TestSmtpServer.start();
  });
  after(async () => {
    await stalling.down();
    await smtp.down();
  });

  // MAIL_CONCURRENCY=1: one message in flight, the other not yet tried; 4: both in flight, both aborted
  for (const concurrency of [1, 4])
    test(`SIGTERM while the SMTP server stalls on DATA exits 0 within seconds; after a restart the message arrives once (MAIL_CONCURRENCY=${concurrency})`, async () => {
      const inFlight = Math.min(concurrency, 2);
      const now = recentPast();
      const inst = await mailInstallation(dialect, now);
      let server: ServeProcess | null = null;
      try {
        const booking = await inst.book(`${localDate(now + DAY)} 09:00:00`, 'ada@example.com');
        server = await serve(inst.url, { SMTP_URL: stalling.url, LOG_LEVEL: 'warn', MAIL_CONCURRENCY: String(concurrency) });
        await until('the messages in flight are stalled after DATA', () => stalling.stalled >= inFlight);
        // concurrency 1 claims only the message it sends; 4 claims both and sends both
        assert.equal((await listMessages(inst.db, { state: 'sending' })).length, inFlight, 'claimed: only what is in flight');

        const signalled = Date.now();
        const exit = await server.stop('SIGTERM');
        const took = Date.now() - signalled;
        const log = server.log();
        server = null;
        assert.equal(exit.code, 0, `exit code 0 (1 means the shutdown timed out); log:\n${log}`);
        assert.ok(took < SHUTDOWN_TIMEOUT_MS / 2, `shut down in ${took} ms`);
        assert.equal(stalling.stalled, inFlight, 'no message was tried after the stop');

        // given back unsent: due again at once, no attempt counted, no claim held
        const released = await listMessages(inst.db);
        assert.deepEqual(
          released.map((m) => [m.state, m.attempts, m.claimedUntil, m.sentAt]),
          [
            ['queued', 0, null, null],
            ['queued', 0, null, null],
          ],
        );
        assert.ok(released.every((m) => m.nextAttemptAt <= Date.now()));

        // the restart, with a server that answers: both messages arrive, each once
        server = await serve(inst.url, { SMTP_URL: smtp.url, LOG_LEVEL: 'warn' });
        await smtp.waitFor(2);
        await until('both rows sent', async () => (await listMessages(inst.db)).every((m) => m.state === 'sent'));
        // a few more polls: nothing goes out again
        await new Promise((r) => setTimeout(r, 1500));
        assert.deepEqual(smtp.received.map(messageKey).sort(), [
          `ada@example.com REQUEST ${booking.detailsId}`,
          `desk@example.com REQUEST ${booking.detailsId}`,
        ]);
        assert.deepEqual(
          (await listMessages(inst.db)).map((m) => m.attempts),
          [1, 1],
        );
        const stopped = await server.stop('SIGTERM');
        server = null;
        assert.equal(stopped.code, 0);
      } finally {
        await server?.stop('SIGKILL');
        await inst.dispose();
        smtp.received.length = 0;
        stalling.stalled = 0;
      }
    });
});
