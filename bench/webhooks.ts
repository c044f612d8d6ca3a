// `npm run bench:webhooks`: what webhook endpoints cost POST /bookings. The real server (dist/, `serve`) on
// SQLite and on a fresh PostgreSQL database; closed-loop POST /bookings of distinct free times of one schedule
// (autocannon, BENCH_CONNECTIONS x BENCH_SECONDS), first with no endpoint (the baseline, same run), then on a
// second schedule with two endpoints subscribed to every event: a bare node:http receiver answering 200 (its
// own process) and one that accepts connections and never answers (every attempt runs into the timeout).
// A first phase (not counted) warms the server up. Prints req/s, p50 and p99 of both phases and their ratio, and what became of the deliveries. Figures are
// printed, not asserted.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { load, type Figures } from './measure.js';
import { addBookingSchedules, today, type BenchSchedule } from './seed.js';
import { connect } from '../src/db/connect.js';
import { migrate } from '../src/db/migrate.js';
import { generateToken, setApiEnabled, setOperatorSetting, setup } from '../src/app/installation.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const env = process.env;
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 20);
const SECONDS = Number(env.BENCH_SECONDS ?? 5);
const POSTGRES_ADMIN_URL = env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ENGINES = (env.BENCH_ENGINES ?? 'sqlite,postgres').split(',').map((e) => e.trim());

function started(command: string, args: string[], extraEnv: NodeJS.ProcessEnv): ChildProcess {
  return spawn(command, args, { cwd: ROOT, env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'inherit'] });
}

async function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

async function healthy(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never answered`);
}

/** A receiver that accepts every connection and never answers. */
async function silentReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.resume();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/never`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}

async function freeTimes(base: string, headers: Record<string, string>, { scheduleId, reasonId }: BenchSchedule, enough: number) {
  const get = async (path: string) => ((await (await fetch(`${base}/api${path}`, { headers })).json()) as { data: string[] }).data;
  const q = `schedule=${scheduleId}&reason=${reasonId}`;
  const free: string[] = [];
  for (const day of (await get(`/days?${q}`)).filter((d) => d > today()).reverse()) {
    if (free.length >= enough) break;
    free.push(...(await get(`/slots?${q}&day=${day}`)));
  }
  return free;
}

async function book(base: string, headers: Record<string, string>, schedule: BenchSchedule, label: string): Promise<Figures> {
  const times = await freeTimes(base, headers, schedule, 30_000);
  let next = 0;
  return load(`${base}/api/bookings`, {
    connections: CONNECTIONS,
    seconds: SECONDS,
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    maxOverallRequests: times.length,
    requests: [
      {
        setupRequest: (request: Record<string, unknown>) => ({
          ...request,
          body: JSON.stringify({
            schedule: schedule.scheduleId,
            reason: schedule.reasonId,
            slot: times[next++],
            submission: { email: `${label}${next}@example.com` },
          }),
        }),
      },
    ],
  });
}

async function benchEngine(engine: string, databaseUrl: string, port: number) {
  const db = connect(databaseUrl);
  await migrate(db);
  await setup(db, { timezone: 'Europe/Berlin', adminEmail: 'bench@example.com', adminPassword: 'bench password' }, Date.now());
  await setApiEnabled(db, true);
  const token = await generateToken(db);
  await setOperatorSetting(db, 'api.rate_limit_per_minute', '9999999');
  await db.close();
  const [warm, quiet, hooked] = (await addBookingSchedules(databaseUrl, 3)) as [BenchSchedule, BenchSchedule, BenchSchedule];
  const headers = { authorization: `Bearer ${token}` };

  const fast = started(process.execPath, [join(ROOT, 'bench/baseline-server.mjs'), '64'], {});
  const fastPort = await new Promise<string>((resolve) => fast.stdout!.once('data', (d) => resolve(String(d).trim())));
  const silent = await silentReceiver();
  const server = started(process.execPath, [join(ROOT, 'dist/cli/main.js'), 'serve', '--port', String(port)], {
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'error',
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    await healthy(`${base}/healthz`);
    // a phase not counted first: the JIT and the database's caches warm up, so the baseline is not the cold one
    await book(base, headers, warm, 'warm');
    const without = await book(base, headers, quiet, 'quiet');
    for (const url of [`http://127.0.0.1:${fastPort}/hook`, silent.url]) {
      const added = spawnSync(join(ROOT, 'bin/booking'), ['webhook', 'add', url], {
        env: { ...env, DATABASE_URL: databaseUrl },
        encoding: 'utf8',
      });
      if (added.status !== 0) throw new Error(`webhook add failed: ${added.stderr}`);
    }
    const withHooks = await book(base, headers, hooked, 'hooked');
    await new Promise((r) => setTimeout(r, 2000));
    const counts = connect(databaseUrl);
    const states = await counts.kysely
      .selectFrom('webhook_deliveries')
      .select(['endpoint_id', 'state'])
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .groupBy(['endpoint_id', 'state'])
      .orderBy('endpoint_id')
      .execute();
    await counts.close();
    return { engine, without, withHooks, states };
  } finally {
    await stopped(server);
    await stopped(fast);
    await silent.close();
  }
}

async function withPostgres<T>(work: (url: string) => Promise<T>): Promise<T> {
  const name = `booking_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  try {
    return await work(url.href);
  } finally {
    const c = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await c.connect();
    await c.query(`drop database if exists ${name} with (force)`);
    await c.end();
  }
}

const row = (label: string, f: Figures) =>
  `${label.padEnd(44)} ${f.rps.toFixed(0).padStart(8)} ${f.p50.toFixed(2).padStart(8)} ${f.p99.toFixed(2).padStart(8)} ${String(f.errors).padStart(8)}`;

const dir = mkdtempSync(join(tmpdir(), 'booking-bench-webhooks-'));
try {
  console.log(`node ${process.version}; autocannon ${CONNECTIONS} connections x ${SECONDS} s per phase`);
  for (const engine of ENGINES) {
    const r =
      engine === 'sqlite'
        ? await benchEngine('sqlite', `sqlite:${join(dir, 'bench.db')}`, 3911)
        : await withPostgres((url) => benchEngine('postgres', url, 3912));
    console.log(`\n${r.engine}`);
    console.log(
      `${'POST /bookings, 1 schedule'.padEnd(44)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'non-2xx'.padStart(8)}`,
    );
    console.log(row('no endpoint (baseline)', r.without));
    console.log(row('2 endpoints: one answers 200, one never', r.withHooks));
    console.log(`req/s with endpoints / baseline: ${(r.withHooks.rps / r.without.rps).toFixed(2)}`);
    console.log(`deliveries 2 s after the phase: ${r.states.map((s) => `endpoint ${s.endpoint_id} ${s.state} ${s.n}`).join('; ')}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
