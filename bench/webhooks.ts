// `npm run bench:webhooks`: what webhook endpoints cost POST /bookings. The real server (dist/, `serve`) on
// SQLite and on a fresh PostgreSQL database; closed-loop POST /bookings of distinct free times of one schedule
// (autocannon, BENCH_CONNECTIONS x BENCH_SECONDS), each phase on a schedule of its own:
// 1. no endpoint (the baseline, same run);
// 2. one endpoint subscribed to every event: a bare node:http receiver answering 200 (its own process);
// 3. that one plus one that accepts connections and never answers (every attempt runs into the timeout).
// Endpoints are added with `bin/booking webhook add` while the server runs. A first phase (not counted) warms
// the server up. Prints req/s, p50 and p99 of each phase, the ratio to the baseline, the server's CPU time per
// booking made (its webhook worker's work meanwhile included: on a shared machine the steadiest figure), and
// what became of the deliveries 2 s after the last phase.
//
// With BENCH_WEBHOOKS_BASELINE=REV (a commit, e.g. main) the same phases run first with that commit's code
// (built by `git archive` into a temporary directory, this checkout's node_modules), on a database of its
// own, so before and after are measured back to back.
//
// Env: BENCH_ENGINES=sqlite,postgres  BENCH_SECONDS (5)  BENCH_CONNECTIONS (20)  BENCH_WEBHOOKS_BASELINE
// BENCH_POSTGRES_URL  BENCH_SERVER_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the
// server). Figures are printed, not asserted.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { buildBaseline, cpuMsOf, freePort, load, type Figures } from './measure.js';
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

async function book(
  base: string,
  headers: Record<string, string>,
  schedule: BenchSchedule,
  label: string,
  free?: string[],
): Promise<Figures> {
  const times = free ?? (await freeTimes(base, headers, schedule, 30_000));
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

/** A phase's figures and the server's CPU time per booking made in it (the worker's deliveries meanwhile included). */
type Phase = Figures & { cpuMsPerBooking: number };

interface Phases {
  without: Phase;
  oneWorking: Phase;
  workingAndSilent: Phase;
  states: { endpoint_id: number; state: string; n: number }[];
}

/** The phases on a fresh installation in `databaseUrl`, served by the code in `root`. */
async function benchEngine(root: string, databaseUrl: string): Promise<Phases> {
  const db = connect(databaseUrl);
  await migrate(db);
  await setup(db, { timezone: 'Europe/Berlin', adminEmail: 'bench@example.com', adminPassword: 'bench password' }, Date.now());
  await setApiEnabled(db, true);
  const token = await generateToken(db);
  await setOperatorSetting(db, 'api.rate_limit_per_minute', '9999999');
  await db.close();
  const [warm, quiet, working, both] = (await addBookingSchedules(databaseUrl, 4)) as [
    BenchSchedule,
    BenchSchedule,
    BenchSchedule,
    BenchSchedule,
  ];
  const headers = { authorization: `Bearer ${token}` };

  const fast = started(process.execPath, [join(ROOT, 'bench/baseline-server.mjs'), '64'], {});
  const fastPort = await new Promise<string>((resolve) => fast.stdout!.once('data', (d) => resolve(String(d).trim())));
  const silent = await silentReceiver();
  const port = await freePort();
  const nodeArgs = (env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const server = started(process.execPath, [...nodeArgs, join(root, 'dist/cli/main.js'), 'serve', '--port', String(port)], {
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'error',
  });
  const base = `http://127.0.0.1:${port}`;
  const addEndpoint = (url: string) => {
    const added = spawnSync(join(root, 'bin/booking'), ['webhook', 'add', url], {
      env: { ...env, DATABASE_URL: databaseUrl },
      encoding: 'utf8',
    });
    if (added.status !== 0) throw new Error(`webhook add failed: ${added.stderr}`);
  };
  try {
    await healthy(`${base}/healthz`);
    // a phase not counted first: the JIT and the database's caches warm up, so the baseline is not the cold one
    await book(base, headers, warm, 'warm');
    // CPU time is what a loaded, shared machine disturbs least: req/s and latencies move with the neighbours
    const measured = async (schedule: BenchSchedule, label: string): Promise<Phase> => {
      const times = await freeTimes(base, headers, schedule, 30_000);
      const cpuBefore = cpuMsOf(server.pid!);
      const figures = await book(base, headers, schedule, label, times);
      return { ...figures, cpuMsPerBooking: (cpuMsOf(server.pid!) - cpuBefore) / Math.max(1, figures.ok) };
    };
    const without = await measured(quiet, 'quiet');
    addEndpoint(`http://127.0.0.1:${fastPort}/hook`);
    const oneWorking = await measured(working, 'working');
    addEndpoint(silent.url);
    const workingAndSilent = await measured(both, 'both');
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
    return { without, oneWorking, workingAndSilent, states };
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

const row = (label: string, f: Phase, baseline: Phase) =>
  `${label.padEnd(42)} ${f.rps.toFixed(0).padStart(7)} ${f.p50.toFixed(2).padStart(8)} ${f.p99.toFixed(2).padStart(8)} ${String(f.errors).padStart(8)} ${(f.rps / baseline.rps).toFixed(2).padStart(7)} ${f.cpuMsPerBooking.toFixed(2).padStart(9)}`;

function print(title: string, r: Phases): void {
  console.log(`\n${title}`);
  console.log(
    `${'POST /bookings, 1 schedule'.padEnd(42)} ${'req/s'.padStart(7)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'non-2xx'.padStart(8)} ${'ratio'.padStart(7)} ${'CPU ms/b'.padStart(9)}`,
  );
  console.log(row('no endpoint (baseline)', r.without, r.without));
  console.log(row('1 endpoint answering 200', r.oneWorking, r.without));
  console.log(row('2 endpoints: one answers 200, one never', r.workingAndSilent, r.without));
  console.log(`deliveries 2 s after the last phase: ${r.states.map((s) => `endpoint ${s.endpoint_id} ${s.state} ${s.n}`).join('; ')}`);
}

const BASELINE = env.BENCH_WEBHOOKS_BASELINE;
const baseline = BASELINE ? buildBaseline(BASELINE, 'booking-webhooks-baseline-') : null;
const variants = [...(baseline ? [{ name: `baseline ${BASELINE}`, root: baseline.root }] : []), { name: 'this code', root: ROOT }];
const dir = mkdtempSync(join(tmpdir(), 'booking-bench-webhooks-'));
try {
  console.log(`node ${process.version}; autocannon ${CONNECTIONS} connections x ${SECONDS} s per phase`);
  for (const engine of ENGINES) {
    for (const [i, variant] of variants.entries()) {
      const r =
        engine === 'sqlite'
          ? await benchEngine(variant.root, `sqlite:${join(dir, `bench-${i}.db`)}`)
          : await withPostgres((url) => benchEngine(variant.root, url));
      print(`${engine}, ${variant.name}`, r);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
  baseline?.dispose();
}
