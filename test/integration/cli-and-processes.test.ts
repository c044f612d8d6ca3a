// bin/booking as an operator runs it, and two `serve` processes sharing one database.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEachDatabase, freshDatabase, type TestDatabase } from '../support/databases.js';
import { cli, serve, type ServeProcess } from '../support/processes.js';

const dir = mkdtempSync(join(tmpdir(), 'booking-cli-'));
const file = (name: string, content: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
};
const ALL_WEEK = (h: string[][]) => Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, h]));

describeEachDatabase('bin/booking', (dialect) => {
  let target: TestDatabase;
  const servers: ServeProcess[] = [];
  before(async () => {
    target = await freshDatabase(dialect);
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await target.drop();
  });

  test('bad input: one line on stderr, a non-zero exit, nothing stored', async () => {
    const cases = [
      ['setup', '--timezone', 'Mars/Olympus', '--admin-email', 'a@example.com', '--admin-password', 'long enough'],
      ['setup', '--timezone', 'Europe/Berlin', '--admin-email', 'not-an-address', '--admin-password', 'long enough'],
      ['setup', '--timezone', 'Europe/Berlin', '--admin-email', 'a@example.com', '--admin-password', 'short'],
      ['api', 'maybe'],
      ['set', 'no.such.key', '1'],
      ['set', 'api.rate_limit_per_minute', '-3'],
      ['import', join(dir, 'missing.json')],
      ['import', file('broken.json', '{"schedules": [')],
      ['frobnicate'],
    ];
    for (const args of cases) {
      const r = await cli(target.url, ...args);
      assert.notEqual(r.code, 0, args.join(' '));
      assert.match(r.stderr, /^booking: \S.*\n/, `${args.join(' ')}: ${r.stderr}`);
    }
    // nothing of it was stored: the installation is still not configured
    const origin = (servers[servers.length] = await serve(target.url)).origin;
    const res = await fetch(`${origin}/api/schedules`);
    assert.deepEqual(await res.json(), { error: 'Not configured' });
  });

  test('setup, import (all or nothing), api, token, set', async () => {
    assert.equal(
      (
        await cli(
          target.url,
          'setup',
          '--timezone',
          'Europe/Berlin',
          '--admin-email',
          'op@example.com',
          '--admin-password',
          'correct horse',
        )
      ).code,
      0,
    );
    const bad = await cli(
      target.url,
      'import',
      file('half.json', {
        schedules: [
          { name: 'Good', reasons: [] },
          { name: 'Bad', reasons: [{ name: 'x', duration_minutes: 0 }] },
        ],
      }),
    );
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /schedules\[1\]\.reasons\[0\]\.duration_minutes/);
    const imported = await cli(
      target.url,
      'import',
      file('good.json', {
        schedules: [
          {
            name: 'Race',
            slot_interval_minutes: 60,
            horizon_days: 3,
            weekly_hours: ALL_WEEK([['09:00', '17:00']]),
            reasons: [
              { name: 'Hour', duration_minutes: 60 },
              { name: 'Two hours', duration_minutes: 120 },
            ],
          },
        ],
      }),
    );
    assert.equal(imported.code, 0, imported.stderr);
    const ids = JSON.parse(imported.stdout);
    assert.deepEqual(
      ids.schedules.map((s: { name: string }) => s.name),
      ['Race'],
    );
    assert.equal((await cli(target.url, 'api', 'enable')).code, 0);
    const token = await cli(target.url, 'token', 'generate');
    assert.match(token.stdout, /^apm_[A-Za-z0-9]{64}\n$/);
    assert.equal((await cli(target.url, 'set', 'api.rate_limit_per_minute', '1000')).code, 0);
    const origin = servers[0]!.origin;
    const schedules = await (
      await fetch(`${origin}/api/schedules`, { headers: { authorization: `Bearer ${token.stdout.trim()}` } })
    ).json();
    assert.deepEqual(schedules, { data: [{ id: ids.schedules[0].id, name: 'Race' }] }, 'the half-good file left nothing behind');
  });

  test('two serve processes racing for the last place: exactly one 201', async () => {
    servers.push(await serve(target.url));
    const [a, b] = servers as [ServeProcess, ServeProcess];
    const token = (await cli(target.url, 'token', 'generate')).stdout.trim();
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const get = async (origin: string, path: string): Promise<any> => (await fetch(`${origin}/api${path}`, { headers })).json();
    const [schedule] = (await get(a.origin, '/schedules')).data;
    const [hour, twoHours] = (await get(a.origin, `/reasons?schedule=${schedule.id}`)).data;
    const day = (await get(b.origin, `/days?schedule=${schedule.id}&reason=${hour.id}`)).data[1];
    // 10:00 for one hour and 09:00 for two hours overlap: only one of all these can be booked
    const attempts = Array.from({ length: 24 }, (_, i) =>
      fetch(`${(i % 2 ? a : b).origin}/api/bookings`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          schedule: schedule.id,
          reason: i % 3 ? hour.id : twoHours.id,
          slot: `${day} ${i % 3 ? '10' : '09'}:00:00`,
          submission: { email: `p${i}@example.com` },
        }),
      }),
    );
    const statuses = (await Promise.all(attempts)).map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 201).length, 1, String(statuses));
    assert.equal(statuses.filter((s) => s === 404).length, 23, String(statuses));
  });

  test('SIGTERM: the server exits 0', async () => {
    const { code } = await servers.pop()!.stop('SIGTERM');
    assert.equal(code, 0);
  });
});
