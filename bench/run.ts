// `npm run bench`: for SQLite and PostgreSQL (a fresh database, dropped afterwards) seeds an installation with
// one schedule S (365-day horizon, 10,000 future bookings), starts the real server (bin/booking serve) and
// measures, printing one table per engine and then the ratios against issue 13's targets:
// - reads: the bare node:http ceiling (bench/baseline-server.mjs, its own process, a JSON body the size of
//   the /slots answer) and /schedules, /days, /slots (the busiest day) of S, closed loop with autocannon;
// - mixed: /days of S under autocannon while an open-loop driver offers bookings of distinct free times of
//   S at a fixed rate (100/s, 1,000 of them) in its own process;
// - bookings: closed-loop POST /bookings of distinct free times of one schedule, then spread over 50.
// Same connections and duration for every closed-loop target. req/s is autocannon's; p50/p99 are computed
// from every 2xx response time (sub-millisecond, ms to 2 decimals).
// Env: BENCH_ENGINES=sqlite,postgres  BENCH_SCENARIOS=reads,mixed,bookings  BENCH_CONNECTIONS (20)
// BENCH_SECONDS (5, per closed-loop target)  BENCH_BOOKING_RATE (100/s)  BENCH_BOOKINGS_OFFERED (1000)
// BENCH_SCHEDULES (50)  BENCH_POSTGRES_URL  BENCH_SERVER_NODE_ARGS  BENCH_KEEP (keep the SQLite file)
// BENCH_BASELINE=<git rev> (e.g. main): that commit's server, built in a temporary directory, is measured
// the same way right before this checkout's, per engine, and the summary shows both (on a shared machine
// the load changes from minute to minute: figures of one run side by side compare better than runs apart).
// Only the mixed load on PostgreSQL against main: BENCH_ENGINES=postgres BENCH_SCENARIOS=mixed BENCH_BASELINE=main.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect } from '../src/db/connect.js';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { buildBaseline, freePort, load, offerBookings, type Figures, type OfferedBookings } from './measure.js';
import { seedInstallation, addBookingSchedules, today, shuffled, SEEDED_BOOKINGS, HORIZON_DAYS, type BenchSchedule } from './seed.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const env = process.env;
// issue 13 reads with 20-50 connections; every closed-loop target uses the same count
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 20);
const SECONDS = Number(env.BENCH_SECONDS ?? 5);
const BOOKING_RATE = Number(env.BENCH_BOOKING_RATE ?? 100);
const BOOKINGS_OFFERED = Number(env.BENCH_BOOKINGS_OFFERED ?? 1000);
const SPREAD_SCHEDULES = Number(env.BENCH_SCHEDULES ?? 50);
const POSTGRES_ADMIN_URL = env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ENGINES = ['sqlite', 'postgres'] as const;
const SCENARIOS = ['reads', 'mixed', 'bookings'] as const;
type Engine = (typeof ENGINES)[number];
type Scenario = (typeof SCENARIOS)[number];

function chosen<T extends string>(variable: string, all: readonly T[]): T[] {
  const names = (env[variable] ?? all.join(','))
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  for (const name of names)
    if (!all.includes(name as T)) throw new Error(`${variable}: unknown "${name}" (one or more of ${all.join(',')})`);
  return all.filter((n) => names.includes(n));
}

interface Reads {
  ceiling: Figures;
  slotsBytes: number;
  daysCount: number;
  schedules: Figures;
  days: Figures;
  slots: Figures;
}
interface Mixed {
  quietDays: Figures;
  loadedDays: Figures;
  bookings: OfferedBookings;
  seconds: number;
}
interface Bookings {
  single: Figures;
  spread: Figures;
}
interface EngineFigures {
  engine: Engine;
  /** the baseline's commit, when these are its figures */
  baseline?: string;
  reads?: Reads;
  mixed?: Mixed;
  bookings?: Bookings;
}

function startProcess(command: string, args: string[], extraEnv: NodeJS.ProcessEnv): ChildProcess {
  return spawn(command, args, { cwd: ROOT, env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'inherit'] });
}

