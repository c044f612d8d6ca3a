// Three `booking serve` processes on one fresh PostgreSQL database and one Redis behave as one service
// (issue 6): the booking flow on each, the race for the last place across instances, settings and token
// changes seen everywhere on the next request, the rate limit counted once for all, an instance killed
// with SIGKILL in the middle of a stream of bookings, and a graceful SIGTERM shutdown.
// Needs the machine's PostgreSQL and Redis: skipped, visibly, without them; under CI=true that is a failure.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { once } from 'node:events';
import { TcpRelay } from '../support/tcp-relay.js';
import { freePort } from '../support/processes.js';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import { Redis } from 'ioredis';
import { POSTGRES_AVAILABLE, freshPostgres, type TestDatabase } from '../support/databases.js';
import { connect, type Db } from '../../src/db/connect.js';
import { generateToken, setApiEnabled, setOperatorSetting } from '../../src/app/installation.js';

const PROJECT = resolve(import.meta.dirname, '..', '..');
const CLI = join(PROJECT, 'bin', 'booking');
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const POOL_MAX = 3;
const ZONE = 'Europe/Berlin';

async function reachable(port: number): Promise<boolean> {
  return new Promise((ok) => {
    const socket = tcpConnect({ host: '127.0.0.1', port });
    socket.setTimeout(2000);
    socket.on('connect', () => {
      socket.destroy();
      ok(true);
    });
    socket.on('error', () => ok(false));
    socket.on('timeout', () => {
      socket.destroy();
      ok(false);
    });
  });
}

const REDIS_AVAILABLE = await reachable(Number(new URL(REDIS_URL).port || 6379));
const missing = [POSTGRES_AVAILABLE ? null : 'PostgreSQL at 127.0.0.1:5432', REDIS_AVAILABLE ? null : `Redis at ${REDIS_URL}`].filter(
  Boolean,
);
if (missing.length && process.env.CI === 'true')
  throw new Error(`${missing.join(' and ')} not reachable; under CI=true the multi-instance test must run.`);

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

/** One `booking serve` child process (in its own process group, so signals reach node behind the wrapper). */
class Instance {
  log = '';
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  constructor(
    readonly name: string,
    readonly child: ChildProcess,
    readonly port: number,
  ) {
    child.stdout!.on('data', (d) => {
      this.log += d;
    });
    child.stderr!.on('data', (d) => {
      this.log += d;
    });
    this.exited = new Promise((ok) => child.on('exit', (code, signal) => ok({ code, signal })));
  }

