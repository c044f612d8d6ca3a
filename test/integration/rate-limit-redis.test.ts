// The Redis rate-limit store against the machine's Redis (127.0.0.1:6379), each run under its own key
// prefix: shared counts, the window's Retry-After, fail-open on an unreachable Redis, and recovery.
// Skipped, visibly, without a Redis; under CI=true a missing Redis is a failure.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect as tcpConnect } from 'node:net';
import { randomBytes } from 'node:crypto';
import { TcpRelay } from '../support/tcp-relay.js';
import { freePort } from '../support/processes.js';
import { Redis } from 'ioredis';
import { RedisRateLimitStore, type StoreLogger } from '../../src/rate-limit/redis-store.js';
import { checkRate } from '../../src/rate-limit/rate-limiter.js';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../../src/http/build-app.js';
import { setOperatorSetting } from '../../src/app/installation.js';
import { testInstallation } from '../support/installation.js';

const REDIS_HOST = '127.0.0.1';
const REDIS_PORT = 6379;
const REDIS_URL = process.env.TEST_REDIS_URL ?? `redis://${REDIS_HOST}:${REDIS_PORT}`;

async function reachable(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host, port });
    socket.setTimeout(2000);
    socket.on('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
    socket.on('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

const REDIS_AVAILABLE = await reachable(REDIS_PORT, REDIS_HOST);
if (!REDIS_AVAILABLE && process.env.CI === 'true')
  throw new Error(`Redis is not reachable at ${REDIS_URL}, and under CI=true the Redis tests must run.`);

function recordingLogger() {
  const lines: { level: 'warn' | 'info'; message: string }[] = [];
  const logger: StoreLogger = {
    warn: (_object, message) => lines.push({ level: 'warn', message }),
    info: (_object, message) => lines.push({ level: 'info', message }),
  };
  return { lines, logger };
}

describe('Redis rate-limit store', { skip: REDIS_AVAILABLE ? false : `Redis not reachable at ${REDIS_URL}` }, () => {
  const prefix = `booking-test:${Date.now().toString(36)}-${randomBytes(4).toString('hex')}:`;
  const stores: RedisRateLimitStore[] = [];
  const open = (options: Partial<ConstructorParameters<typeof RedisRateLimitStore>[0]> = {}) => {
    const store = new RedisRateLimitStore({ url: REDIS_URL, prefix, ...options });
    stores.push(store);
    return store;
  };
  const direct = REDIS_AVAILABLE ? new Redis(REDIS_URL) : null;

  after(async () => {
    await Promise.all(stores.map((s) => s.close()));
    if (direct) {
      const keys = await direct.keys(`${prefix}*`);
      if (keys.length) await direct.del(...keys);
      await direct.quit();
    }
  });

  test('two stores (two instances) share one count per key; other keys count apart', async () => {
    const a = open();
    const b = open();
    assert.ok(await a.ready());
    assert.ok(await b.ready());
    const now = Date.now();
    const counts: number[] = [];
    for (let i = 0; i < 5; i++) {
      counts.push((await a.hit('api:shared', 60_000, now)).count);
      counts.push((await b.hit('api:shared', 60_000, now)).count);
    }
    assert.deepEqual(counts, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    assert.equal((await b.hit('api:other', 60_000, now)).count, 1);
    assert.equal(await direct!.get(`${prefix}api:shared`), '10');
    // concurrent hits from both stores: every count handed out exactly once
    const parallel = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).hit('api:parallel', 60_000, now)));
    assert.deepEqual(
      parallel.map((w) => w.count).sort((x, y) => x - y),
      Array.from({ length: 40 }, (_, i) => i + 1),
    );
  });

  test('the window opens with the first request and later hits do not extend it; Retry-After comes from it', async () => {
    const a = open();
    const b = open();
    await Promise.all([a.ready(), b.ready()]);
    const now = Date.now();
    const first = await a.hit('api:window', 60_000, now);
    const ttl = await direct!.pttl(`${prefix}api:window`);
    assert.ok(ttl > 0 && ttl <= 60_000, `PTTL ${ttl}`);
    assert.ok(first.resetAt > now && first.resetAt <= now + 60_000);
    // pretend the window is nearly over: 4.2 s left
    await direct!.pexpire(`${prefix}api:window`, 4200);
    assert.deepEqual(await checkRate(b, 'api:window', 3, now), { allowed: true, limit: 3, remaining: 1, resetSeconds: 5 });
    assert.deepEqual(await checkRate(a, 'api:window', 3, now), { allowed: true, limit: 3, remaining: 0, resetSeconds: 5 });
    assert.deepEqual(await checkRate(b, 'api:window', 3, now), { allowed: false, limit: 3, remaining: 0, resetSeconds: 5 });
    const left = await direct!.pttl(`${prefix}api:window`);
    assert.ok(left > 0 && left <= 4200, `the hits must not have extended the window (PTTL ${left})`);
  });

  test('fails open when Redis is unreachable: counts per process, logs once, not per request', async () => {
    const { lines, logger } = recordingLogger();
    const store = open({ url: `redis://127.0.0.1:${await freePort()}`, logger });
    assert.equal(await store.ready(300), false);
    const counts = [];
    for (let i = 0; i < 25; i++) counts.push((await store.hit('api:closed', 60_000, Date.now())).count);
    assert.deepEqual(
      counts,
      Array.from({ length: 25 }, (_, i) => i + 1),
    );
    assert.equal(store.usingRedis, false);
    assert.deepEqual(
      lines.map((l) => l.level),
      ['warn'],
    );
    const denied = await checkRate(store, 'api:closed', 25, Date.now());
    assert.equal(denied.allowed, false);
  });

  test('an outage seen before the logger is attached (at start) is still logged, once', async () => {
    const { lines, logger } = recordingLogger();
    const store = open({ url: `redis://127.0.0.1:${await freePort()}` });
    assert.equal(await store.ready(300), false);
    store.attachLogger(logger);
    for (let i = 0; i < 5; i++) await store.hit('api:closed-at-start', 60_000, Date.now());
    assert.deepEqual(
      lines.map((l) => l.level),
      ['warn'],
    );
  });

  test('uses Redis again when it returns, logging once each way', async () => {
    const relay = new TcpRelay(await freePort(), REDIS_PORT, REDIS_HOST);
    await relay.open();
    const { lines, logger } = recordingLogger();
    const store = open({ url: `redis://127.0.0.1:${relay.port}`, logger, probeIntervalMs: 50 });
    assert.ok(await store.ready());
    assert.equal((await store.hit('api:recover', 60_000, Date.now())).count, 1);

    await relay.cut();
    for (let i = 1; i <= 10; i++)
      assert.equal((await store.hit('api:recover', 60_000, Date.now())).count, i, 'in-process count while Redis is away');
    assert.equal(store.usingRedis, false);

    await relay.open();
    // ioredis reconnects with its own backoff; keep sending requests until one reaches Redis again
    let count = 0;
    for (let attempt = 0; attempt < 200 && !store.usingRedis; attempt++) {
      count = (await store.hit('api:recover', 60_000, Date.now())).count;
      if (!store.usingRedis) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(store.usingRedis, true, 'the store must return to Redis');
    // the shared count continues from what Redis held before the outage
    assert.equal(count, 2);
    assert.equal(await direct!.get(`${prefix}api:recover`), '2');
    assert.deepEqual(
      lines.map((l) => l.level),
      ['warn', 'info'],
    );
    await store.close();
    await relay.cut();
  });

  test('RateLimit-* headers through real HTTP: two app instances sharing Redis count one window', async () => {
    const inst = await testInstallation('sqlite');
    const apps = [];
    try {
      await setOperatorSetting(inst.db, 'api.rate_limit_per_minute', '3');
      const origins: string[] = [];
      for (let i = 0; i < 2; i++) {
        const store = open();
        assert.ok(await store.ready());
        const app = await buildApp({ db: inst.db, clock: inst.clock, rateLimits: store });
        apps.push(app);
        await app.listen({ host: '127.0.0.1', port: 0 });
        origins.push(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
      }
      const answers = [];
      for (let i = 0; i < 4; i++) {
        const res = await fetch(`${origins[i % 2]}/api/schedules`, { headers: { authorization: `Bearer ${inst.token}` } });
        answers.push([
          res.status,
          res.headers.get('ratelimit-limit'),
          res.headers.get('ratelimit-remaining'),
          res.headers.get('retry-after'),
        ]);
        const reset = Number(res.headers.get('ratelimit-reset'));
        assert.ok(reset >= 1 && reset <= 60, `RateLimit-Reset ${reset}`);
      }
      assert.deepEqual(answers, [
        [200, '3', '2', null],
        [200, '3', '1', null],
        [200, '3', '0', null],
        [429, '3', '0', answers[3]![3]],
      ]);
      assert.ok(Number(answers[3]![3]) >= 1);
    } finally {
      await Promise.all(apps.map((a) => a.close()));
      await inst.close();
    }
  });
});
