// Issue 10, findings 3, 4, 5 and 11, through real HTTP handling (app.inject, each request from a chosen
// client address) and the real bin/booking, on SQLite and PostgreSQL: nobody elsewhere can lock the
// admin out; `booking admin reset-password`; `booking setup` refuses a finished installation; sessions
// end on the server (sign-out, idle, 7 days, password change, reset, on every instance); the password
// page is throttled; the pre-session CSRF token must be one the server signed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { describeEachDatabase, migratedDatabase } from '../support/databases.js';
import { testInstallation, type TestInstallation } from '../support/installation.js';
import { cli } from '../support/processes.js';
import { connect, type Db } from '../../src/db/connect.js';
import { buildApp } from '../../src/http/build-app.js';
import { loadSettings } from '../../src/db/repos/installation.repository.js';
import { recordSignInAttempt } from '../../src/db/repos/sign-in-failure.repository.js';
import { throttleKeys } from '../../src/app/admin-auth.js';
import { setup } from '../../src/app/installation.js';
import { Conflict } from '../../src/core/errors.js';

// Monday 2026-06-01 08:00 in Berlin (06:00Z)
const NOW = Date.UTC(2026, 5, 1, 6, 0);
const HOUR = 3_600_000;
// testInstallation's admin
const ADMIN = { email: 'admin@example.com', password: 'correct horse battery' };
const OWNER_IP = '198.51.100.10';
const ATTACKER_IP = '203.0.113.66';

/** A browser at one client address: keeps its cookies, reads the CSRF field of the last page. */
class Browser {
  cookies = new Map<string, string>();
  constructor(
    private readonly app: FastifyInstance,
    readonly ip = OWNER_IP,
  ) {}

  private remember(res: LightMyRequestResponse) {
    for (const c of res.cookies as { name: string; value: string; maxAge?: number }[]) {
      if (c.value === '' || c.maxAge === 0) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    return res;
  }

  get cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async get(url: string) {
    return this.remember(await this.app.inject({ method: 'GET', url, remoteAddress: this.ip, headers: { cookie: this.cookieHeader } }));
  }

  async post(url: string, form: Record<string, string>, { csrfFrom }: { csrfFrom?: string | null } = {}) {
    const fields = { ...form };
    if (csrfFrom !== null && fields._csrf === undefined) {
      const token = /name="_csrf" value="([^"]+)"/.exec((await this.get(csrfFrom ?? url)).body)?.[1];
      if (token) fields._csrf = token;
    }
    return this.remember(
      await this.app.inject({
        method: 'POST',
        url,
        remoteAddress: this.ip,
        payload: new URLSearchParams(fields).toString(),
        headers: { cookie: this.cookieHeader, 'content-type': 'application/x-www-form-urlencoded' },
      }),
    );
  }

  signIn(password = ADMIN.password, email = ADMIN.email) {
    return this.post('/admin/signin', { email, password });
  }

  /** 200: signed in; 303 to /admin/signin: not */
  async signedIn(): Promise<boolean> {
    const res = await this.get('/admin/bookings');
    if (res.statusCode === 200) return true;
    assert.equal(res.headers.location, '/admin/signin');
    return false;
  }
}

