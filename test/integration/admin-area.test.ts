// The admin area through real HTTP handling (app.inject) on SQLite and PostgreSQL: setup, sign-in,
// CSRF, throttling, schedule validation, deleting a schedule with bookings, escaping, the API switch.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { describeEachDatabase, migratedDatabase } from '../support/databases.js';
import { ADMIN, AdminBrowser } from '../support/admin-browser.js';
import { deskSchedule, testClock, testInstallation, type TestInstallation } from '../support/installation.js';
import { loadSchedules } from '../../src/db/repos/schedule.repository.js';
import { connect, type Db } from '../../src/db/connect.js';
import { buildApp } from '../../src/http/build-app.js';
import { setup } from '../../src/app/installation.js';
import { loadConfig } from '../../src/config.js';

// Monday 2026-06-01 08:00 in Berlin (06:00Z)
const NOW = Date.UTC(2026, 5, 1, 6, 0);

describeEachDatabase('admin area: setup', (dialect) => {
  let inst: TestInstallation;
  before(async () => {
    inst = await testInstallation(dialect, { now: NOW, configured: false });
  });
  after(() => inst.close());

  test('a fresh installation shows the setup page; errors stay beside the field with what was typed; setup signs in', async () => {
    const browser = new AdminBrowser(inst);
    const start = await browser.get('/admin');
    assert.equal(start.statusCode, 303);
    assert.equal(start.headers.location, '/admin/setup');
    const setupPage = await browser.get('/admin/setup');
    assert.equal(setupPage.statusCode, 200);
    assert.match(setupPage.body, /<label for="timezone">/);
    assert.match(String(setupPage.headers['content-security-policy']), /frame-ancestors 'none'/);
    assert.doesNotMatch(String(setupPage.headers['content-security-policy']), /unsafe-inline/);
    assert.equal(setupPage.headers['x-content-type-options'], 'nosniff');
    assert.ok(setupPage.headers['referrer-policy']);

    const bad = await browser.post('/admin/setup', {
      name: 'Practice <b>',
      timezone: 'Mars/Olympus',
      admin_email: 'admin@example.com',
      admin_password: ADMIN.password,
      notify_email: '',
    });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /<p class="error" id="timezone-error">[^<]*unknown time zone/i);
    assert.match(bad.body, /value="Practice &lt;b&gt;"/, 'the typed name is kept, escaped');
    assert.equal((await inst.api({ method: 'GET', url: '/api/schedules', token: null })).json().error, 'Not configured');

    const ok = await browser.post('/admin/setup', {
      name: 'Practice',
      timezone: 'Europe/Berlin',
      admin_email: ADMIN.email,
      admin_password: ADMIN.password,
      notify_email: '',
    });
    assert.equal(ok.statusCode, 303);
    assert.ok(browser.cookies.has('admin_session'));
    const setCookie = String(ok.headers['set-cookie']);
    assert.match(setCookie, /admin_session=[^;]+;.*HttpOnly/i);
    assert.match(setCookie, /SameSite=Lax/i);
    assert.equal((await browser.get('/admin/schedules')).statusCode, 200);
    // setup is gone once done
    assert.equal((await browser.get('/admin/setup')).headers.location, '/admin');
    // the API answers "API disabled" now, and carries none of the admin area's cookies or headers
    const api = await inst.api({ method: 'GET', url: '/api/schedules', token: null });
    assert.equal(api.json().error, 'API disabled');
    assert.equal(api.headers['set-cookie'], undefined);
    assert.equal(api.headers['content-security-policy'], undefined);
  });

  test('setup without the form token is refused and changes nothing', async () => {
    const fresh = await testInstallation(dialect, { now: NOW, configured: false });
    try {
      const browser = new AdminBrowser(fresh);
      const res = await browser.post(
        '/admin/setup',
        { timezone: 'Europe/Berlin', admin_email: 'x@example.com', admin_password: 'long enough pw' },
        null,
      );
      assert.equal(res.statusCode, 403);
      assert.equal((await fresh.api({ method: 'GET', url: '/api/schedules', token: null })).json().error, 'Not configured');
    } finally {
      await fresh.close();
    }
  });
});

