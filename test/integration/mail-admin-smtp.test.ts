// SMTP settings saved in the admin area (E-mail page): validation beside the field, the password never
// shown back, SMTP_URL taking precedence, and the worker (started as `booking serve` starts it, without
// SMTP_URL) delivering through the saved server to real SMTP servers on loopback. SQLite and PostgreSQL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachDatabase } from '../support/databases.js';
import { ADMIN, AdminBrowser } from '../support/admin-browser.js';
import { deskSchedule, runningFrom, testInstallation, type TestInstallation } from '../support/installation.js';
import { bumpConfigVersion, configVersion, loadSettings, saveSetting } from '../../src/db/repos/installation.repository.js';
import { startOutboxWorker, type OutboxWorker } from '../../src/app/outbox-delivery.js';
import { listMessages } from '../../src/app/outbox.js';
import { buildApp } from '../../src/http/build-app.js';
import { loadConfig } from '../../src/config.js';
import { TestSmtpServer, until } from './mail-support.js';

// Monday 2026-06-01 06:00Z = 08:00 in Berlin
const NOW = Date.UTC(2026, 5, 1, 6, 0);

/** The admin browser with the E-mail page's forms, each posted with the page's CSRF field. */
class Browser extends AdminBrowser {
  saveSmtp(fields: Partial<Record<'host' | 'port' | 'security' | 'user' | 'password', string>>, mailFrom = '', action = 'save') {
    const form: Record<string, string> = { mail_from: mailFrom, action };
    for (const name of ['host', 'port', 'security', 'user', 'password'] as const) form[`smtp_${name}`] = fields[name] ?? '';
    form.smtp_security ||= 'starttls';
    return this.post('/admin/mail/smtp', form, '/admin/mail');
  }

  testConnection(fields: Parameters<Browser['saveSmtp']>[0]) {
    return this.saveSmtp(fields, '', 'test');
  }

  testSend(to: string) {
    return this.post('/admin/mail/test-send', { test_to: to }, '/admin/mail');
  }
}

/** The fields of a test server: plain SMTP on loopback (its STARTTLS certificate has expired) */
const fieldsOf = (smtp: TestSmtpServer, credentials: { user?: string; password?: string } = {}) => ({
  host: '127.0.0.1',
  port: String(smtp.port),
  security: 'none',
  ...credentials,
});

/** The value of the input named `name` on a page */
const fieldValue = (page: string, name: string) => new RegExp(`<input id="${name}" name="${name}"[^>]* value="([^"]*)"`).exec(page)?.[1];