  get origin() {
    return `http://127.0.0.1:${this.port}`;
  }
  get running() {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  async ready(): Promise<void> {
    for (const until = Date.now() + 30_000; Date.now() < until;) {
      if (!this.running) throw new Error(`${this.name} exited:\n${this.log}`);
      try {
        if ((await fetch(`${this.origin}/healthz`)).status === 200) return;
      } catch {
        /* not listening yet */
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${this.name} not ready:\n${this.log}`);
  }

  signal(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.child.pid!, signal);
    } catch {
      /* already gone */
    }
  }

  async request(method: string, path: string, token: string, body?: unknown): Promise<Answer> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.origin}/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    let json: any = null;
    try {
      json = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, headers: res.headers, body: json };
  }
}

const q = (params: Record<string, string | number>) =>
  `?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)] as [string, string])).toString().replace(/\+/g, '%20')}`;

function submissionFor(form: Record<string, { input_type: string; required: boolean }>, n: number) {
  const values: Record<string, string> = {};
  for (const [name, field] of Object.entries(form)) {
    if (!field.required) continue;
    values[name] =
      field.input_type === 'email' ? `customer${n}@example.com` : field.input_type === 'tel' ? '+49 30 1234567' : `Customer ${n}`;
  }
  return values;
}

const ALL_WEEK = (hours: string[][]) => Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, hours]));
const schedule = (name: string, durations: number[]) => ({
  name,
  slot_interval_minutes: 15,
  min_notice_minutes: 0,
  horizon_days: 14,
  capacity: 1,
  weekly_hours: ALL_WEEK([['08:00', '18:00']]),
  reasons: durations.map((d) => ({ name: `${d} minutes`, description: '', duration_minutes: d })),
});

describe('several instances behave as one service', { skip: missing.length ? `${missing.join(' and ')} not reachable` : false }, () => {
  let database: TestDatabase;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let sql: pg.Client;
  /** a fourth process's view of the database, changing settings the way the admin area does */
  let admin: Db;
  const prefix = `booking-test:${Date.now().toString(36)}-${randomBytes(4).toString('hex')}:`;
  const instances: Instance[] = [];
  let token = '';
  let ids: { flow: number; race: number; stream: number; reasons: Record<string, number[]> };
  /** every 201 of the whole test: booking id -> the UTC start it was given */
  const created = new Map<number, string>();

  const cli = async (...args: string[]) => {
    try {
      return (await promisify(execFile)(CLI, args, { cwd: PROJECT, env, timeout: 60_000 })).stdout;
    } catch (error) {
      throw new Error(`booking ${args.join(' ')} failed: ${(error as { stderr?: string }).stderr ?? String(error)}`, { cause: error });
    }
  };

  const serve = async (name: string, extraEnv: NodeJS.ProcessEnv = {}) => {
    const port = await freePort();
    const child = spawn(CLI, ['serve', '--host', '127.0.0.1', '--port', String(port)], {
      cwd: PROJECT,
      env: { ...env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const instance = new Instance(name, child, port);
    instances.push(instance);
    await instance.ready();
    return instance;
  };

  const dayOf = async (instance: Instance, scheduleId: number, reasonId: number, index: number) => {
    const days = await instance.request('GET', `/days${q({ schedule: scheduleId, reason: reasonId })}`, token);
    assert.equal(days.status, 200);
    return days.body.data[index] as string;
  };

  const record = (answer: Answer) => {
    if (answer.status === 201) created.set(answer.body.booking_id, answer.body.slot);
  };

  before(async () => {
    database = await freshPostgres();
    dir = mkdtempSync(join(tmpdir(), 'booking-multi-'));
    env = {
      ...process.env,
      DATABASE_URL: database.url,
      REDIS_URL,
      REDIS_PREFIX: prefix,
      DATABASE_POOL_MAX: String(POOL_MAX),
      LOG_LEVEL: 'warn',
    };
    delete env.SMTP_URL;
    await cli('setup', '--timezone', ZONE, '--admin-email', 'admin@example.com', '--admin-password', 'correct horse battery staple');
    const file = join(dir, 'schedules.json');
    writeFileSync(
      file,
      JSON.stringify({ schedules: [schedule('Flow', [30]), schedule('Race', [30, 45, 60, 90]), schedule('Stream', [15, 30, 45, 60])] }),
    );
    // each CLI run is a separate process and transaction: they need not wait for one another, nor the servers for them
    const [importOutput, , tokenOutput] = await Promise.all([
      cli('import', file),
      cli('api', 'enable'),
      cli('token', 'generate'),
      ...['A', 'B', 'C'].map((n) => serve(n)),
    ]);
    token = tokenOutput.trim();
    const imported = JSON.parse(importOutput) as { schedules: { id: number; name: string; reasons: { id: number }[] }[] };
    const byName = (n: string) => imported.schedules.find((s) => s.name === n)!;
    ids = {
      flow: byName('Flow').id,
      race: byName('Race').id,
      stream: byName('Stream').id,
      reasons: Object.fromEntries(imported.schedules.map((s) => [s.name, s.reasons.map((r) => r.id)])),
    };
    // the test's own connections are named, so that counting the instances' connections can leave them out
    const own = new URL(database.url);
    own.searchParams.set('application_name', 'multi-instance-test');
    admin = connect(own.href, { poolMax: 1 });
    sql = new pg.Client({ connectionString: own.href });
    await sql.connect();
  });

  after(async () => {
    for (const instance of instances) instance.signal('SIGKILL');
    await Promise.all(instances.map((i) => i.exited));
    await sql?.end();
    await admin?.close();
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  /** The most PostgreSQL connections the instances held at once while `work` ran (sampled). */
  async function connectionsDuring<T>(work: Promise<T>): Promise<{ result: T; most: number }> {
    let most = 0;
    let done = false;
    const sampler = (async () => {
      while (!done) {
        const { rows } = await sql.query(
          "select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name <> 'multi-instance-test'",
        );
        most = Math.max(most, rows[0].n);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    try {
      return { result: await work, most };
    } finally {
      done = true;
      await sampler;
    }
  }

  test('the booking flow works on every instance at once', async () => {
    const [reason] = ids.reasons.Flow!;
    const day = await dayOf(instances[0]!, ids.flow, reason!, 1);
    await Promise.all(
      instances.map(async (instance, n) => {
        const schedules = await instance.request('GET', '/schedules', token);
        assert.equal(schedules.status, 200);
        assert.ok(schedules.body.data.some((s: { id: number }) => s.id === ids.flow));
        const reasons = await instance.request('GET', `/reasons${q({ schedule: ids.flow })}`, token);
        assert.deepEqual(
          reasons.body.data.map((r: { id: number }) => r.id),
          [reason],
        );
        const days = await instance.request('GET', `/days${q({ schedule: ids.flow, reason: reason! })}`, token);
        assert.ok(days.body.data.includes(day));
        const slots = await instance.request('GET', `/slots${q({ schedule: ids.flow, reason: reason!, day })}`, token);
        const slot = `${day} ${['09', '11', '13'][n]}:00:00`;
        assert.ok(slots.body.data.includes(slot), `${slot} offered`);
        const form = await instance.request('GET', `/forms${q({ schedule: ids.flow, reason: reason!, slot })}`, token);
        assert.equal(form.status, 200);
        const booked = await instance.request('POST', '/bookings', token, {
          schedule: ids.flow,
          reason,
          slot,
          submission: submissionFor(form.body.data, n),
        });
        assert.equal(booked.status, 201, JSON.stringify(booked.body));
        record(booked);
      }),
    );
    // each instance sees the others' bookings at once: the three times are gone everywhere
    for (const instance of instances) {
      const slots = await instance.request('GET', `/slots${q({ schedule: ids.flow, reason: reason!, day })}`, token);
      for (const hour of ['09', '11', '13'])
        assert.ok(!slots.body.data.includes(`${day} ${hour}:00:00`), `${instance.name} still offers ${hour}:00`);
    }
  });

  test('the race for the last place across instances, overlapping reasons of different durations: exactly one 201', async () => {
    const [r30, r45, r60, r90] = ids.reasons.Race!;
    const day = await dayOf(instances[0]!, ids.race, r30!, 2);
    // every one of these covers 10:30-10:45, so any two of them collide
    const attempts = [
      [r60, '10:00'],
      [r30, '10:30'],
      [r90, '09:30'],
      [r45, '10:15'],
      [r60, '09:45'],
      [r90, '10:30'],
    ] as const;
    const form = await instances[0]!.request('GET', `/forms${q({ schedule: ids.race, reason: r30!, slot: `${day} 10:30:00` })}`, token);
    const requests = Array.from({ length: 24 }, (_, i) => {
      const [reason, time] = attempts[i % attempts.length]!;
      return instances[i % 3]!.request('POST', '/bookings', token, {
        schedule: ids.race,
        reason,
        slot: `${day} ${time}:00`,
        submission: submissionFor(form.body.data, 100 + i),
      });
    });
    const { result: answers, most } = await connectionsDuring(Promise.all(requests));
    const statuses = answers.map((a) => a.status);
    assert.equal(statuses.filter((s) => s === 201).length, 1, `statuses: ${statuses.join(' ')}`);
    assert.equal(statuses.filter((s) => s === 404).length, 23, `statuses: ${statuses.join(' ')}`);
    answers.forEach(record);
    const { rows } = await sql.query(`select count(*)::int as n from bookings where schedule_id = $1 and status = 'booked'`, [ids.race]);
    assert.equal(rows[0].n, 1);
    // DATABASE_POOL_MAX bounds each instance's connections, even with 8 waiting bookings each
    assert.ok(most <= 3 * POOL_MAX, `at most ${3 * POOL_MAX} connections, saw ${most}`);
  });

  test('the API switch and a new token take effect on the very next request on every instance', async () => {
    await setApiEnabled(admin, false);
    for (const instance of instances)
      assert.deepEqual((await instance.request('GET', '/schedules', token)).body, { error: 'API disabled' });
    await setApiEnabled(admin, true);
    for (const instance of instances) assert.equal((await instance.request('GET', '/schedules', token)).status, 200);

    const old = token;
    token = await generateToken(admin);
    assert.notEqual(token, old);
    for (const instance of instances) {
      const refused = await instance.request('GET', '/schedules', old);
      assert.equal(refused.status, 401, `${instance.name} still accepts the old token`);
      assert.equal((await instance.request('GET', '/schedules', token)).status, 200);
    }
  });

  test('the rate limit is counted once for all instances: exactly the limit, then 429 with Retry-After', async () => {
    await setOperatorSetting(admin, 'api.rate_limit_per_minute', '30');
    token = await generateToken(admin); // a new token starts a fresh count
    const answers = await Promise.all(Array.from({ length: 45 }, (_, i) => instances[i % 3]!.request('GET', '/schedules', token)));
    const statuses = answers.map((a) => a.status);
    assert.equal(statuses.filter((s) => s === 200).length, 30, `statuses: ${statuses.join(' ')}`);
    assert.equal(statuses.filter((s) => s === 429).length, 15, `statuses: ${statuses.join(' ')}`);
    for (const instance of instances) {
      const limited = await instance.request('GET', '/schedules', token);
      assert.equal(limited.status, 429);
      assert.deepEqual(limited.body, { error: 'Too Many Requests' });
      const retryAfter = limited.headers.get('retry-after')!;
      assert.match(retryAfter, /^[1-9][0-9]?$/);
      assert.ok(Number(retryAfter) <= 60);
    }
    await setOperatorSetting(admin, 'api.rate_limit_per_minute', '100000');
    assert.equal((await instances[1]!.request('GET', '/schedules', token)).status, 200, 'a higher limit applies at once');
  });

  test('SIGKILL of one instance during a stream of bookings: no double booking, every 201 stays booked, survivors answer', async () => {
    const reasons = ids.reasons.Stream!;
    const day = await dayOf(instances[0]!, ids.stream, reasons[0]!, 3);
    const form = await instances[0]!.request(
      'GET',
      `/forms${q({ schedule: ids.stream, reason: reasons[0]!, slot: `${day} 08:00:00` })}`,
      token,
    );
    // 72 bookings of 15-60 minutes on 36 start times between 08:00 and 16:45: many collide
    const queue = Array.from({ length: 72 }, (_, i) => {
      const minutes = 8 * 60 + 15 * ((i * 7) % 36);
      const time = `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}:00`;
      return {
        schedule: ids.stream,
        reason: reasons[i % reasons.length],
        slot: `${day} ${time}`,
        submission: submissionFor(form.body.data, 200 + i),
      };
    });
    const victim = instances[2]!;
    const survivors = instances.slice(0, 2);
    let sent = 0;
    const fromSurvivors: number[] = [];
    const worker = async () => {
      for (let body = queue.shift(); body; body = queue.shift()) {
        sent++;
        if (sent === 24) victim.signal('SIGKILL'); // mid-stream, with requests in flight on it
        const targets = victim.running ? instances : survivors; // what a load balancer's health check does
        const target = targets[sent % targets.length]!;
        try {
          const answer = await target.request('POST', '/bookings', token, body);
          record(answer);
          if (target !== victim) fromSurvivors.push(answer.status);
        } catch {
          assert.equal(target, victim, 'only the killed instance may drop a request');
        }
      }
    };
    const { most } = await connectionsDuring(Promise.all(Array.from({ length: 6 }, worker)));
    assert.equal((await victim.exited).signal, 'SIGKILL');
    assert.ok(
      fromSurvivors.every((s) => s === 201 || s === 404),
      `survivors answered ${fromSurvivors.join(' ')}`,
    );
    assert.ok(fromSurvivors.includes(201));
    assert.ok(most <= 3 * POOL_MAX, `at most ${3 * POOL_MAX} connections, saw ${most}`);

    const overlaps = await sql.query(
      `select a.id as a, b.id as b from bookings a join bookings b
         on a.schedule_id = b.schedule_id and a.id < b.id and a.start_at < b.end_at and b.start_at < a.end_at
       where a.schedule_id = $1 and a.status = 'booked' and b.status = 'booked'`,
      [ids.stream],
    );
    assert.deepEqual(overlaps.rows, [], 'two booked appointments overlap on a capacity-1 schedule');
    const booked = await sql.query(`select id, start_at from bookings where status = 'booked'`);
    const start = new Map(booked.rows.map((r) => [Number(r.id), Number(r.start_at)]));
    for (const [id, slot] of created)
      assert.equal(start.get(id), Date.parse(slot), `booking ${id} (a 201) must still be booked at ${slot}`);
    // the lost requests may or may not have committed; either way they cannot have double-booked (checked above)
    assert.ok(booked.rows.length >= created.size);

    for (const survivor of survivors) {
      assert.equal((await survivor.request('GET', '/schedules', token)).status, 200);
      assert.equal((await fetch(`${survivor.origin}/healthz`)).status, 200);
    }
  });

  test('SIGTERM: stops accepting, finishes the request in flight, exits 0', async () => {
    const instance = instances[0]!;
    const [reason] = ids.reasons.Flow!;
    const day = await dayOf(instance, ids.flow, reason!, 4);
    const form = await instance.request('GET', `/forms${q({ schedule: ids.flow, reason: reason!, slot: `${day} 15:00:00` })}`, token);
    const body = JSON.stringify({ schedule: ids.flow, reason, slot: `${day} 15:00:00`, submission: submissionFor(form.body.data, 300) });
    // a request in flight: headers and half of the body sent before the signal, the rest after
    const socket = tcpConnect({ host: '127.0.0.1', port: instance.port });
    await once(socket, 'connect');
    let response = '';
    socket.on('data', (d) => {
      response += String(d);
    });
    const ended = once(socket, 'end');
    // Expect: 100-continue makes the server say when it has read the headers: from then on the request is in flight
    socket.write(
      `POST /api/bookings HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
    );
    while (!response.includes('\r\n\r\n')) await once(socket, 'data');
    assert.match(response, /^HTTP\/1\.1 100 /);
    response = '';
    socket.write(body.slice(0, 20));

    instance.signal('SIGTERM');
    // stops accepting: new connections are refused while the request above is still open
    while (await reachable(instance.port)) await new Promise((r) => setTimeout(r, 20));
    assert.equal(instance.running, true, 'still running while a request is in flight');

    // (write, not end: a client's half-close makes Node abort the request it is still reading)
    socket.write(body.slice(20));
    await ended;
    assert.match(response, /^HTTP\/1\.1 201 /, `${response}\n${instance.log}`);
    const booking = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));
    record({ status: 201, headers: new Headers(), body: booking });
    assert.deepEqual(await instance.exited, { code: 0, signal: null });
    const { rows } = await sql.query(`select status from bookings where id = $1`, [booking.booking_id]);
    assert.equal(rows[0]?.status, 'booked');
  });

  test('PostgreSQL going away: the instance stays up, /healthz 503 and API 503, then serves again without a restart', async () => {
    const relay = new TcpRelay(await freePort(), Number(new URL(database.url).port || 5432));
    await relay.open();
    const viaRelay = new URL(database.url);
    viaRelay.port = String(relay.port);
    const instance = await serve('D', { DATABASE_URL: viaRelay.href });
    try {
      assert.equal((await instance.request('GET', '/schedules', token)).status, 200);
      await relay.cut();
      assert.equal((await fetch(`${instance.origin}/healthz`)).status, 503);
      const failed = await instance.request('GET', '/schedules', token);
      // issue 15: a read while the database cannot answer is a 503 (test/integration/faults-db.test.ts)
      assert.equal(failed.status, 503);
      assert.deepEqual(failed.body, { error: 'Service Unavailable' });
      assert.equal(instance.running, true, `the instance must survive the outage:\n${instance.log}`);
      await relay.open();
      assert.equal((await fetch(`${instance.origin}/healthz`)).status, 200);
      assert.equal((await instance.request('GET', '/schedules', token)).status, 200);
    } finally {
      instance.signal('SIGTERM');
      await instance.exited;
      await relay.cut();
    }
  });
});