describeEachDatabase('admin area: signed in', (dialect) => {
  let inst: TestInstallation;
  let scheduleId: number;
  before(async () => {
    inst = await testInstallation(dialect, { now: NOW, schedules: [deskSchedule({ reasons: [{ name: 'Talk', duration_minutes: 60 }] })] });
    scheduleId = inst.schedules[0]!.id;
  });
  after(() => inst.close());

  test('pages need a session; a forged cookie is not one', async () => {
    const anon = new AdminBrowser(inst);
    assert.equal((await anon.get('/admin/schedules')).headers.location, '/admin/signin');
    anon.cookies.set('admin_session', '1.99999999999999.abc.def.ghi');
    assert.equal((await anon.get('/admin/schedules')).headers.location, '/admin/signin');
  });

  test("a state-changing form without the session's CSRF token is refused and changes nothing", async () => {
    const browser = new AdminBrowser(inst);
    assert.equal((await browser.signIn()).statusCode, 303);
    const missing = await browser.post('/admin/settings/api', { enabled: 'off' }, null);
    assert.equal(missing.statusCode, 403);
    const wrong = await browser.post('/admin/settings/api', { enabled: 'off', _csrf: 'A'.repeat(43) }, null);
    assert.equal(wrong.statusCode, 403);
    assert.equal((await inst.api({ method: 'GET', url: '/api/schedules' })).statusCode, 200, 'the API is still on');
    // another session's token does not fit this session
    const other = new AdminBrowser(inst);
    await other.signIn();
    const otherToken = /name="_csrf" value="([^"]+)"/.exec((await other.get('/admin/settings')).body)![1]!;
    assert.equal((await browser.post('/admin/settings/api', { enabled: 'off', _csrf: otherToken }, null)).statusCode, 403);
    // with the right token it works, on the very next API request
    assert.equal((await browser.post('/admin/settings/api', { enabled: 'off' }, '/admin/settings')).statusCode, 303);
    assert.equal((await inst.api({ method: 'GET', url: '/api/schedules' })).json().error, 'API disabled');
    assert.equal((await browser.post('/admin/settings/api', { enabled: 'on' }, '/admin/settings')).statusCode, 303);
    assert.equal((await inst.api({ method: 'GET', url: '/api/schedules' })).statusCode, 200);
  });

  test('a generated token is shown once and works at once; the old one stops', async () => {
    const browser = new AdminBrowser(inst);
    await browser.signIn();
    const generated = await browser.post('/admin/settings/token', {}, '/admin/settings/token');
    assert.equal(generated.statusCode, 303);
    assert.equal(generated.headers.location, '/admin/settings/token/new');
    // while it waits to be shown, the database holds it only sealed (decisions §2: only the token's hash is kept)
    const held = await inst.db.kysely.selectFrom('admin_sessions').select('unshown_api_token').execute();
    const sealed = held.map((row) => row.unshown_api_token).filter((value) => value !== null);
    assert.equal(sealed.length, 1, 'one token waits to be shown');
    assert.doesNotMatch(sealed[0]!, /apm_/);
    const res = await browser.get('/admin/settings/token/new');
    const token = /<code class="token" id="new-token">(apm_[A-Za-z0-9]{64})<\/code>/.exec(res.body)?.[1];
    assert.ok(token, 'the token is on the page');
    assert.match(res.body, /stopped working immediately/);
    assert.doesNotMatch((await browser.get('/admin/settings/token/new')).body, /apm_/, 'shown once');
    assert.ok(
      !JSON.stringify(await inst.db.kysely.selectFrom('admin_sessions').selectAll().execute()).includes(token),
      'nowhere in the sessions',
    );
    assert.equal((await inst.api({ method: 'GET', url: '/api/schedules', token })).statusCode, 200);
    assert.equal((await inst.api({ method: 'GET', url: '/api/schedules' })).statusCode, 401);
    assert.doesNotMatch((await browser.get('/admin/settings')).body, new RegExp(token));
    inst.token = token;
  });

  test('schedule validation errors appear beside their field, keep what was typed, and store nothing', async () => {
    const browser = new AdminBrowser(inst);
    await browser.signIn();
    const before = (await loadSchedules(inst.db.kysely)).length;
    const form = {
      name: 'Room <7>',
      slot_interval_minutes: '15',
      min_notice_minutes: '0',
      horizon_days: '30',
      capacity: '1',
      buffer_before_minutes: '0',
      buffer_after_minutes: '0',
      'weekly_hours.mon': '12:00-09:00',
      'weekly_hours.tue': '09:00-17:00',
      'weekly_hours.wed': '',
      'weekly_hours.thu': '',
      'weekly_hours.fri': '',
      'weekly_hours.sat': '',
      'weekly_hours.sun': '',
      exceptions: '',
    };
    const res = await browser.post('/admin/schedules', form, '/admin/schedules/new');
    assert.equal(res.statusCode, 400);
    assert.match(res.body, /id="weekly_hours\.mon"[^>]*value="12:00-09:00"[^>]*aria-invalid="true"/);
    assert.match(res.body, /<p class="error" id="weekly_hours\.mon-error">[^<]*end 09:00 is not after start 12:00/i);
    assert.match(res.body, /value="Room &lt;7&gt;"/);
    const capacity = await browser.post(
      '/admin/schedules',
      { ...form, 'weekly_hours.mon': '09:00-12:00, 13:00-17:00', capacity: '0' },
      '/admin/schedules/new',
    );
    assert.equal(capacity.statusCode, 400);
    assert.match(capacity.body, /<p class="error" id="capacity-error">Enter a whole number from 1 to /);
    const exception = await browser.post(
      '/admin/schedules',
      { ...form, 'weekly_hours.mon': '09:00-12:00', exceptions: '2026-02-30 closed' },
      '/admin/schedules/new',
    );
    assert.match(exception.body, /<p class="error" id="exceptions-error">[^<]*is not a date/);
    assert.equal((await loadSchedules(inst.db.kysely)).length, before);

    const created = await browser.post(
      '/admin/schedules',
      { ...form, 'weekly_hours.mon': '09:00-12:00, 13:00-17:00', exceptions: '2026-06-08 closed\n2026-06-09 10:00-11:00' },
      '/admin/schedules/new',
    );
    assert.equal(created.statusCode, 303);
    const stored = (await loadSchedules(inst.db.kysely)).find((s) => s.name === 'Room <7>')!;
    assert.deepEqual(stored.weeklyHours.mon, [
      { start: 540, end: 720 },
      { start: 780, end: 1020 },
    ]);
    assert.deepEqual(stored.exceptions, [
      { date: '2026-06-08', hours: [] },
      { date: '2026-06-09', hours: [{ start: 600, end: 660 }] },
    ]);
    const list = await browser.get('/admin/schedules');
    assert.match(list.body, /Room &lt;7&gt;/);
  });

  test('retiring a schedule is refused with the reason while it has upcoming bookings; customer text is escaped', async () => {
    const browser = new AdminBrowser(inst);
    await browser.signIn();
    const reasonId = inst.schedules[0]!.reasons[0]!.id;
    const booked = await inst.api({
      method: 'POST',
      url: '/api/bookings',
      payload: {
        schedule: scheduleId,
        reason: reasonId,
        slot: '2026-06-02 09:00:00',
        submission: { email: 'eve@example.com', first_name: '<script>alert(1)</script>' },
      },
    });
    assert.equal(booked.statusCode, 201, booked.body);
    const detailsId = booked.json().booking_details_id as string;

    const list = await browser.get('/admin/bookings');
    assert.match(list.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.doesNotMatch(list.body, /<script>alert/);

    const refused = await browser.post(`/admin/schedules/${scheduleId}/retire`, {}, `/admin/schedules/${scheduleId}`);
    assert.equal(refused.statusCode, 409);
    assert.match(refused.body, /still has 1 upcoming booking/);
    assert.equal((await inst.api({ method: 'GET', url: `/api/reasons?schedule=${scheduleId}` })).statusCode, 200);

    const cancelled = await browser.post(`/admin/bookings/${detailsId}/cancel`, {}, `/admin/bookings/${detailsId}`);
    assert.equal(cancelled.statusCode, 303);
    const slots = await inst.api({ method: 'GET', url: `/api/slots?schedule=${scheduleId}&reason=${reasonId}&day=2026-06-02` });
    assert.ok((slots.json().data as string[]).includes('2026-06-02 09:00:00'), 'the time is free again');

    const retired = await browser.post(`/admin/schedules/${scheduleId}/retire`, {}, `/admin/schedules/${scheduleId}`);
    assert.equal(retired.statusCode, 303);
    assert.equal((await inst.api({ method: 'GET', url: `/api/reasons?schedule=${scheduleId}` })).statusCode, 404);
    // the cancelled booking is kept, under the retired schedule
    assert.match((await browser.get(`/admin/bookings/${detailsId}`)).body, /cancelled/);
    assert.equal((await browser.post(`/admin/schedules/${scheduleId}/restore`, {}, `/admin/schedules/${scheduleId}`)).statusCode, 303);
    assert.equal((await inst.api({ method: 'GET', url: `/api/reasons?schedule=${scheduleId}` })).statusCode, 200);
  });

  test('the form editor checks fields with the import rules; reasons; booking by hand; customer search', async () => {
    const browser = new AdminBrowser(inst);
    await browser.signIn();
    const schedule = (await loadSchedules(inst.db.kysely)).find((s) => s.name === 'Room <7>')!;
    const editUrl = `/admin/schedules/${schedule.id}`;
    const row = (i: number, name: string, extra: Record<string, string> = {}) => ({
      [`f${i}_position`]: String(i + 1),
      [`f${i}_name`]: name,
      [`f${i}_label`]: name,
      [`f${i}_form_type`]: 'textbox',
      [`f${i}_input_type`]: 'text',
      ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [`f${i}_${k}`, v])),
    });
    const bad = await browser.post(
      `${editUrl}/form`,
      { rows: '2', ...row(0, 'email', { input_type: 'email', required: 'on' }), ...row(1, 'size', { form_type: 'select' }) },
      editUrl,
    );
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /<p class="error" id="f1_options-error">A list needs its options/);
    assert.match(bad.body, /id="f1_name" name="f1_name" value="size"/);
    const saved = await browser.post(
      `${editUrl}/form`,
      {
        rows: '3',
        ...row(0, 'email', { input_type: 'email', required: 'on', position: '2' }),
        ...row(1, 'size', { form_type: 'select', options: 'S\nM\nL', position: '1' }),
        ...row(2, 'last_name', { remove: 'on' }),
      },
      editUrl,
    );
    assert.equal(saved.statusCode, 303);
    const form = (await loadSchedules(inst.db.kysely)).find((s) => s.id === schedule.id)!.form;
    assert.deepEqual(
      form.map((f) => [f.name, f.options]),
      [
        ['size', ['S', 'M', 'L']],
        ['email', []],
      ],
    );

    const badReason = await browser.post(`${editUrl}/reasons`, { new_reason_name: 'Check-up', new_reason_duration_minutes: '0' }, editUrl);
    assert.equal(badReason.statusCode, 400);
    assert.match(badReason.body, /<p class="error" id="new_reason_duration_minutes-error">Enter a whole number from 1 to /);
    assert.match(badReason.body, /value="Check-up"/);
    assert.equal(
      (await browser.post(`${editUrl}/reasons`, { new_reason_name: 'Check-up', new_reason_duration_minutes: '30' }, editUrl)).statusCode,
      303,
    );
    const reasonId = (await loadSchedules(inst.db.kysely)).find((s) => s.id === schedule.id)!.reasons[0]!.id;

    // by hand, Tuesday 2026-06-02 09:00-17:00 (weekly hours of the schedule created above)
    const bookUrl = `/admin/schedules/${schedule.id}/book`;
    const shown = await browser.get(`${bookUrl}?reason=${reasonId}&day=2026-06-02`);
    assert.match(shown.body, /name="time" id="slot-0" value="09:00:00"/);
    const invalid = await browser.post(
      bookUrl,
      { reason: String(reasonId), day: '2026-06-02', time: '09:00:00', 'answer.size': 'M', 'answer.email': 'not an address' },
      bookUrl,
    );
    assert.equal(invalid.statusCode, 400);
    assert.match(invalid.body, /<p class="error" id="answer\.email-error">Must be an e-mail address/);
    const made = await browser.post(
      bookUrl,
      {
        reason: String(reasonId),
        day: '2026-06-02',
        time: '09:00:00',
        'answer.size': 'M',
        'answer.email': 'Phone.Caller@Example.com',
      },
      bookUrl,
    );
    assert.equal(made.statusCode, 303);
    const details = await browser.get(String(made.headers.location));
    assert.match(details.body, /through the admin area/);
    const slots = await inst.api({ method: 'GET', url: `/api/slots?schedule=${schedule.id}&reason=${reasonId}&day=2026-06-02` });
    assert.ok(!(slots.json().data as string[]).includes('2026-06-02 09:00:00'), 'the time is taken for the API too');
    const taken = await browser.post(
      bookUrl,
      { reason: String(reasonId), day: '2026-06-02', time: '09:00:00', 'answer.size': 'S', 'answer.email': 'x@example.com' },
      bookUrl,
    );
    assert.equal(taken.statusCode, 409);
    assert.match(taken.body, /09:00 on 2026-06-02 is not a free time for Check-up/);

    // search is case-insensitive on both engines, and % is a literal character
    assert.match((await browser.get('/admin/customers?q=CALLER')).body, /Phone\.Caller@Example\.com/);
    assert.doesNotMatch((await browser.get('/admin/customers?q=%25')).body, /Phone\.Caller/);
  });

  test('repeated failed sign-ins are throttled, even with the right password afterwards', async () => {
    const browser = new AdminBrowser(inst);
    for (let i = 0; i < 5; i++) assert.equal((await browser.signIn(ADMIN.email, 'wrong password')).statusCode, 401);
    const throttled = await browser.signIn();
    assert.equal(throttled.statusCode, 429);
    assert.match(throttled.body, /Too many failed sign-ins/);
    assert.equal(browser.cookies.has('admin_session'), false);
    inst.clock.now += 16 * 60_000;
    assert.equal((await browser.signIn()).statusCode, 303);
    inst.clock.now = NOW;
  });
});