describeEachDatabase('mail: SMTP settings in the admin area', (dialect) => {
  let inst: TestInstallation;
  let browser: Browser;
  const smtpServers: TestSmtpServer[] = [];
  let worker: OutboxWorker | null = null;
  let schedule: number, reason: number;

  before(async () => {
    inst = await testInstallation(dialect, { now: NOW, schedules: [deskSchedule()] });
    schedule = inst.schedules[0]!.id;
    reason = inst.schedules[0]!.reasons[0]!.id;
    browser = new Browser(inst);
    const signIn = await browser.post('/admin/signin', ADMIN);
    assert.equal(signIn.statusCode, 303, signIn.body);
  });
  after(async () => {
    await worker?.stop();
    for (const smtp of smtpServers) await smtp.down();
    await inst.close();
  });

  const book = (slot: string, email: string) =>
    inst.api({ method: 'POST', url: '/api/bookings', payload: { schedule, reason, slot, submission: { email } } });

  test('bad fields get an error beside each and change nothing', async () => {
    const versionBefore = await configVersion(inst.db.kysely);
    for (const [fields, field, message] of [
      [{ host: 'mail example.com' }, 'smtp_host', /Must be a host name such as mail\.example\.com/],
      [{ host: 'smtp://mail.example.com' }, 'smtp_host', /Must be a host name/],
      [{ host: 'mail.example.com', port: '70000' }, 'smtp_port', /Must be a number from 1 to 65535/],
      [{ host: 'mail.example.com', port: '25x' }, 'smtp_port', /Must be a number from 1 to 65535/],
      [{ host: 'mail.example.com', security: 'ssl3' }, 'smtp_security', /Choose STARTTLS, TLS or none/],
      [{ host: 'mail.example.com', password: 'secret' }, 'smtp_user', /A password needs a user name/],
    ] as const) {
      const res = await browser.saveSmtp(fields, 'appointments@example.com');
      assert.equal(res.statusCode, 400, JSON.stringify(fields));
      assert.match(res.body, new RegExp(`<p class="error" id="${field}-error">${message.source}`), JSON.stringify(fields));
      assert.match(res.body, new RegExp(`id="${field}"[^>]*aria-invalid="true"`));
      assert.match(res.body, /class="error-summary"|role="alert"/, 'the error summary lists it');
      assert.equal(fieldValue(res.body, 'smtp_host'), fields.host, 'what was typed is shown again');
      assert.doesNotMatch(res.body, /value="secret"/, 'never a typed password back in clear');
    }
    const badFrom = await browser.saveSmtp({ host: '127.0.0.1', port: '2525' }, 'not an address');
    assert.equal(badFrom.statusCode, 400);
    assert.match(badFrom.body, /<p class="error" id="mail_from-error">Must be an e-mail address/);

    const settings = await loadSettings(inst.db.kysely);
    assert.equal(settings.smtpUrl, '');
    assert.equal(settings.mailFrom, '');
    assert.equal(await configVersion(inst.db.kysely), versionBefore, 'no write happened');
    assert.match((await browser.get('/admin/mail')).body, /No SMTP server is configured/);
  });

  test('the fields build the stored URL and read back from it; the password is never shown, kept masked only while the rest is unchanged', async () => {
    const typed = { host: 'mail.example.com', port: '587', security: 'starttls', user: 'booking@example.com', password: 's3cr@t:/' };
    assert.equal((await browser.saveSmtp(typed)).statusCode, 303);
    const stored = 'smtp://booking%40example.com:s3cr%40t%3A%2F@mail.example.com:587?requireTLS=true';
    assert.equal((await loadSettings(inst.db.kysely)).smtpUrl, stored);
    const pageHtml = (await browser.get('/admin/mail')).body;
    assert.doesNotMatch(pageHtml, /s3cr/);
    assert.equal(fieldValue(pageHtml, 'smtp_host'), 'mail.example.com');
    assert.equal(fieldValue(pageHtml, 'smtp_port'), '587');
    assert.match(pageHtml, /<option value="starttls" selected>/);
    assert.equal(fieldValue(pageHtml, 'smtp_user'), 'booking@example.com');
    assert.equal(fieldValue(pageHtml, 'smtp_password'), '********');
    assert.match(pageHtml, /Outgoing mail is sent through the SMTP server saved below/);

    // the form saved as shown keeps the password
    const shown = { ...typed, password: '********' };
    assert.equal((await browser.saveSmtp(shown, 'appointments@example.com')).statusCode, 303);
    assert.equal((await loadSettings(inst.db.kysely)).smtpUrl, stored);
    assert.equal((await loadSettings(inst.db.kysely)).mailFrom, 'appointments@example.com');

    // the mask does not carry the password to another host, port, user, or over a weaker security
    for (const changed of [
      { host: 'attacker.example.net' },
      { port: '2525' },
      { user: 'other@example.com' },
      { security: 'none' },
      { security: 'tls', port: '587' },
    ]) {
      const elsewhere = await browser.saveSmtp({ ...shown, ...changed }, 'appointments@example.com');
      assert.equal(elsewhere.statusCode, 400, JSON.stringify(changed));
      assert.match(
        elsewhere.body,
        /<p class="error" id="smtp_password-error">The server, port, security or user changed: type the password again/,
      );
      assert.doesNotMatch(elsewhere.body, /s3cr/);
      assert.equal((await loadSettings(inst.db.kysely)).smtpUrl, stored);
    }
    // a connection test with the mask towards another host is refused the same way, before any connection
    const probe = await browser.testConnection({ ...shown, host: 'attacker.example.net' });
    assert.equal(probe.statusCode, 400);
    assert.match(probe.body, /id="smtp_password-error">The server, port, security or user changed/);

    // TLS with the usual port; none adds ignoreTLS (the worker's URL options of docs/security.md)
    assert.equal((await browser.saveSmtp({ host: 'relay.example.com', security: 'tls', user: 'u', password: 'p' })).statusCode, 303);
    assert.equal((await loadSettings(inst.db.kysely)).smtpUrl, 'smtps://u:p@relay.example.com:465');
    assert.equal((await browser.saveSmtp({ host: 'localhost', security: 'none' })).statusCode, 303);
    assert.equal((await loadSettings(inst.db.kysely)).smtpUrl, 'smtp://localhost:25?ignoreTLS=true');

    // emptied: no server
    assert.equal((await browser.saveSmtp({ host: '' }, '')).statusCode, 303);
    assert.deepEqual([(await loadSettings(inst.db.kysely)).smtpUrl, (await loadSettings(inst.db.kysely)).mailFrom], ['', '']);
  });

  test('Test connection signs in without sending: passes with good credentials, shows the refusal with bad ones', async () => {
    const smtp = await TestSmtpServer.start({ credentials: { user: 'office', pass: 'right' } });
    smtpServers.push(smtp);
    // an app of its own: its checks count apart from the next test's
    const { app, browser } = await configuredApp({});
    try {
      const good = await browser.testConnection(fieldsOf(smtp, { user: 'office', password: 'right' }));
      assert.equal(good.statusCode, 200, good.body);
      assert.match(good.body, /id="smtp-result">Connection test passed: the server answered and accepted the sign-in\. Nothing was sent\./);
      assert.equal(fieldValue(good.body, 'smtp_password'), '', 'a typed password is not shown back, nor turned into the mask');
      assert.doesNotMatch(good.body, /value="right"/);

      const bad = await browser.testConnection(fieldsOf(smtp, { user: 'office', password: 'wrong' }));
      assert.equal(bad.statusCode, 200);
      assert.match(
        bad.body,
        /id="smtp-result">Connection test failed: The server refused the user name or password\. The server answered: &quot;535 Invalid username or password&quot;/,
      );

      const nobody = await browser.testConnection(fieldsOf(smtp));
      assert.match(nobody.body, /id="smtp-result">Connection test passed: the server answered\. No sign-in was tried \(no user given\)/);
      await smtp.down();
      const down = await browser.testConnection(fieldsOf(smtp, { user: 'office', password: 'right' }));
      assert.match(down.body, /id="smtp-result">Connection test failed: Nothing accepts connections at that host and port: check both\./);
      assert.equal(smtp.received.length, 0, 'a connection test sends nothing');
      assert.equal((await loadSettings(inst.db.kysely)).smtpUrl, '', 'a test saves nothing');
    } finally {
      await app.close();
    }
  });

  test('Send a test e-mail goes straight to the server in use (not the outbox); a refusal is shown in plain words; tests are throttled', async () => {
    const noServer = await browser.testSend('office@example.com');
    assert.equal(noServer.statusCode, 400);
    assert.match(noServer.body, /id="test_to-error">No SMTP server is configured/);
    const page = (await browser.get('/admin/mail')).body;
    assert.equal(fieldValue(page, 'test_to'), 'desk@example.com', 'the notification address by default');

    const smtp = await TestSmtpServer.start();
    smtpServers.push(smtp);
    assert.equal((await browser.saveSmtp(fieldsOf(smtp), 'appointments@example.com')).statusCode, 303);
    const outboxBefore = (await listMessages(inst.db)).length;
    const sent = await browser.testSend('office@example.com');
    assert.equal(sent.statusCode, 200, sent.body);
    assert.match(sent.body, /id="test-send-result">Accepted: the SMTP server took the test message to office@example\.com/);
    assert.equal(smtp.received.length, 1);
    assert.deepEqual(smtp.received[0]!.envelopeTo, ['office@example.com']);
    assert.equal(smtp.received[0]!.envelopeFrom, 'appointments@example.com');
    assert.match(smtp.received[0]!.raw, /Subject: Test message from/);
    assert.equal((await listMessages(inst.db)).length, outboxBefore, 'not through the outbox');

    smtp.mode = 'permfail';
    const refused = await browser.testSend('office@example.com');
    assert.equal(refused.statusCode, 200);
    assert.match(
      refused.body,
      /id="test-send-result">Not sent: The server refused the message\. The server answered: &quot;554 refused for now&quot;/,
    );

    const invalid = await browser.testSend('not an address');
    assert.equal(invalid.statusCode, 400);
    assert.match(invalid.body, /id="test_to-error">Must be an e-mail address/);

    // five checks per ten minutes in all (connection tests included); the sixth is refused, unsent
    smtp.mode = 'accept';
    for (let i = 3; i <= 5; i++) assert.equal((await browser.testSend('office@example.com')).statusCode, 200);
    assert.equal(smtp.received.length, 4);
    const throttled = await browser.testSend('office@example.com');
    assert.equal(throttled.statusCode, 429);
    assert.match(throttled.body, /id="test-send-result">Not sent: too many tests in a short time\. Try again in 10 minutes\./);
    const throttledTest = await browser.testConnection(fieldsOf(smtp));
    assert.equal(throttledTest.statusCode, 429);
    assert.match(throttledTest.body, /id="smtp-result">Connection test failed: too many tests in a short time/);
    assert.equal(smtp.received.length, 4, 'nothing more was sent');
    assert.equal((await browser.saveSmtp({ host: '' }, '')).statusCode, 303);
  });

  /** An app as `booking serve` builds it from this environment (src/server.ts), on the test's database, signed in. */
  async function configuredApp(env: Record<string, string>) {
    const config = loadConfig(env);
    const app = await buildApp({ db: inst.db, clock: inst.clock, smtpUrl: config.smtpUrl, mailFrom: config.mailFrom });
    const signedIn = new Browser({ app });
    assert.equal((await signedIn.post('/admin/signin', ADMIN)).statusCode, 303);
    return { app, browser: signedIn };
  }

  test('SMTP_URL in the environment takes precedence: the page says so, shows it read-only and masked, and ignores the field', async () => {
    const { app, browser } = await configuredApp({ SMTP_URL: 'smtps://ops:env-secret@relay.example.com:465' });
    try {
      const pageHtml = (await browser.get('/admin/mail')).body;
      assert.match(pageHtml, /SMTP server in SMTP_URL \(set in the environment; it takes precedence/);
      assert.match(pageHtml, /<input id="smtp_url" type="text" value="smtps:\/\/ops:\*{8}@relay\.example\.com:465" readonly>/);
      assert.doesNotMatch(pageHtml, /env-secret/);
      assert.doesNotMatch(pageHtml, /id="smtp_host"/, 'no fields to edit');
      assert.match(pageHtml, /Test connection/, 'SMTP_URL can still be tested');
      assert.equal((await browser.saveSmtp({ host: 'other.example.com', port: '25' }, 'appointments@example.com')).statusCode, 303);
      const settings = await loadSettings(inst.db.kysely);
      assert.equal(settings.smtpUrl, '', 'the field set by the environment is not saved');
      assert.equal(settings.mailFrom, 'appointments@example.com');
    } finally {
      await app.close();
    }
  });

  test('MAIL_FROM in the environment takes precedence too; with both set there is nothing to save', async () => {
    const { app, browser } = await configuredApp({ SMTP_URL: 'smtp://relay.example.com:25', MAIL_FROM: ' ops@example.com ' });
    try {
      const pageHtml = (await browser.get('/admin/mail')).body;
      assert.match(pageHtml, /<input id="mail_from" type="text" value="ops@example\.com" readonly><small>Set by MAIL_FROM/);
      assert.doesNotMatch(pageHtml, /Save sending settings/);
    } finally {
      await app.close();
    }
  });

  test('the worker sends nothing without a server, then both messages through the saved one, then through a new one', async () => {
    // as `booking serve` starts it without SMTP_URL
    worker = startOutboxWorker({ db: inst.db, smtpUrl: null, giveUpAfterMs: 3_600_000, pollIntervalMs: 50, clock: runningFrom(NOW) });
    const first = await book('2026-06-02 09:00:00', 'ada@example.com');
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(await worker.runOnce(), 0, 'no server: nothing is claimed');
    assert.deepEqual(
      (await listMessages(inst.db)).map((m) => m.state),
      ['queued', 'queued'],
    );

    const smtp = await TestSmtpServer.start();
    smtpServers.push(smtp);
    assert.equal((await browser.saveSmtp(fieldsOf(smtp), 'appointments@example.com')).statusCode, 303);
    const received = await smtp.waitFor(2);
    assert.deepEqual(received.map((m) => m.envelopeTo[0]).sort(), ['ada@example.com', 'desk@example.com']);
    assert.deepEqual(
      received.map((m) => m.envelopeFrom),
      ['appointments@example.com', 'appointments@example.com'],
      'the saved sender',
    );
    await until('both recorded as sent', async () => (await listMessages(inst.db, { state: 'sent' })).length === 2);

    // another server saved: the next messages go there, none to the old one
    const second = await TestSmtpServer.start();
    smtpServers.push(second);
    assert.equal((await browser.saveSmtp(fieldsOf(second), '')).statusCode, 303);
    assert.equal((await book('2026-06-02 10:00:00', 'bob@example.com')).statusCode, 201);
    const moved = await second.waitFor(2);
    assert.deepEqual(moved.map((m) => m.envelopeTo[0]).sort(), ['bob@example.com', 'desk@example.com']);
    assert.deepEqual(
      moved.map((m) => m.envelopeFrom),
      ['desk@example.com', 'desk@example.com'],
      'sender emptied: the notification address',
    );
    await until('all four recorded as sent', async () => (await listMessages(inst.db, { state: 'sent' })).length === 4);
    assert.equal(smtp.received.length, 2);
  });
  test('a saved URL with an option refused today (stored by an older version) is not used: messages wait, the log says why once', async () => {
    await worker?.stop();
    const smtp = await TestSmtpServer.start();
    smtpServers.push(smtp);
    // written as an older version could have saved it, past today's checks
    await inst.db.write(async (trx) => {
      await saveSetting(trx, 'mail.smtp_url', `${smtp.url}&proxy=http://127.0.0.1:9`);
      await bumpConfigVersion(trx);
    });
    const errors: string[] = [];
    const log = { info() {}, warn() {}, error: (_obj: object, msg: string) => void errors.push(msg) };
    worker = startOutboxWorker({
      db: inst.db,
      smtpUrl: null,
      giveUpAfterMs: 3_600_000,
      pollIntervalMs: 60_000,
      clock: runningFrom(NOW),
      log,
    });
    assert.equal((await book('2026-06-02 11:00:00', 'cy@example.com')).statusCode, 201);
    assert.equal(await worker.runOnce(), 0, 'nothing is claimed through the refused URL');
    assert.equal(await worker.runOnce(), 0);
    assert.equal(smtp.received.length, 0);
    assert.deepEqual(errors, ['the saved SMTP server is not used: save it again on the E-mail page'], 'logged once');
    assert.ok((await listMessages(inst.db, { state: 'queued' })).length >= 2);
  });
});