describeEachDatabase('admin security: sign-in throttle, reset command, setup once', (dialect) => {
  let inst: TestInstallation;
  before(async () => {
    inst = await testInstallation(dialect, { now: NOW });
  });
  after(() => inst.close());

  test('failures from an attacker elsewhere do not lock the owner out (finding 3)', async () => {
    inst.clock.now = NOW;
    const attacker = new Browser(inst.app, ATTACKER_IP);
    const codes: number[] = [];
    for (let i = 0; i < 12; i++) codes.push((await attacker.signIn(`guess ${i}`)).statusCode);
    assert.deepEqual(codes, [401, 401, 401, 401, 401, ...Array<number>(7).fill(429)], 'the attacker has five guesses at this account');
    assert.equal((await attacker.signIn()).statusCode, 429, 'even the right password is refused at that address');
    // another account from the attacker's address: the per-address bound (20) is not reached yet
    assert.equal((await attacker.signIn('x', 'other@example.com')).statusCode, 401);

    const owner = new Browser(inst.app, OWNER_IP);
    assert.equal((await owner.signIn()).statusCode, 303, 'the owner at their own address signs in');
    assert.ok(await owner.signedIn());
  });

  test('per address: 20 failures lock an address for every account; the owner elsewhere still signs in', async () => {
    inst.clock.now = NOW + 1 * HOUR;
    const spray = new Browser(inst.app, '203.0.113.77');
    const codes: number[] = [];
    for (let i = 0; i < 22; i++) codes.push((await spray.signIn('guess', `user${i}@example.com`)).statusCode);
    assert.deepEqual(codes, [...Array<number>(20).fill(401), 429, 429]);
    assert.equal((await new Browser(inst.app, '198.51.100.11').signIn()).statusCode, 303);
  });

  test('an IPv6 client is counted by its /64: fresh addresses of one subscriber line are one address', async () => {
    inst.clock.now = NOW + 2 * HOUR;
    const codes: number[] = [];
    // every attempt from another address of the same /64 (as one attacker can choose freely)
    for (let i = 0; i < 8; i++)
      codes.push((await new Browser(inst.app, `2001:db8:1:2::${(i + 1).toString(16)}`).signIn(`guess ${i}`)).statusCode);
    assert.deepEqual(codes, [401, 401, 401, 401, 401, 429, 429, 429]);
    assert.equal((await new Browser(inst.app, '2001:db8:1:3::1').signIn()).statusCode, 303, 'the next /64 is another client');
  });

  test('the slower per-account bound (100 failures in 15 minutes from anywhere), and `booking admin reset-password` clears it', async () => {
    inst.clock.now = NOW + 2 * HOUR;
    const owner = new Browser(inst.app, OWNER_IP);
    assert.equal((await owner.signIn()).statusCode, 303);
    const other = new Browser(inst.app, '198.51.100.12');
    assert.equal((await other.signIn()).statusCode, 303);
    // 100 failures of the account from many addresses (a distributed guesser), as the throttle records them
    const accountKey = throttleKeys(ADMIN.email, '192.0.2.1')[0]!;
    assert.match(accountKey, /^email:/);
    for (let i = 0; i < 100; i++) await recordSignInAttempt(inst.db.kysely, [accountKey], inst.clock.now - 60_000);
    const locked = await new Browser(inst.app, OWNER_IP).signIn();
    assert.equal(locked.statusCode, 429);
    assert.match(locked.body, /Too many failed sign-ins\. Try again in 14 minutes/);

    const reset = await cli(inst.url, 'admin', 'reset-password', '--password', 'a brand new secret');
    assert.equal(reset.code, 0, reset.stderr);
    assert.match(reset.stdout, /^Password of admin@example\.com changed \(\d+ sessions ended, sign-in lock cleared\)\.\n$/);
    assert.doesNotMatch(reset.stdout + reset.stderr, /a brand new secret/, 'the password is never printed');
    // every session ended, the lock is gone, the old password is wrong, the new one works
    assert.equal(await owner.signedIn(), false);
    assert.equal(await other.signedIn(), false);
    const fresh = new Browser(inst.app, OWNER_IP);
    assert.equal((await fresh.signIn()).statusCode, 401);
    assert.equal((await fresh.signIn('a brand new secret')).statusCode, 303);

    // without --password: a generated one, printed once, that works
    const generated = await cli(inst.url, 'admin', 'reset-password', '--email', 'ADMIN@example.com');
    assert.equal(generated.code, 0, generated.stderr);
    const password = /^New password for admin@example\.com: (\S{16})\n/.exec(generated.stdout)?.[1];
    assert.ok(password, generated.stdout);
    assert.equal(await fresh.signedIn(), false);
    assert.equal((await new Browser(inst.app, OWNER_IP).signIn(password)).statusCode, 303);

    for (const args of [
      ['admin', 'reset-password', '--email', 'nobody@example.com', '--password', 'long enough'],
      ['admin', 'reset-password', '--password', 'short'],
      ['admin', 'frobnicate'],
    ]) {
      const r = await cli(inst.url, ...args);
      assert.notEqual(r.code, 0, args.join(' '));
      assert.match(r.stderr, /^booking: \S.*\n/, args.join(' '));
    }
    // put the test installation's password back for the tests after this one
    assert.equal((await cli(inst.url, 'admin', 'reset-password', '--password', ADMIN.password)).code, 0);
  });

  test('`booking setup` on a finished installation refuses: non-zero, one line on stderr, nothing changed', async () => {
    inst.clock.now = NOW + 3 * HOUR;
    const before = await loadSettings(inst.db.kysely);
    const r = await cli(
      inst.url,
      'setup',
      '--timezone',
      'America/New_York',
      '--admin-email',
      ADMIN.email,
      '--admin-password',
      'the attacker password',
      '--notify-email',
      'attacker@example.com',
      '--name',
      'Taken over',
    );
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /^booking: the installation is already set up; nothing was changed[^\n]*\n$/);
    assert.equal(r.stdout, '');
    assert.deepEqual(await loadSettings(inst.db.kysely), before);
    const admins = await inst.db.kysely.selectFrom('admins').select('email').execute();
    assert.deepEqual(admins, [{ email: ADMIN.email }]);
    const browser = new Browser(inst.app, '198.51.100.13');
    assert.equal((await browser.signIn('the attacker password')).statusCode, 401);
    assert.equal((await browser.signIn()).statusCode, 303, 'the admin password is unchanged');
  });
});