// Two apps built separately on one database, each with its own connection: two instances behind a load
// balancer. The sign-in throttle counts in the database, so both see the same failures.
describeEachDatabase('admin area: sign-in throttle shared by instances', (dialect) => {
  const clock = testClock(NOW);
  let dispose: () => Promise<void>;
  let db: Db, otherDb: Db;
  let first: FastifyInstance, second: FastifyInstance;
  before(async () => {
    const database = await migratedDatabase(dialect);
    ({ db, dispose } = database);
    await setup(db, { timezone: 'Europe/Berlin', adminEmail: ADMIN.email, adminPassword: ADMIN.password, name: 'Practice' }, NOW);
    otherDb = connect(database.target.url);
    first = await buildApp({ db, clock });
    second = await buildApp({ db: otherDb, clock });
  });
  after(async () => {
    await first.close();
    await second.close();
    await otherDb.close();
    await dispose();
  });

  const failureRows = () => db.kysely.selectFrom('sign_in_failures').selectAll().execute();

  test('failures through one instance throttle sign-in through the other; no e-mail or password is stored; old rows go', async () => {
    const a = new AdminBrowser({ app: first });
    const b = new AdminBrowser({ app: second });
    for (let i = 0; i < 3; i++) assert.equal((await a.signIn(ADMIN.email, 'wrong password')).statusCode, 401);
    for (let i = 0; i < 2; i++) assert.equal((await b.signIn(ADMIN.email, 'wrong password')).statusCode, 401);
    const throttled = await b.signIn();
    assert.equal(throttled.statusCode, 429, 'the fifth failure was the first one this instance saw');
    assert.match(throttled.body, /Too many failed sign-ins\. Try again in 15 minutes/);
    assert.equal((await a.signIn()).statusCode, 429);
    assert.equal(b.cookies.has('admin_session') || a.cookies.has('admin_session'), false);

    const rows = await failureRows();
    assert.equal(rows.length, 15, 'five failures, each under its e-mail, its address and the pair; refused attempts are not counted');
    const stored = JSON.stringify(rows);
    for (const secret of [ADMIN.email, 'wrong password', ADMIN.password, '127.0.0.1'])
      assert.ok(!stored.includes(secret), `${secret} is not stored`);

    // another e-mail from the same address fails at NOW too; its row is forgotten once the window has passed
    assert.equal((await b.post('/admin/signin', { email: 'nobody@example.com', password: 'guess' })).statusCode, 401);
    clock.now = NOW + 16 * 60_000;
    assert.equal((await b.signIn()).statusCode, 303, 'after the window the right password works on either instance');
    assert.deepEqual(await failureRows(), [], 'successes clear their keys, the rest expired');
    clock.now = NOW;
  });

  test('a burst of wrong passwords sent in parallel to both instances gets no more than five past the check', async () => {
    clock.now = NOW + 60 * 60_000;
    const browsers = Array.from({ length: 12 }, (_, i) => new AdminBrowser({ app: i % 2 ? first : second }));
    // each browser fetches its form first, so that the twelve posts then run at the same time
    const tokens = await Promise.all(
      browsers.map(async (br) => /name="_csrf" value="([^"]+)"/.exec((await br.get('/admin/signin')).body)![1]!),
    );
    const answers = await Promise.all(
      browsers.map((br, i) => br.post('/admin/signin', { email: ADMIN.email, password: `wrong ${i}`, _csrf: tokens[i]! }, null)),
    );
    const codes = answers.map((r) => r.statusCode);
    assert.ok(
      codes.every((c) => c === 401 || c === 429),
      String(codes),
    );
    const wrong = codes.filter((c) => c === 401).length;
    // attempts in flight count for each other, so a burst may even be refused whole; never more than five checked
    assert.ok(wrong <= 5, `${wrong} attempts had their password checked`);
    // one at a time, the rest of the five; in all, exactly five wrong passwords were checked
    const late = new AdminBrowser({ app: first });
    for (let i = wrong; i < 5; i++) assert.equal((await late.signIn(ADMIN.email, 'wrong again')).statusCode, 401);
    assert.equal((await late.signIn()).statusCode, 429);
    clock.now = NOW;
  });
});