async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer`);
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** The ceiling: a bare node:http server answering a fixed JSON body of `bytes`, in its own process. */
async function measureCeiling(bytes: number): Promise<Figures> {
  const server = startProcess(process.execPath, [join(ROOT, 'bench/baseline-server.mjs'), String(bytes)], {});
  const port = await new Promise<string>((resolve) => server.stdout!.once('data', (d) => resolve(String(d).trim())));
  try {
    return await load(`http://127.0.0.1:${port}/`, { connections: CONNECTIONS, seconds: SECONDS });
  } finally {
    await stopProcess(server);
  }
}

class Api {
  readonly headers: Record<string, string>;
  constructor(
    readonly base: string,
    token: string,
  ) {
    this.headers = { authorization: `Bearer ${token}` };
  }

  async text(path: string): Promise<string> {
    const answer = await fetch(`${this.base}/api${path}`, { headers: this.headers });
    if (!answer.ok) throw new Error(`GET ${path} answered ${answer.status}`);
    return answer.text();
  }

  async data(path: string): Promise<string[]> {
    return (JSON.parse(await this.text(path)) as { data: string[] }).data;
  }

  /**
   * Free times through the API, as a client would book them: latest day first and never today, whose first
   * times may pass while a phase runs; at least `enough` of them when the schedule has that many.
   */
  async freeTimes({ scheduleId, reasonId }: BenchSchedule, enough = Infinity): Promise<string[]> {
    const q = `schedule=${scheduleId}&reason=${reasonId}`;
    const first = today();
    const free: string[] = [];
    for (const day of (await this.data(`/days?${q}`)).filter((d) => d > first).reverse()) {
      if (free.length >= enough) break;
      free.push(...(await this.data(`/slots?${q}&day=${day}`)));
    }
    return free;
  }

  /** Closed-loop POST /bookings of the given times, each at most once (autocannon stops when they run out). */
  async book(name: string, times: { schedule: BenchSchedule; slot: string }[]): Promise<Figures> {
    const emailPrefix = name.replace(/\W+/g, '-');
    let next = 0;
    const figures = await load(`${this.base}/api/bookings`, {
      connections: CONNECTIONS,
      seconds: SECONDS,
      method: 'POST',
      headers: { ...this.headers, 'content-type': 'application/json' },
      maxOverallRequests: times.length,
      requests: [
        {
          setupRequest: (request: Record<string, unknown>) => {
            const { schedule, slot } = times[next++]!;
            return {
              ...request,
              body: JSON.stringify({
                schedule: schedule.scheduleId,
                reason: schedule.reasonId,
                slot,
                submission: { email: `${emailPrefix}${next}@example.com` },
              }),
            };
          },
        },
      ],
    });
    const exhausted = next >= times.length ? `, all of them: the phase stopped before its ${SECONDS} s, so its req/s reads low` : '';
    console.log(`  POST /bookings, ${name}: booked ${figures.ok} of ${times.length} distinct free times${exhausted}`);
    return figures;
  }
}