describeEachDatabase('admin security: two setups at the same moment', (dialect) => {
  test('exactly one succeeds; the other changes nothing', async () => {
    const { db, dispose } = await migratedDatabase(dialect);
    try {
      const run = (email: string) => setup(db, { timezone: 'Europe/Berlin', adminEmail: email, adminPassword: 'long enough pw' }, NOW);
      const results = await Promise.allSettled([run('first@example.com'), run('second@example.com'), run('third@example.com')]);
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1, JSON.stringify(results));
      for (const r of results) if (r.status === 'rejected') assert.ok(r.reason instanceof Conflict, String(r.reason));
      assert.equal((await db.kysely.selectFrom('admins').select('email').execute()).length, 1);
    } finally {
      await dispose();
    }
  });
});

describeEachDatabase('admin security: server-side sessions', (dialect) => {
  let inst: TestInstallation;
  let otherDb: Db;
  let second: FastifyInstance;
  before(async () => {
    inst = await testInstallation(dialect, { now: NOW });
    // a second instance on the same database, with its own connection
    otherDb = connect(inst.url);
    second = await buildApp({ db: otherDb, clock: inst.clock });
  });
  after(async () => {
    await second.close();
    await otherDb.close();
    await inst.close();
  });

  const sessionRows = () => inst.db.kysely.selectFrom('admin_sessions').selectAll().execute();

  test('signing out ends the session on the server, on every instance; only a hash of the id is stored (finding 4)', async () => {
    inst.clock.now = NOW;
    const browser = new Browser(inst.app);
    assert.equal((await browser.signIn()).statusCode, 303);
    const cookie = browser.cookies.get('admin_session')!;
    assert.ok(cookie);
    const stored = JSON.stringify(await sessionRows());
    assert.ok(!stored.includes(cookie), 'the session id itself is not stored');
    // a copy of the cookie, as a thief or a shared computer would keep it, works on both instances
    const copy = new Browser(second);
    copy.cookies.set('admin_session', cookie);
    assert.ok(await copy.signedIn());

    assert.equal((await browser.post('/admin/signout', {}, { csrfFrom: '/admin/bookings' })).statusCode, 303);
    assert.equal(browser.cookies.has('admin_session'), false);
    assert.equal(await copy.signedIn(), false, 'the copy ends with the sign-out, on the other instance too');
    const back = new Browser(inst.app);
    back.cookies.set('admin_session', cookie);
    assert.equal(await back.signedIn(), false);
    assert.deepEqual(await sessionRows(), []);
  });

  test('a session ends after 8 hours without a request, and 7 days after sign-in whatever its use', async () => {
    inst.clock.now = NOW;
    const idle = new Browser(inst.app);
    assert.equal((await idle.signIn()).statusCode, 303);
    inst.clock.now += 7 * HOUR + 59 * 60_000;
    assert.ok(await idle.signedIn(), 'used again within 8 hours');
    inst.clock.now += 7 * HOUR + 59 * 60_000;
    assert.ok(await idle.signedIn(), 'each request starts the 8 hours again');
    inst.clock.now += 8 * HOUR;
    assert.equal(await idle.signedIn(), false, '8 hours without a request');

    inst.clock.now = NOW;
    const busy = new Browser(second);
    assert.equal((await busy.signIn()).statusCode, 303);
    for (let t = 6 * HOUR; t < 7 * 24 * HOUR; t += 6 * HOUR) {
      inst.clock.now = NOW + t;
      assert.ok(await busy.signedIn(), `${t / HOUR} hours after sign-in`);
    }
    inst.clock.now = NOW + 7 * 24 * HOUR;
    assert.equal(await busy.signedIn(), false, '7 days after sign-in');
    inst.clock.now = NOW;
  });

  test('last_seen_at is written at most once a minute per session', async () => {
    inst.clock.now = NOW + 30 * 24 * HOUR;
    const browser = new Browser(inst.app);
    assert.equal((await browser.signIn()).statusCode, 303);
    const seen = async () => (await sessionRows()).map((r) => Number(r.last_seen_at));
    assert.deepEqual(await seen(), [inst.clock.now]);
    const signedInAt = inst.clock.now;
    inst.clock.now += 59_000;
    assert.ok(await browser.signedIn());
    assert.deepEqual(await seen(), [signedInAt], 'no write within the minute');
    inst.clock.now += 1_000;
    assert.ok(await browser.signedIn());
    assert.deepEqual(await seen(), [inst.clock.now]);
  });

  test("a password change ends the admin's other sessions; the current-password check is throttled (finding 5)", async () => {
    inst.clock.now = NOW + 40 * 24 * HOUR;
    const mine = new Browser(inst.app, OWNER_IP);
    const elsewhere = new Browser(second, '198.51.100.20');
    assert.equal((await mine.signIn()).statusCode, 303);
    assert.equal((await elsewhere.signIn()).statusCode, 303);

    // someone with a stolen session guesses the current password
    const thief = new Browser(inst.app, ATTACKER_IP);
    thief.cookies.set('admin_session', elsewhere.cookies.get('admin_session')!);
    const change = (browser: Browser, current: string, next = 'another long one') =>
      browser.post(
        '/admin/password',
        { current_password: current, new_password: next, repeat_password: next },
        { csrfFrom: '/admin/password' },
      );
    for (let i = 0; i < 5; i++) {
      const wrong = await change(thief, `guess ${i}`);
      assert.equal(wrong.statusCode, 400);
      assert.match(wrong.body, /The current password is wrong/);
    }
    const refused = await change(thief, ADMIN.password);
    assert.equal(refused.statusCode, 429, 'the sixth try is refused, even with the right password');
    assert.match(refused.body, /Too many wrong passwords\. Try again in 15 minutes/);
    // nothing changed, and the owner at their own address is not affected
    assert.equal((await new Browser(inst.app, '198.51.100.21').signIn()).statusCode, 303);

    assert.equal((await change(mine, ADMIN.password, 'a changed password')).statusCode, 303);
    assert.ok(await mine.signedIn(), 'this browser has a new session');
    assert.equal(await elsewhere.signedIn(), false, 'the other browser is signed out');
    assert.equal(await thief.signedIn(), false);
    assert.equal((await change(mine, 'a changed password', ADMIN.password)).statusCode, 303);
  });
});

