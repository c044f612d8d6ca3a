// SMTP settings saved in the admin area (E-mail page): validation beside the field, the password never
// shown back, SMTP_URL taking precedence, and the worker (started as `booking serve` starts it, without
// SMTP_URL) delivering through the saved server to real SMTP servers on loopback. SQLite and PostgreSQL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, testInstallation, type TestInstallation } from '../support/installation.js';
import { bumpConfigVersion, configVersion, loadSettings, saveSetting } from '../../src/db/repos/installation.repository.js';
import { startOutboxWorker, type OutboxWorker } from '../../src/app/outbox-delivery.js';
import { listMessages } from '../../src/app/outbox.js';
import { buildApp } from '../../src/http/build-app.js';
import { loadConfig } from '../../src/config.js';
import { TestSmtpServer, until } from './mail-support.js';

// Monday 2026-06-01 06:00Z = 08:00 in Berlin
const NOW = Date.UTC(2026, 5, 1, 6, 0);
const ADMIN = { email: 'admin@example.com', password: 'correct horse battery' };

/** The worker's clock starts at the installation's NOW and runs in real time. */
const runningFrom = (start: number) => {
  const real = Date.now();
  return () => start + (Date.now() - real);
};

/** A browser stand-in: keeps cookies, takes the CSRF field from the E-mail page. */
class Browser {
  cookies = new Map<string, string>();
  constructor(private readonly inst: { app: FastifyInstance }) {}

  private remember(res: LightMyRequestResponse) {
    for (const c of res.cookies as { name: string; value: string; maxAge?: number }[]) {
      if (c.value === '' || c.maxAge === 0) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    return res;
  }

  private get cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async get(url: string) {
    return this.remember(await this.inst.app.inject({ method: 'GET', url, headers: { cookie: this.cookieHeader } }));
  }

  async post(url: string, form: Record<string, string>, csrfFrom = url) {
    const token = /name="_csrf" value="([^"]+)"/.exec((await this.get(csrfFrom)).body)?.[1];
    return this.remember(
      await this.inst.app.inject({
        method: 'POST',
        url,
        payload: new URLSearchParams({ ...form, _csrf: token ?? '' }).toString(),
        headers: { cookie: this.cookieHeader, 'content-type': 'application/x-www-form-urlencoded' },
      }),
    );
  }

  saveSmtp(smtpUrl: string, mailFrom = '') {
    return this.post('/admin/mail/smtp', { smtp_url: smtpUrl, mail_from: mailFrom }, '/admin/mail');
  }
}

/** The value of the input named `name` on a page */
const fieldValue = (page: string, name: string) => new RegExp(`<input id="${name}" name="${name}"[^>]* value="([^"]*)"`).exec(page)?.[1];

describeEachDatabase('mail: SMTP settings in the admin area', (dialect) => {
  let inst: TestInstallation;
  let browser: Browser;
  const smtpServers: TestSmtpServer[] = [];
  let worker: OutboxWorker | null = null;
  let schedule: number, reason: number;

  before(async () => {
    inst = await testInstallation(dialect, {
      now: NOW,
      schedules: [
        {
          name: 'Desk',
          slot_interval_minutes: 30,
          horizon_days: 7,
          weekly_hours: ALL_WEEK([['09:00', '12:00']]),
          reasons: [{ name: 'Talk', duration_minutes: 30 }],
        },
      ],
    });
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

  test('a bad URL gets an error beside the field and changes nothing', async () => {
    const versionBefore = await configVersion(inst.db.kysely);
    for (const [url, message] of [
      ['http://mail.example.com:25', /Must start with smtp:\/\/ or smtps:\/\//],
      ['mail.example.com', /Not a URL/],
      ['smtp://', /The URL names no host/],
    ] as const) {
      const res = await browser.saveSmtp(url, 'appointments@example.com');
      assert.equal(res.statusCode, 400, url);
      assert.match(res.body, new RegExp(`<p class="error" id="smtp_url-error">${message.source}`), url);
      assert.match(res.body, /id="smtp_url"[^>]*aria-invalid="true"/);
      assert.equal(fieldValue(res.body, 'smtp_url'), url, 'what was typed is shown again');
    }
    const badFrom = await browser.saveSmtp('smtp://127.0.0.1:2525', 'not an address');
    assert.equal(badFrom.statusCode, 400);
    assert.match(badFrom.body, /<p class="error" id="mail_from-error">Must be an e-mail address/);

    const settings = await loadSettings(inst.db.kysely);
    assert.equal(settings.smtpUrl, '');
    assert.equal(settings.mailFrom, '');
    assert.equal(await configVersion(inst.db.kysely), versionBefore, 'no write happened');
    assert.match((await browser.get('/admin/mail')).body, /No SMTP server is configured/);
  });

  test('the saved password is never shown; saved again masked it is kept, but not for another server', async () => {
    const withPassword = 'smtp://booking%40example.com:s3cr%40t@mail.example.com:587/?requireTLS=true';
    assert.equal((await browser.saveSmtp(withPassword)).statusCode, 303);
    assert.equal((await loadSettings(inst.db.kysely)).smtpUrl, withPassword);
    const pageHtml = (await browser.get('/admin/mail')).body;
    assert.doesNotMatch(pageHtml, /s3cr/);
    const shown = fieldValue(pageHtml, 'smtp_url');
    assert.equal(shown, 'smtp://booking%40example.com:********@mail.example.com:587/?requireTLS=true');
    assert.match(pageHtml, /Outgoing mail is sent through the SMTP server saved below/);

    // the form saved as shown keeps the password
    assert.equal((await browser.saveSmtp(shown, 'appointments@example.com')).statusCode, 303);
    assert.equal((await loadSettings(inst.db.kysely)).smtpUrl, withPassword);
    assert.equal((await loadSettings(inst.db.kysely)).mailFrom, 'appointments@example.com');

    // the mask does not carry the password to another host
    const elsewhere = await browser.saveSmtp(shown.replace('mail.example.com', 'attacker.example.net'), 'appointments@example.com');
    assert.equal(elsewhere.statusCode, 400);
    assert.match(elsewhere.body, /<p class="error" id="smtp_url-error">The server or user changed: type the password again/);
    assert.doesNotMatch(elsewhere.body, /s3cr/);
    assert.equal((await loadSettings(inst.db.kysely)).smtpUrl, withPassword);

    // emptied: no server
    assert.equal((await browser.saveSmtp('', '')).statusCode, 303);
    assert.deepEqual([(await loadSettings(inst.db.kysely)).smtpUrl, (await loadSettings(inst.db.kysely)).mailFrom], ['', '']);
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
      assert.equal((await browser.saveSmtp('smtp://other.example.com:25', 'appointments@example.com')).statusCode, 303);
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
    assert.equal((await browser.saveSmtp(smtp.url, 'appointments@example.com')).statusCode, 303);
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
    assert.equal((await browser.saveSmtp(second.url, '')).statusCode, 303);
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
