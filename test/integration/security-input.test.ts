// Issue 10 through real HTTP handling (app.inject) on SQLite and PostgreSQL: control characters and NUL
// bytes in a booking, odd input types in the admin area, the admin body limit, TRUST_PROXY hops.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { InjectOptions } from 'fastify';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, testInstallation, type TestInstallation } from '../support/installation.js';
import { buildApp } from '../../src/http/build-app.js';
import { loadConfig } from '../../src/config.js';
import { listMessages } from '../../src/app/outbox.js';

const NOW = Date.UTC(2026, 5, 1, 6, 0);
const SCHEDULE = {
  name: 'Desk',
  weekly_hours: ALL_WEEK([['09:00', '12:00']]),
  reasons: [{ name: 'Visit', duration_minutes: 30 }],
  form: {
    first_name: { label: 'First name', input_type: 'text' },
    email: { label: 'E-mail', input_type: 'email', required: true },
    notes: { label: 'Notes', form_type: 'textarea', input_type: 'text' },
  },
};

describeEachDatabase('security: input', (dialect) => {
  let inst: TestInstallation;
  let schedule: number, reason: number;
  before(async () => {
    inst = await testInstallation(dialect, { now: NOW, schedules: [SCHEDULE] });
    schedule = inst.schedules[0]!.id;
    reason = inst.schedules[0]!.reasons[0]!.id;
  });
  after(() => inst.close());

  const book = (submission: Record<string, unknown>) =>
    inst.api({ method: 'POST', url: '/api/bookings', payload: { schedule, reason, slot: '2026-06-02 09:00:00', submission } });

  test('#7 a NUL byte or another control character in any submission value answers 400 with field, never 500', async () => {
    for (const [submission, field] of [
      [{ email: 'ada@example.com', first_name: 'Ada\u0000' }, 'first_name'],
      [{ email: 'ada@example.com', notes: 'a\u0000b' }, 'notes'],
      [{ email: 'ada\u0000@example.com' }, 'email'],
      [{ email: 'ada@example.com\u007f' }, 'email'],
      [{ email: 'ada@example.com', first_name: 'Ada\r\nBcc: victim@example.org' }, 'first_name'],
      [{ email: 'ada@example.com', first_name: '\u202eadA' }, 'first_name'],
    ] as const) {
      const res = await book(submission);
      assert.equal(res.statusCode, 400, `${JSON.stringify(submission)}: ${res.body}`);
      assert.equal(JSON.parse(res.body).field, field);
    }
    const multiLine = await book({ email: 'ada@example.com', notes: 'line one\r\nline two' });
    assert.equal(multiLine.statusCode, 201, multiLine.body);
  });

  test('#8 the admin area takes form bodies only (415 before sign-in), repeated parameters and NUL bytes are a 400 page', async () => {
    const json = await inst.app.inject({ method: 'POST', url: '/admin/signin', payload: { email: {} } });
    assert.equal(json.statusCode, 415, json.body);
    assert.match(String(json.headers['content-type']), /text\/html/);
    const text = await inst.app.inject({
      method: 'POST',
      url: '/admin/signin',
      payload: 'email=a',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(text.statusCode, 415);
    for (const url of [
      '/admin/signin?q=a&q=b',
      '/admin/customers?q=a&q=b',
      '/admin/customers?q=%00',
      '/admin/bookings/%00x',
      '/admin/mail/1%00',
    ]) {
      const res = await inst.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 400, `${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      assert.match(res.body, /<title>/);
    }
    const nulForm = await inst.app.inject({
      method: 'POST',
      url: '/admin/signin',
      payload: 'email=a%00%40example.com&password=x&_csrf=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(nulForm.statusCode, 400);
    assert.match(nulForm.body, /email/);
  });

  test('#2 120,000 "-" in the weekly hours are refused by the admin body limit (413) before any parsing', async () => {
    const payload = `name=Desk&mon=${'-'.repeat(120_000)}&_csrf=x&`.padEnd(140 * 1024, 'x');
    const res = await inst.app.inject({
      method: 'POST',
      url: '/admin/schedules/1',
      payload,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(res.statusCode, 413, res.body.slice(0, 200));
  });

  test('#6 TRUST_PROXY=1 trusts the one proxy in front: a spoofed first X-Forwarded-For entry is not the client', async () => {
    const app = await buildApp({ db: inst.db, clock: inst.clock, trustProxy: loadConfig({ TRUST_PROXY: '1' }).trustProxy });
    app.get('/whoami', async (request) => ({ ip: request.ip }));
    try {
      const res = await app.inject({
        method: 'GET',
        url: '/whoami',
        remoteAddress: '10.0.0.2',
        headers: { 'x-forwarded-for': '198.51.100.66, 203.0.113.7' },
      });
      assert.equal(JSON.parse(res.body).ip, '203.0.113.7', 'the address nginx appended, not the one the client wrote');
    } finally {
      await app.close();
    }
    const byAddress = await buildApp({ db: inst.db, clock: inst.clock, trustProxy: loadConfig({ TRUST_PROXY: '10.0.0.0/8' }).trustProxy });
    byAddress.get('/whoami', async (request) => ({ ip: request.ip }));
    try {
      const fromProxy = await byAddress.inject({
        method: 'GET',
        url: '/whoami',
        remoteAddress: '10.0.0.2',
        headers: { 'x-forwarded-for': '198.51.100.66, 203.0.113.7' },
      });
      assert.equal(JSON.parse(fromProxy.body).ip, '203.0.113.7');
      const direct = await byAddress.inject({
        method: 'GET',
        url: '/whoami',
        remoteAddress: '192.0.2.9',
        headers: { 'x-forwarded-for': '203.0.113.7' },
      });
      assert.equal(JSON.parse(direct.body).ip, '192.0.2.9', 'a client that is not the proxy cannot name itself');
    } finally {
      await byAddress.close();
    }
  });

  /** Signs in as the test installation's admin; returns the Cookie header to send. */
  async function signIn(): Promise<string> {
    const form = await inst.app.inject({ method: 'GET', url: '/admin/signin' });
    const jar = new Map((form.cookies as { name: string; value: string }[]).map((c) => [c.name, c.value]));
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)![1]!;
    const res = await inst.app.inject({
      method: 'POST',
      url: '/admin/signin',
      payload: new URLSearchParams({ email: 'admin@example.com', password: 'correct horse battery', _csrf: csrf }).toString(),
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(res.statusCode, 303, res.body);
    for (const c of res.cookies as { name: string; value: string }[]) jar.set(c.name, c.value);
    return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  test("#13 the e-mail preview is its own document with its own CSP: the message's inline styles, nothing that runs or loads", async () => {
    const booked = await inst.api({
      method: 'POST',
      url: '/api/bookings',
      payload: { schedule, reason, slot: '2026-06-02 10:00:00', submission: { email: 'grace@example.com', first_name: 'Grace' } },
    });
    assert.equal(booked.statusCode, 201, booked.body);
    const [message] = await listMessages(inst.db, { detailsId: booked.json().booking_details_id as string });
    const cookie = await signIn();
    const pageRes = await inst.app.inject({ method: 'GET', url: `/admin/mail/${message!.id}`, headers: { cookie } });
    assert.equal(pageRes.statusCode, 200);
    assert.match(pageRes.body, new RegExp(`<iframe [^>]*sandbox="" src="/admin/mail/${message!.id}/preview"`));
    assert.doesNotMatch(pageRes.body, /srcdoc=/, 'a srcdoc document would inherit the admin CSP, which blocks its styles');

    const preview = await inst.app.inject({ method: 'GET', url: `/admin/mail/${message!.id}/preview`, headers: { cookie } });
    assert.equal(preview.statusCode, 200);
    assert.match(preview.body, /^<!doctype html>/);
    assert.match(preview.body, /style="font-family:sans-serif/);
    const csp = String(preview.headers['content-security-policy']);
    assert.match(csp, /style-src 'unsafe-inline'/);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /(^|; )sandbox($|;)/);
    assert.match(csp, /frame-ancestors 'self'/);
    assert.doesNotMatch(csp, /script-src|unsafe-eval/);
    assert.equal(preview.headers['x-frame-options'], 'SAMEORIGIN');
    assert.equal(preview.headers['cache-control'], 'no-store');
    const anonymous = await inst.app.inject({ method: 'GET', url: `/admin/mail/${message!.id}/preview` });
    assert.equal(anonymous.statusCode, 303, 'signed-in only');
  });

  test('#8 nothing an anonymous client sends to the admin area writes an error-level log line or answers 500; signed in, odd queries are a 400 page', async () => {
    const lines: { level: number; msg?: string }[] = [];
    const stream = { write: (line: string) => void lines.push(JSON.parse(line) as { level: number }) };
    const app = await buildApp({ db: inst.db, clock: inst.clock, logger: { level: 'info', stream } });
    try {
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      const requests: InjectOptions[] = [
        { method: 'POST', url: '/admin/signin', payload: { email: {} } },
        { method: 'POST', url: '/admin/signin', payload: 'email=a&email=b&password=x&_csrf=y', headers: form },
        { method: 'POST', url: '/admin/signin', payload: 'email=%00&password=%00', headers: form },
        { method: 'POST', url: '/admin/signin', payload: 'x'.repeat(200_000), headers: form },
        { method: 'POST', url: '/admin/setup', payload: '<xml/>', headers: { 'content-type': 'application/xml' } },
        { method: 'GET', url: '/admin/signin?q=a&q=b' },
        { method: 'GET', url: '/admin/customers?q=%00' },
        { method: 'GET', url: '/admin/bookings/%00' },
        { method: 'GET', url: '/admin/%00' },
        { method: 'GET', url: '/admin/bookings', headers: { cookie: 'admin_session=%00; admin_pre=%00' } },
      ];
      for (const r of requests) {
        const res = await app.inject(r);
        assert.ok(res.statusCode < 500, `${JSON.stringify([r.method, r.url])}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      }
      // signed in, the same input used to reach the handlers (and, with a NUL byte, PostgreSQL: 500)
      const cookie = await signIn();
      for (const url of [
        '/admin/customers?q=%00',
        '/admin/customers?q=a&q=b',
        '/admin/bookings?q=a%00',
        '/admin/mail?state=%00',
        '/admin/bookings/%00x',
      ]) {
        const res = await app.inject({ method: 'GET', url, headers: { cookie } });
        assert.equal(res.statusCode, 400, `${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      }
      const errors = lines.filter((l) => l.level >= 50);
      assert.deepEqual(errors, [], JSON.stringify(errors));
    } finally {
      await app.close();
    }
  });

  test('#2 the slow-regex payload itself (120,000 "-" as Monday\'s hours, signed in) is refused beside the field, and /healthz answers meanwhile', async () => {
    const cookie = await signIn();
    // with its one-time form token in the address, the page answers at once (without, it redirects to get one)
    const pageRes = await inst.app.inject({
      method: 'GET',
      url: `/admin/schedules/${schedule}?form=${'a'.repeat(24)}`,
      headers: { cookie },
    });
    const csrf = /name="_csrf" value="([^"]+)"/.exec(pageRes.body)![1]!;
    const fields = new URLSearchParams({
      _csrf: csrf,
      name: 'Desk',
      slot_interval_minutes: '15',
      min_notice_minutes: '0',
      horizon_days: '60',
      capacity: '1',
      buffer_before_minutes: '0',
      buffer_after_minutes: '0',
      'weekly_hours.mon': '-'.repeat(120_000),
      exceptions: `2026-12-24 ${'-'.repeat(10_000)}`,
    }).toString();
    assert.ok(fields.length < 128 * 1024, 'under the body limit: the field cap and the linear parse are what is tested');
    const [res, health] = await Promise.all([
      inst.app.inject({
        method: 'POST',
        url: `/admin/schedules/${schedule}`,
        payload: fields,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      }),
      inst.app.inject({ method: 'GET', url: '/healthz' }),
    ]);
    assert.equal(res.statusCode, 400);
    assert.match(res.body, /id="weekly_hours\.mon-error">[^<]*at most 2000 characters/);
    assert.equal(health.statusCode, 200);
  });
});