describeEachDatabase('admin security: the pre-session CSRF token is one the server signed (finding 11)', (dialect) => {
  let inst: TestInstallation;
  before(async () => {
    inst = await testInstallation(dialect, { now: NOW });
  });
  after(() => inst.close());

  async function signInWith(token: string) {
    return inst.app.inject({
      method: 'POST',
      url: '/admin/signin',
      remoteAddress: OWNER_IP,
      payload: new URLSearchParams({ ...ADMIN, _csrf: token }).toString(),
      headers: { cookie: `admin_pre=${token}`, 'content-type': 'application/x-www-form-urlencoded' },
    });
  }

  test('a cookie value the client chose is no token, even when the form repeats it', async () => {
    for (const chosen of ['A'.repeat(24), 'attacker-chosen-value-123', `${'A'.repeat(24)}.${'B'.repeat(43)}`]) {
      const res = await signInWith(chosen);
      assert.equal(res.statusCode, 403, chosen);
      assert.match(res.body, /Form expired/);
    }
    // the token the server issued works
    const form = await inst.app.inject({ method: 'GET', url: '/admin/signin', remoteAddress: OWNER_IP });
    const issued = (form.cookies as { name: string; value: string }[]).find((c) => c.name === 'admin_pre')!.value;
    assert.equal(/name="_csrf" value="([^"]+)"/.exec(form.body)![1], issued);
    assert.equal((await signInWith(issued)).statusCode, 303);
    // a planted, unsigned cookie is replaced by a signed one on the next page
    const page = await inst.app.inject({ method: 'GET', url: '/admin/signin', headers: { cookie: `admin_pre=${'A'.repeat(24)}` } });
    const replaced = (page.cookies as { name: string; value: string }[]).find((c) => c.name === 'admin_pre')?.value;
    assert.ok(replaced && replaced !== 'A'.repeat(24));
  });
});