// TRUST_PROXY reaches the app through the configuration (src/config.ts -> buildApp): only then does a
// proxy's X-Forwarded-Proto: https make the session cookie Secure.
describeEachDatabase('admin area: behind a reverse proxy', (dialect) => {
  let inst: TestInstallation;
  before(async () => {
    inst = await testInstallation(dialect, { now: NOW });
  });
  after(() => inst.close());

  async function signInThroughProxy(app: FastifyInstance) {
    const form = await app.inject({ method: 'GET', url: '/admin/signin' });
    const pre = (form.cookies as { name: string; value: string }[]).find((c) => c.name === 'admin_pre')!.value;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)![1]!;
    const res = await app.inject({
      method: 'POST',
      url: '/admin/signin',
      payload: new URLSearchParams({ ...ADMIN, _csrf: csrf }).toString(),
      headers: {
        cookie: `admin_pre=${pre}`,
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-proto': 'https',
        'x-forwarded-for': '203.0.113.7',
      },
    });
    assert.equal(res.statusCode, 303, res.body);
    return (res.cookies as { name: string; secure?: boolean }[]).find((c) => c.name === 'admin_session')!;
  }

  test('TRUST_PROXY=1 trusts X-Forwarded-Proto (Secure cookie); unset, the header is ignored', async () => {
    assert.equal(loadConfig({}).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: 'yes' }).trustProxy, false, 'only 1 switches it on');
    assert.equal((await signInThroughProxy(inst.app)).secure ?? false, false);
    const behindProxy = await buildApp({ db: inst.db, clock: inst.clock, trustProxy: loadConfig({ TRUST_PROXY: '1' }).trustProxy });
    try {
      assert.equal((await signInThroughProxy(behindProxy)).secure, true);
    } finally {
      await behindProxy.close();
    }
  });
});
