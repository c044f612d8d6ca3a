// A path under /api with a broken %-escape (the router cannot decode it, so no route or hook of the API
// runs) still meets the gate first, in the order of docs/decisions.md §1: 503 not configured, 503 API
// disabled, 401 without a valid token; only then is it a path that does not exist (404). Over real HTTP,
// on SQLite and PostgreSQL (the gate reads the installation from the database).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describeEachDatabase } from '../support/databases.js';
import { testInstallation, type TestInstallation } from '../support/installation.js';
import { setApiEnabled } from '../../src/app/installation.js';

const BROKEN = ['/api/schedules%zz', '/api/%E0%A4%A', '/api/reasons%?schedule=1'];

async function listening(inst: TestInstallation): Promise<string> {
  await inst.app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(inst.app.server.address() as AddressInfo).port}`;
}

/** Each broken path, by GET and by POST, with `authorization` (if any): [path, method, status, body] per request. */
async function askAll(origin: string, authorization?: string) {
  const answers = [];
  for (const path of BROKEN)
    for (const method of ['GET', 'POST']) {
      const res = await fetch(`${origin}${path}`, {
        method,
        headers: { ...(authorization ? { authorization } : {}), ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
        ...(method === 'POST' ? { body: '{}' } : {}),
      });
      answers.push({ path, method, status: res.status, body: await res.json(), headers: res.headers });
    }
  return answers;
}

const statuses = (answers: Awaited<ReturnType<typeof askAll>>) => answers.map((a) => [a.path, a.method, a.status, a.body]);
const expectAll = (status: number, body: object) => BROKEN.flatMap((path) => ['GET', 'POST'].map((method) => [path, method, status, body]));

describeEachDatabase('a broken %-escape under /api meets the gate first', (dialect) => {
  let configured: TestInstallation;
  let fresh: TestInstallation;
  let origin: string;
  let freshOrigin: string;
  before(async () => {
    configured = await testInstallation(dialect);
    fresh = await testInstallation(dialect, { configured: false });
    origin = await listening(configured);
    freshOrigin = await listening(fresh);
  });
  after(async () => {
    await configured.close();
    await fresh.close();
  });

  test('installation not finished: 503 Not configured, whatever the token', async () => {
    assert.deepEqual(statuses(await askAll(freshOrigin)), expectAll(503, { error: 'Not configured' }));
    assert.deepEqual(statuses(await askAll(freshOrigin, 'Bearer apm_whatever')), expectAll(503, { error: 'Not configured' }));
  });

  test('no token or a wrong one: 401 with WWW-Authenticate; a valid token: 404, with the rate-limit headers', async () => {
    for (const authorization of [undefined, 'Bearer apm_wrong', 'Basic x']) {
      const answers = await askAll(origin, authorization);
      assert.deepEqual(statuses(answers), expectAll(401, { error: 'Unauthorized' }), String(authorization));
      for (const a of answers) assert.equal(a.headers.get('www-authenticate'), 'Bearer realm="api"');
    }
    const answers = await askAll(origin, `Bearer ${configured.token}`);
    assert.deepEqual(statuses(answers), expectAll(404, { error: 'Not Found' }));
    for (const a of answers) assert.ok(a.headers.get('ratelimit-remaining') !== null, 'the gate counted it');
  });

  test('API disabled: 503 API disabled, even with the valid token', async () => {
    await setApiEnabled(configured.db, false);
    try {
      assert.deepEqual(statuses(await askAll(origin, `Bearer ${configured.token}`)), expectAll(503, { error: 'API disabled' }));
      assert.deepEqual(statuses(await askAll(origin)), expectAll(503, { error: 'API disabled' }));
    } finally {
      await setApiEnabled(configured.db, true);
    }
  });

  test('outside /api the router refusal stays 400 in the contract shape', async () => {
    const res = await fetch(`${origin}/admin/sched%zz`);
    assert.equal(res.status, 400);
    assert.deepEqual(await res.json(), { error: 'Bad Request' });
  });
});