async function benchEngine(engine: Engine, databaseUrl: string, scenarios: Scenario[], root = ROOT): Promise<EngineFigures> {
  const port = await freePort();
  const started = Date.now();
  const { token, busiestDay, ...s } = await seedInstallation(databaseUrl);
  // the limiter must not distort the figures
  const set = spawnSync(join(ROOT, 'bin/booking'), ['set', 'api.rate_limit_per_minute', '9999999'], {
    env: { ...env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
  });
  if (set.status !== 0) throw new Error(`booking set failed: ${set.stderr}`);
  if (root !== ROOT) await forgetNewerMigrations(databaseUrl, root);
  console.log(
    `${engine}: seeded ${SEEDED_BOOKINGS} bookings in ${((Date.now() - started) / 1000).toFixed(1)} s; busiest day ${busiestDay}`,
  );

  // what bin/booking runs, started directly so that BENCH_SERVER_NODE_ARGS can profile the server under
  // load, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" (not allowed in NODE_OPTIONS)
  const nodeArgs = (env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const server = startProcess(process.execPath, [...nodeArgs, join(root, 'dist/cli/main.js'), 'serve', '--port', String(port)], {
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'warn',
  });
  const base = `http://127.0.0.1:${port}`;
  const figures: EngineFigures = { engine };
  try {
    await waitFor(`${base}/healthz`);
    const api = new Api(base, token);
    const q = `schedule=${s.scheduleId}&reason=${s.reasonId}`;
    const read = (path: string) => load(`${base}/api${path}`, { connections: CONNECTIONS, seconds: SECONDS, headers: api.headers });

    if (scenarios.includes('reads')) {
      const daysCount = (await api.data(`/days?${q}`)).length;
      const slotsBytes = Buffer.byteLength(await api.text(`/slots?${q}&day=${busiestDay}`));
      const ceiling = await measureCeiling(slotsBytes);
      const schedules = await read('/schedules');
      const days = await read(`/days?${q}`);
      const slots = await read(`/slots?${q}&day=${busiestDay}`);
      figures.reads = { ceiling, slotsBytes, daysCount, schedules, days, slots };
    }

    if (scenarios.includes('mixed')) {
      const free = shuffled(await api.freeTimes(s));
      if (free.length < BOOKINGS_OFFERED)
        throw new Error(`only ${free.length} free times on the /days schedule for ${BOOKINGS_OFFERED} bookings`);
      const bodies = free
        .slice(0, BOOKINGS_OFFERED)
        .map((slot, i) =>
          JSON.stringify({ schedule: s.scheduleId, reason: s.reasonId, slot, submission: { email: `mixed${i + 1}@example.com` } }),
        );
      const quietDays = figures.reads?.days ?? (await read(`/days?${q}`));
      const seconds = BOOKINGS_OFFERED / BOOKING_RATE;
      const { bookings, during } = await offerBookings(`${base}/api/bookings`, api.headers, bodies, BOOKING_RATE, () =>
        load(`${base}/api/days?${q}`, { connections: CONNECTIONS, seconds, headers: api.headers }),
      );
      figures.mixed = { quietDays, loadedDays: during, bookings, seconds };
    }

    if (scenarios.includes('bookings')) {
      // added only now, so that the reads above answered the one-schedule /schedules list of the earlier rounds
      const [single, ...spread] = await addBookingSchedules(databaseUrl, 1 + SPREAD_SCHEDULES);
      const singleTimes = (await api.freeTimes(single!)).map((slot) => ({ schedule: single!, slot }));
      const singleFigures = await api.book('1 schedule', singleTimes);
      // room for 4 times the single-schedule rate (and at least two days of each schedule) without fetching
      // every day of 50 schedules
      const enough = Math.max(600, Math.ceil((4 * singleFigures.ok) / SPREAD_SCHEDULES));
      const perSchedule = await Promise.all(
        spread.map(async (schedule) => (await api.freeTimes(schedule, enough)).map((slot) => ({ schedule, slot }))),
      );
      // round robin, so that concurrent requests land on different schedules
      const longest = Math.max(...perSchedule.map((t) => t.length));
      const interleaved = Array.from({ length: longest }, (_, i) => perSchedule.map((times) => times[i]))
        .flat()
        .filter((t) => t !== undefined);
      figures.bookings = { single: singleFigures, spread: await api.book(`${SPREAD_SCHEDULES} schedules`, interleaved) };
    }
    return figures;
  } finally {
    await stopProcess(server);
  }
}

/**
 * The database was migrated by this checkout; a baseline's server refuses to start on migrations it does not
 * know (Kysely), so they are forgotten (what they created stays, unused by the baseline's code).
 */
async function forgetNewerMigrations(databaseUrl: string, root: string): Promise<void> {
  const known = readdirSync(join(root, 'src/db/migrations'))
    .filter((f) => /^\d{3}-.*\.ts$/.test(f))
    .map((f) => f.slice(0, -3));
  const db = connect(databaseUrl);
  try {
    await db.kysely
      .deleteFrom('kysely_migration' as never)
      .where('name' as never, 'not in', known as never)
      .execute();
  } finally {
    await db.close();
  }
}

async function withPostgresDatabase<T>(work: (url: string) => Promise<T>): Promise<T> {
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

const ms = (value: number) => (Number.isNaN(value) ? '-' : value.toFixed(2));
const ratio = (value: number) => (Number.isFinite(value) ? value.toFixed(2) : '-');
const row = (label: string, f: { rps: number; p50: number; p99: number; errors: number }, compared = '') =>
  `${label.padEnd(38)} ${(Number.isNaN(f.rps) ? '-' : f.rps.toFixed(0)).padStart(8)} ${ms(f.p50).padStart(8)} ${ms(f.p99).padStart(8)} ${String(f.errors).padStart(8)}  ${compared}`;
const statuses = (others: Record<string, number>) =>
  Object.entries(others)
    .map(([status, n]) => `${n} x ${status}`)
    .join(', ') || 'none';

const nameOf = (f: EngineFigures) => (f.baseline ? `${f.engine}@${f.baseline}` : f.engine);

function printEngine(figures: EngineFigures): void {
  const { reads, mixed, bookings } = figures;
  console.log(`\n${nameOf(figures)}: ${CONNECTIONS} connections x ${SECONDS} s per closed-loop target`);
  console.log(
    `${'target'.padEnd(38)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'non-2xx'.padStart(8)}  ratio`,
  );
  if (reads) {
    const toCeiling = (f: Figures) => `${ratio(f.rps / reads.ceiling.rps)} x ceiling`;
    console.log(row(`ceiling node:http, ${reads.slotsBytes}-byte JSON`, reads.ceiling));
    console.log(row('GET /schedules', reads.schedules, toCeiling(reads.schedules)));
    console.log(row(`GET /days (${reads.daysCount} days)`, reads.days, toCeiling(reads.days)));
    console.log(row('GET /slots (busiest day)', reads.slots, toCeiling(reads.slots)));
  }
  if (mixed) {
    const b = mixed.bookings;
    if (!reads) console.log(row('GET /days, quiet', mixed.quietDays));
    console.log(
      row(
        `GET /days, ${BOOKING_RATE} bookings/s landing`,
        mixed.loadedDays,
        `${ratio(mixed.loadedDays.rps / mixed.quietDays.rps)} x quiet`,
      ),
    );
    // open loop: the rate is the offered one (the line below the table says what came of it); p50/p99 of
    // the 201s from their scheduled send times; non-2xx counts every other answer and every missing one
    console.log(
      row(`POST /bookings, ${BOOKING_RATE}/s open loop`, { rps: Number.NaN, p50: b.p50, p99: b.p99, errors: b.offered - b.accepted }),
    );
  }
  if (bookings) {
    console.log(row('POST /bookings, 1 schedule', bookings.single));
    console.log(
      row(
        `POST /bookings, ${SPREAD_SCHEDULES} schedules`,
        bookings.spread,
        `${ratio(bookings.spread.rps / bookings.single.rps)} x 1 schedule`,
      ),
    );
  }
  const closedLoop: [string, Figures | undefined][] = [
    ['GET /schedules', reads?.schedules],
    ['GET /days', reads?.days],
    ['GET /slots', reads?.slots],
    ['GET /days, quiet', reads ? undefined : mixed?.quietDays],
    ['GET /days, bookings landing', mixed?.loadedDays],
    ['POST /bookings, 1 schedule', bookings?.single],
    ['POST /bookings, spread', bookings?.spread],
  ];
  for (const [label, f] of closedLoop)
    if (f && f.errors > 0)
      console.log(
        `${label}: non-2xx ${statuses(f.others)}, ${f.errors - Object.values(f.others).reduce((a, b) => a + b, 0)} errors or timeouts`,
      );
  if (mixed) {
    const b = mixed.bookings;
    console.log(
      `open loop: ${b.offered} bookings offered at ${BOOKING_RATE}/s over ${mixed.seconds} s to the /days schedule: ${b.accepted} accepted (201), other answers: ${statuses(b.others)}; ` +
        `queued past 1 s: ${b.queuedPastOneSecond}; the driver sent at most ${ms(b.maxSendLagMs)} ms behind its schedule`,
    );
  }
}

interface Target {
  label: string;
  value: (f: EngineFigures) => number | undefined;
  goal?: Partial<Record<Engine, { atLeast?: number; below?: number; atMost?: number }>>;
  digits?: number;
}

const TARGETS: Target[] = [
  {
    label: '/schedules req/s / ceiling',
    value: (f) => f.reads && f.reads.schedules.rps / f.reads.ceiling.rps,
    goal: { postgres: { atLeast: 0.35 } },
  },
  {
    label: '/days req/s / ceiling',
    value: (f) => f.reads && f.reads.days.rps / f.reads.ceiling.rps,
    goal: { postgres: { atLeast: 0.35 } },
  },
  {
    label: '/slots req/s / ceiling',
    value: (f) => f.reads && f.reads.slots.rps / f.reads.ceiling.rps,
    goal: { sqlite: { atLeast: 0.5 }, postgres: { atLeast: 0.35 } },
  },
  {
    label: '/days p50 / /schedules p50',
    value: (f) => f.reads && f.reads.days.p50 / f.reads.schedules.p50,
    goal: { sqlite: { atMost: 3 }, postgres: { atMost: 3 } },
  },
  {
    label: '/days req/s loaded / quiet',
    value: (f) => f.mixed && f.mixed.loadedDays.rps / f.mixed.quietDays.rps,
    goal: { sqlite: { atLeast: 0.6 }, postgres: { atLeast: 0.6 } },
  },
  {
    label: 'bookings accepted / offered',
    value: (f) => f.mixed && f.mixed.bookings.accepted / f.mixed.bookings.offered,
    goal: { sqlite: { atLeast: 1 }, postgres: { atLeast: 1 } },
  },
  {
    label: 'bookings queued past 1 s',
    value: (f) => f.mixed?.bookings.queuedPastOneSecond,
    goal: { sqlite: { atMost: 0 }, postgres: { atMost: 0 } },
    digits: 0,
  },
  {
    label: 'booking p99 ms under /days load',
    value: (f) => f.mixed?.bookings.p99,
    goal: { sqlite: { below: 50 }, postgres: { below: 50 } },
  },
  { label: `bookings req/s ${SPREAD_SCHEDULES} schedules / 1`, value: (f) => f.bookings && f.bookings.spread.rps / f.bookings.single.rps },
];

function printSummary(results: EngineFigures[]): void {
  console.log(`\nissue 13 targets${' '.repeat(24)}${results.map((r) => nameOf(r).padEnd(24)).join('')}`);
  for (const target of TARGETS) {
    const cells = results.map((f) => {
      const value = target.value(f);
      if (value === undefined) return '-'.padEnd(24);
      const goal = target.goal?.[f.engine];
      const shown = Number.isFinite(value) ? value.toFixed(target.digits ?? 2) : '-';
      if (!goal) return shown.padEnd(24);
      const [met, wanted] =
        goal.atLeast !== undefined
          ? [value >= goal.atLeast, `>= ${goal.atLeast}`]
          : goal.below !== undefined
            ? [value < goal.below, `< ${goal.below}`]
            : [value <= goal.atMost!, `<= ${goal.atMost}`];
      return `${shown} (${wanted}: ${met ? 'met' : 'MISSED'})`.padEnd(24);
    });
    console.log(`${target.label.padEnd(40)}${cells.join('')}`);
  }
}

async function main() {
  const engines = chosen('BENCH_ENGINES', ENGINES);
  const scenarios = chosen('BENCH_SCENARIOS', SCENARIOS);
  console.log(
    `node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'}); ${SEEDED_BOOKINGS} bookings on one schedule, ${HORIZON_DAYS}-day horizon; ` +
      `autocannon ${CONNECTIONS} connections x ${SECONDS} s per closed-loop target; scenarios ${scenarios.join(', ')}`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'booking-bench-'));
  const baseline = env.BENCH_BASELINE ? buildBaseline(env.BENCH_BASELINE, 'booking-bench-baseline-') : null;
  const results: EngineFigures[] = [];
  try {
    for (const engine of engines) {
      // the baseline first, then this checkout, each on a fresh database of its own
      for (const root of baseline ? [baseline.root, ROOT] : [ROOT]) {
        const figures =
          engine === 'sqlite'
            ? await benchEngine('sqlite', `sqlite:${join(mkdtempSync(join(dir, 'run-')), 'bench.db')}`, scenarios, root)
            : await withPostgresDatabase((url) => benchEngine('postgres', url, scenarios, root));
        results.push(root === ROOT ? figures : { ...figures, baseline: env.BENCH_BASELINE });
      }
    }
  } finally {
    baseline?.dispose();
    if (!env.BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
    else console.log('kept', dir);
  }
  for (const figures of results) printEngine(figures);
  printSummary(results);
}

await main();
