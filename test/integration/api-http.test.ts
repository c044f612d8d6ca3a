// The HTTP-level promises of issue 12 through real HTTP, on SQLite and PostgreSQL: X-Request-Id, the
// RateLimit-* headers, WWW-Authenticate on 401, 405 with Allow, the contract's error shape for what Fastify
// and Node answer before our code (a broken %-escape, broken JSON on a kept-alive connection, shutdown),
// compression of large answers only, and the OpenAPI document's validators.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect as connectTcp, type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { request as httpRequest } from 'node:http';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, testInstallation, type TestInstallation } from '../support/installation.js';
import { generateToken, setOperatorSetting } from '../../src/app/installation.js';
import { connect } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { buildApp } from '../../src/http/build-app.js';

// Monday 2026-06-01 08:00 in Berlin (06:00Z)
const NOW = Date.UTC(2026, 5, 1, 6, 0);

/** GET/any over node:http, so Accept-Encoding is what the test says (fetch adds its own) and the body stays raw. */
function raw(
  origin: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${origin}${path}`, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describeEachDatabase('HTTP headers and errors of the API', (dialect) => {
  let inst: TestInstallation;
  let origin: string;
  let desk: number, talk: number;
  let auth: Record<string, string>;
  before(async () => {
    inst = await testInstallation(dialect, {
      now: NOW,
      schedules: [
        {
          name: 'Desk',
          slot_interval_minutes: 5,
          horizon_days: 60,
          weekly_hours: ALL_WEEK([['00:00', '24:00']]),
          exceptions: [{ date: '2026-06-02', hours: [['09:00', '09:30']] }],
          reasons: [{ name: 'Talk', duration_minutes: 5 }],
        },
      ],
    });
    desk = inst.schedules[0]!.id;
    talk = inst.schedules[0]!.reasons[0]!.id;
    auth = { authorization: `Bearer ${inst.token}` };
    await inst.app.listen({ host: '127.0.0.1', port: 0 });
    origin = `http://127.0.0.1:${(inst.app.server.address() as AddressInfo).port}`;
  });
  after(() => inst.close());

  test('X-Request-Id: a sane client id is echoed, anything else replaced by a generated one, on every answer', async () => {
    const echoed = await raw(origin, 'GET', '/api/schedules', { ...auth, 'x-request-id': 'shop-42:retry.1_a-b' });
    assert.equal(echoed.headers['x-request-id'], 'shop-42:retry.1_a-b');
    for (const sent of ['has space', 'x'.repeat(201), 'semi;colon']) {
      const res = await raw(origin, 'GET', '/api/schedules', { ...auth, 'x-request-id': sent });
      assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/, sent);
    }
    const a = await raw(origin, 'GET', '/api/schedules');
    const b = await raw(origin, 'GET', '/api/nothing', auth);
    const c = await raw(origin, 'GET', '/healthz');
    assert.equal(a.status, 401);
    assert.equal(b.status, 404);
    const ids = [a, b, c].map((r) => String(r.headers['x-request-id']));
    assert.ok(ids.every((id) => /^[0-9a-f-]{36}$/.test(id)));
    assert.equal(new Set(ids).size, 3);
  });

  test('401 carries WWW-Authenticate: Bearer, and no rate-limit headers (no token was accepted)', async () => {
    const res = await raw(origin, 'GET', '/api/schedules', { authorization: 'Bearer apm_wrong' });
    assert.equal(res.status, 401);
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="api"');
    assert.equal(res.headers['ratelimit-limit'], undefined);
    assert.deepEqual(JSON.parse(res.body.toString()), { error: 'Unauthorized' });
  });

  test('RateLimit-Limit/-Remaining/-Reset on every answer to an accepted token, 429 included', async () => {
    await setOperatorSetting(inst.db, 'api.rate_limit_per_minute', '3');
    // a new token: a fresh window (docs/decisions.md §3)
    inst.token = await generateToken(inst.db);
    auth = { authorization: `Bearer ${inst.token}` };
    try {
      const seen = [];
      for (const path of ['/api/schedules', `/api/reasons?schedule=${desk}`, '/api/reasons?schedule=999', '/api/schedules']) {
        const res = await raw(origin, 'GET', path, auth);
        seen.push([res.status, res.headers['ratelimit-limit'], res.headers['ratelimit-remaining'], res.headers['ratelimit-reset']]);
        if (res.status === 429) assert.equal(res.headers['retry-after'], res.headers['ratelimit-reset']);
      }
      // the window opened with the first request and the test clock stands still: 60 s left throughout
      assert.deepEqual(seen, [
        [200, '3', '2', '60'],
        [200, '3', '1', '60'],
        [404, '3', '0', '60'],
        [429, '3', '0', '60'],
      ]);
      inst.clock.now += 45_500;
      assert.equal((await raw(origin, 'GET', '/api/schedules', auth)).headers['ratelimit-reset'], '15');
    } finally {
      inst.clock.now = NOW + 61_000;
      await setOperatorSetting(inst.db, 'api.rate_limit_per_minute', '300');
    }
  });

  test('a known path with another method answers 405 with Allow, after the gate; an unknown path stays 404', async () => {
    const del = await raw(origin, 'DELETE', '/api/bookings', auth);
    assert.equal(del.status, 405);
    assert.equal(del.headers.allow, 'POST');
    assert.deepEqual(JSON.parse(del.body.toString()), { error: 'Method Not Allowed' });
    const post = await raw(origin, 'POST', '/api/schedules?x=1', { ...auth, 'content-type': 'application/json' }, '{}');
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
    assert.equal((await raw(origin, 'PUT', '/api/schedules')).status, 401, 'the gate comes first (docs/decisions.md §1)');
    const openapi = await raw(origin, 'POST', '/api/openapi.json', auth);
    assert.equal(openapi.status, 405);
    assert.equal(openapi.headers.allow, 'GET, HEAD');
    assert.equal((await raw(origin, 'DELETE', '/api/nothing', auth)).status, 404);
  });

  test('a broken %-escape in the path answers in the contract shape (under /api, after the gate: 404, else 400)', async () => {
    const get = await raw(origin, 'GET', '/api/sched%zzules', auth);
    assert.equal(get.status, 404);
    assert.deepEqual(JSON.parse(get.body.toString()), { error: 'Not Found' });
    const post = await raw(origin, 'POST', '/api/book%zzings', { ...auth, 'content-type': 'application/json' }, '{}');
    assert.equal(post.status, 404);
    assert.deepEqual(JSON.parse(post.body.toString()), { error: 'Not Found' });
    const outside = await raw(origin, 'POST', '/admin/sign%zzin', { 'content-type': 'application/json' }, '{}');
    assert.equal(outside.status, 400);
    assert.deepEqual(JSON.parse(outside.body.toString()), { error: 'Bad Request' });
  });

  test('broken JSON answers 400 {"error"} and the kept-alive connection answers the next request', async () => {
    const body = '{"schedule": 1,';
    const answers = await new Promise<string>((resolve, reject) => {
      const socket = connectTcp(Number(new URL(origin).port), '127.0.0.1', () => {
        socket.write(
          `POST /api/bookings HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${inst.token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        );
        // the second request on the same connection, once the first is answered
        setTimeout(
          () => socket.write(`GET /api/schedules HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${inst.token}\r\nConnection: close\r\n\r\n`),
          300,
        );
      });
      let text = '';
      socket.setEncoding('latin1');
      socket.on('data', (d: string) => (text += d));
      socket.on('error', reject);
      socket.setTimeout(5000, () => socket.destroy(new Error(`no second answer within 5 s:\n${text}`)));
      socket.on('close', () => resolve(text));
    });
    const statuses = [...answers.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]);
    assert.deepEqual(statuses, ['400', '200'], answers);
    assert.ok(answers.includes('{"error":"Invalid JSON"}'), answers);
    assert.doesNotMatch(answers.split('\r\n\r\n')[0]!, /connection: close/i);
  });

  test('large answers are compressed when asked (br, gzip); small ones and unasked ones are not', async () => {
    // a whole day on a 5-minute grid: 288 free times
    const days = `/api/slots?schedule=${desk}&reason=${talk}&day=2026-06-03`;
    const plain = await raw(origin, 'GET', days, auth);
    assert.ok(plain.body.length > 1024, `the /slots answer is ${plain.body.length} bytes`);
    assert.equal(plain.headers['content-encoding'], undefined);
    const br = await raw(origin, 'GET', days, { ...auth, 'accept-encoding': 'br, gzip' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.deepEqual(brotliDecompressSync(br.body), plain.body);
    assert.match(String(br.headers.vary), /accept-encoding/i);
    const gz = await raw(origin, 'GET', days, { ...auth, 'accept-encoding': 'gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.deepEqual(gunzipSync(gz.body), plain.body);
    // 2026-06-02 is open 09:00-09:30 only: a small answer
    const small = await raw(origin, 'GET', `/api/slots?schedule=${desk}&reason=${talk}&day=2026-06-02`, {
      ...auth,
      'accept-encoding': 'gzip',
    });
    assert.equal(small.status, 200);
    assert.ok(small.body.length < 1024);
    assert.equal(small.headers['content-encoding'], undefined);
    const schedules = await raw(origin, 'GET', '/api/schedules', { ...auth, 'accept-encoding': 'gzip' });
    assert.equal(schedules.headers['content-encoding'], undefined);
  });

  test('/api/openapi.json: ETag, Cache-Control, 304 on If-None-Match, compressed when asked', async () => {
    const first = await raw(origin, 'GET', '/api/openapi.json');
    assert.equal(first.status, 200);
    const etag = String(first.headers.etag);
    assert.match(etag, /^W\/"[A-Za-z0-9_-]+"$/);
    assert.match(String(first.headers['cache-control']), /max-age=\d+/);
    const again = await raw(origin, 'GET', '/api/openapi.json', { 'if-none-match': etag });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    assert.equal((await raw(origin, 'GET', '/api/openapi.json', { 'if-none-match': '"other", ' + etag.slice(2) })).status, 304);
    assert.equal((await raw(origin, 'GET', '/api/openapi.json', { 'if-none-match': 'W/"other"' })).status, 200);
    const gz = await raw(origin, 'GET', '/api/openapi.json', { 'accept-encoding': 'gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.deepEqual(gunzipSync(gz.body), first.body);
    assert.equal(gz.headers.etag, etag);
  });
});

test("the server's log line for a request carries its X-Request-Id", async () => {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const db = connect('sqlite::memory:');
  await migrate(db);
  const app = await buildApp({ db, logger: { level: 'warn', stream } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    // a database gone under the server: the request fails, and its log line says which request it was
    await db.close();
    const res = await raw(origin, 'GET', '/api/schedules', { 'x-request-id': 'trace-7781' });
    assert.equal(res.status, 500);
    assert.equal(res.headers['x-request-id'], 'trace-7781');
    const logged = lines.filter((l) => l.reqId === 'trace-7781');
    assert.equal(logged.length, 1, JSON.stringify(lines));
    assert.equal(logged[0]!.msg, 'request failed');
  } finally {
    await app.close();
  }
});
