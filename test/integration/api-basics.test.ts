// The contract's statuses through real HTTP handling (app.inject), on SQLite and PostgreSQL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachDatabase } from '../support/databases.js';
import { deskSchedule, testInstallation, type TestInstallation } from '../support/installation.js';

// Monday 2026-06-01 08:00 in Berlin (06:00Z)
const NOW = Date.UTC(2026, 5, 1, 6, 0);

describeEachDatabase('API gate and errors', (dialect) => {
  let inst: TestInstallation;
  before(async () => {
    inst = await testInstallation(dialect, { now: NOW, schedules: [deskSchedule({ reasons: [{ name: 'Talk', duration_minutes: 60 }] })] });
  });
  after(() => inst.close());

  test('errors are JSON {"error"} with a JSON content type; unknown paths under /api are 404', async () => {
    const res = await inst.api({ method: 'GET', url: '/api/nothing-here' });
    assert.equal(res.statusCode, 404);
    assert.match(String(res.headers['content-type']), /application\/json/);
    assert.equal(typeof res.json().error, 'string');
  });

  test('401 for a missing or wrong token; the scheme is case-insensitive', async () => {
    assert.equal((await inst.api({ method: 'GET', url: '/api/schedules', token: null })).statusCode, 401);
    // Change the last character to one it is not: a fixed replacement would be the real token 1 time in 62.
    const wrong = inst.token.slice(0, -1) + (inst.token.endsWith('X') ? 'Y' : 'X');
    const refused = await inst.api({ method: 'GET', url: '/api/schedules', token: wrong });
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.json().error, 'Unauthorized');
    const lower = await inst.app.inject({ method: 'GET', url: '/api/schedules', headers: { authorization: `bearer ${inst.token}` } });
    assert.equal(lower.statusCode, 200);
  });

  test('ids must match ^[1-9][0-9]{0,9}$: anything else is 404', async () => {
    for (const id of ['01', '1.0', '1e3', '１', '1x', '', '99999999999', '2147483648']) {
      const res = await inst.api({ method: 'GET', url: `/api/reasons?schedule=${encodeURIComponent(id)}` });
      assert.equal(res.statusCode, 404, `schedule=${id}: ${res.body}`);
    }
    assert.equal((await inst.api({ method: 'GET', url: `/api/reasons?schedule=${inst.schedules[0]!.id}` })).statusCode, 200);
  });

  test('POST /bookings: 415 before 413 before 400; 413 over 64 KiB', async () => {
    const big = JSON.stringify({ schedule: 1, reason: 1, slot: '2026-06-02 09:00:00', submission: { notes: 'x'.repeat(70_000) } });
    assert.equal(
      (await inst.api({ method: 'POST', url: '/api/bookings', payload: big, headers: { 'content-type': 'text/plain' } })).statusCode,
      415,
    );
    const tooBig = await inst.api({ method: 'POST', url: '/api/bookings', payload: big, headers: { 'content-type': 'application/json' } });
    assert.equal(tooBig.statusCode, 413);
    assert.equal(typeof tooBig.json().error, 'string');
    const invalid = await inst.api({
      method: 'POST',
      url: '/api/bookings',
      payload: '{"a":',
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    assert.equal(invalid.statusCode, 400);
  });

  test('/healthz reports the database', async () => {
    const res = await inst.app.inject({ method: 'GET', url: '/healthz' });
    assert.deepEqual(res.json(), { status: 'ok' });
  });
});

describeEachDatabase('before setup', (dialect) => {
  let inst: TestInstallation;
  before(async () => {
    inst = await testInstallation(dialect, { configured: false });
  });
  after(() => inst.close());

  test('every call answers 503 Not configured, even an unknown one; openapi.json stays public', async () => {
    for (const url of ['/api/schedules', '/api/reasons?schedule=1', '/api/nothing']) {
      const res = await inst.api({ method: 'GET', url, token: null });
      assert.equal(res.statusCode, 503);
      assert.deepEqual(res.json(), { error: 'Not configured' });
    }
    assert.equal((await inst.app.inject({ method: 'GET', url: '/api/openapi.json' })).statusCode, 200);
  });
});
