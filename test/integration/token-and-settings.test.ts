// The token, the API switch and the rate limit, on SQLite and PostgreSQL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachDatabase } from '../support/databases.js';
import { testInstallation, type TestInstallation } from '../support/installation.js';
import { generateToken, setApiEnabled, setOperatorSetting } from '../../src/app/installation.js';
import { TOKEN_RE, hashToken } from '../../src/app/api-token.js';
import { InvalidInput } from '../../src/core/errors.js';

describeEachDatabase('token and settings', (dialect) => {
  let inst: TestInstallation;
  before(async () => {
    inst = await testInstallation(dialect, { schedules: [] });
  });
  after(() => inst.close());

  const schedules = (token?: string) => inst.api({ method: 'GET', url: '/api/schedules', ...(token ? { token } : {}) });

  test('tokens have the documented shape, differ each time, and only their hash is stored', async () => {
    const tokens = await Promise.all([generateToken(inst.db), generateToken(inst.db), generateToken(inst.db)]);
    for (const t of tokens) assert.match(t, TOKEN_RE);
    assert.equal(new Set(tokens).size, 3);
    const stored = await inst.db.kysely.selectFrom('settings').select(['key', 'value']).execute();
    const everything = JSON.stringify(stored);
    for (const t of tokens) assert.ok(!everything.includes(t.slice(4)), 'a token is stored in clear');
    const current = stored.find((s) => s.key === 'api.token_hash');
    assert.ok(tokens.some((t) => JSON.parse(current!.value) === hashToken(t)));
  });

  test('a new token invalidates the old one on the next request', async () => {
    const old = await generateToken(inst.db);
    assert.equal((await schedules(old)).statusCode, 200);
    const fresh = await generateToken(inst.db);
    assert.deepEqual((await schedules(old)).json(), { error: 'Unauthorized' });
    assert.equal((await schedules(fresh)).statusCode, 200);
    inst.token = fresh;
  });

  test('the API switch is effective at once, before the token check', async () => {
    await setApiEnabled(inst.db, false);
    const off = await inst.api({ method: 'GET', url: '/api/schedules', token: null });
    assert.equal(off.statusCode, 503);
    assert.deepEqual(off.json(), { error: 'API disabled' });
    await setApiEnabled(inst.db, true);
    assert.equal((await schedules()).statusCode, 200);
  });

  test('rate limit: a window opens with the first request; Retry-After counts down; a new token starts afresh', async () => {
    await setOperatorSetting(inst.db, 'api.rate_limit_per_minute', '5');
    const token = await generateToken(inst.db);
    const start = inst.clock.now;
    for (let i = 0; i < 5; i++) assert.equal((await schedules(token)).statusCode, 200);
    const limited = await schedules(token);
    assert.equal(limited.statusCode, 429);
    assert.deepEqual(limited.json(), { error: 'Too Many Requests' });
    assert.equal(limited.headers['retry-after'], '60');
    inst.clock.now = start + 45_500;
    assert.equal((await schedules(token)).headers['retry-after'], '15');
    inst.clock.now = start + 60_000;
    assert.equal((await schedules(token)).statusCode, 200, 'a new window');
    const other = await generateToken(inst.db);
    assert.equal((await schedules(other)).statusCode, 200);
    await setOperatorSetting(inst.db, 'api.rate_limit_per_minute', '300');
    inst.token = other;
  });

  test('bad settings are refused and change nothing', async () => {
    for (const [key, value] of [
      ['api.rate_limit_per_minute', '0'],
      ['api.rate_limit_per_minute', 'lots'],
      ['no.such.key', '1'],
      ['installation.timezone', 'Mars/Olympus'],
    ]) {
      await assert.rejects(setOperatorSetting(inst.db, key!, value!), InvalidInput);
    }
    const rows = await inst.db.kysely
      .selectFrom('settings')
      .select(['key', 'value'])
      .where('key', 'in', ['api.rate_limit_per_minute', 'installation.timezone'])
      .orderBy('key')
      .execute();
    assert.deepEqual(
      rows.map((r) => JSON.parse(r.value)),
      [300, 'Europe/Berlin'],
    );
  });
});
