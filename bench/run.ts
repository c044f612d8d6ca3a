// `npm run bench`: seeds an installation with one schedule (365-day horizon, 10,000 future bookings) on
// SQLite and on PostgreSQL (a fresh database, dropped afterwards), starts the real server (bin/booking
// serve) on each, and loads /schedules, /days, /slots (the busiest day) of that schedule and then
// POST /bookings (distinct free times, of a second schedule on a 5-minute grid with ~105,000 of them)
// with autocannon, beside a baseline measured in the same run: a bare node:http server answering a JSON
// body the size of the /slots answer. Same connections and duration for every target. req/s is
// autocannon's; p50/p99 are computed from every 2xx response time (sub-millisecond, ms to 2 decimals).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
// @ts-expect-error autocannon ships no type declarations
import autocannon from 'autocannon';
import pg from 'pg';
import { connect, type Db } from '../src/db/connect.js';
import { migrate } from '../src/db/migrate.js';
import { setup, setApiEnabled, generateToken } from '../src/app/installation.js';
import { importSchedules } from '../src/app/schedules.js';
import { TimeZone } from '../src/core/time/zone.js';
import { DAY_MS, MINUTE_MS, formatDate } from '../src/core/time/calendar.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const BOOKINGS = 10_000;
const HORIZON = 365;
const ZONE = 'Europe/Berlin';
const POSTGRES_ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface Figures { rps: number; p50: number; p99: number; errors: number; ok: number }

/** Nearest-rank percentile of ascending `sorted` (NaN when empty). */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

async function load(url: string, options: Record<string, unknown> = {}): Promise<Figures> {
  const instance = autocannon({ url, connections: CONNECTIONS, duration: DURATION, ...options });
  // autocannon's result.latency holds whole milliseconds, and every GET here answers in under one, so
  // p50 would read 0 for all of them: keep each 2xx response time (a float in ms, from hrtime) instead,
  // as autocannon's own histogram does (it records 2xx only).
  let times = new Float64Array(1 << 16);
  let count = 0;
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    if (statusCode < 200 || statusCode >= 300) return;
    if (count === times.length) {
      const grown = new Float64Array(times.length * 2);
      grown.set(times);
      times = grown;
    }
    times[count++] = responseTime;
  });
  const result = await instance;
  const sorted = times.subarray(0, count).sort();
  return {
    rps: result.requests.average,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    errors: result.non2xx + result.errors + result.timeouts,
    ok: count,
  };
}

/** Deterministic shuffle, so every run seeds the same bookings. */
function shuffled<T>(items: T[], seed = 42): T[] {
  const out = [...items];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Setup, one schedule open around the clock (30-minute grid, 30-minute reason), 10,000 bookings spread over the year. */
async function seed(db: Db): Promise<{ token: string; scheduleId: number; reasonId: number; busiestDay: string }> {
  const now = Date.now();
  await migrate(db);
  await setup(db, { timezone: ZONE, adminEmail: 'bench@example.com', adminPassword: 'bench password 1', name: 'Bench', notifyEmail: 'desk@example.com' }, now);
  const all = Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, [['00:00', '24:00']]]));
  const { schedules } = await importSchedules(db, {
    schedules: [{ name: 'Bench', slot_interval_minutes: 30, horizon_days: HORIZON, weekly_hours: all, reasons: [{ name: 'Talk', duration_minutes: 30 }] }],
  }, now);
  const scheduleId = schedules[0]!.id;
  const reasonId = schedules[0]!.reasons[0]!.id;
  await setApiEnabled(db, true);
  const token = await generateToken(db);

  const zone = TimeZone.of(ZONE);
  const today = zone.localDayOf(now);
  const places: [number, number][] = [];
  for (let day = today + 1; day <= today + HORIZON; day++) for (let minute = 0; minute < 1440; minute += 30) places.push([day, minute]);
  const chosen = shuffled(places).slice(0, BOOKINGS).filter(([day, minute]) => zone.startInstant(day, minute) !== null);
  const perDay = new Map<number, number>();
  for (const [day] of chosen) perDay.set(day, (perDay.get(day) ?? 0) + 1);
  const busiest = [...perDay].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]![0];
  await db.write(async (trx) => {
    const customer = await trx.insertInto('customers').values({
      email_key: 'seed@example.com', email: 'seed@example.com', first_name: 'Seed', last_name: '', phone: '', created_at: now, updated_at: now,
    }).returning('id').executeTakeFirstOrThrow();
    for (let i = 0; i < chosen.length; i += 500) {
      await trx.insertInto('bookings').values(chosen.slice(i, i + 500).map(([day, minute]) => {
        const start = zone.startInstant(day, minute)!;
        return {
          details_id: randomBytes(18).toString('base64url'), schedule_id: scheduleId, reason_id: reasonId, customer_id: customer.id,
          start_at: start, end_at: start + 30 * MINUTE_MS, status: 'booked', source: 'admin', answers: '{}', created_at: now,
        };
      })).execute();
    }
  });
  return { token, scheduleId, reasonId, busiestDay: formatDate(busiest) };
}

/**
 * The schedule that POST /bookings books: open around the clock on a 5-minute grid with a 5-minute reason
 * over the same 365-day horizon, about 105,000 free times, so that a load phase at this machine's speed
 * never books the same time twice. The 30-minute schedule above has only 48 times a day; two months of it
 * ran out within the first second and the rest of the phase measured 404s.
 */
async function seedBookingSchedule(databaseUrl: string): Promise<{ scheduleId: number; reasonId: number }> {
  const db = connect(databaseUrl);
  try {
    const all = Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, [['00:00', '24:00']]]));
    const { schedules } = await importSchedules(db, {
      schedules: [{ name: 'Bench bookings', slot_interval_minutes: 5, horizon_days: HORIZON, weekly_hours: all, reasons: [{ name: 'Quick', duration_minutes: 5 }] }],
    }, Date.now());
    return { scheduleId: schedules[0]!.id, reasonId: schedules[0]!.reasons[0]!.id };
  } finally {
    await db.close();
  }
}

function startProcess(command: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
}

async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch { /* not listening yet */ }
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

interface EngineFigures { schedules: Figures; days: Figures; slots: Figures; bookings: Figures; slotsBytes: number; daysCount: number }

async function benchEngine(name: string, databaseUrl: string, port: number): Promise<EngineFigures> {
  const db = connect(databaseUrl);
  const started = Date.now();
  const { token, scheduleId, reasonId, busiestDay } = await seed(db);
  await db.close();
  // the limiter must not distort the figures
  const set = spawnSync(join(ROOT, 'bin/booking'), ['set', 'api.rate_limit_per_minute', '9999999'], { env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: 'utf8' });
  if (set.status !== 0) throw new Error(`booking set failed: ${set.stderr}`);
  console.log(`${name}: seeded ${BOOKINGS} bookings in ${((Date.now() - started) / 1000).toFixed(1)} s; busiest day ${busiestDay}`);

  // what bin/booking runs, started directly so that BENCH_SERVER_NODE_ARGS can profile the server under
  // load, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" (not allowed in NODE_OPTIONS)
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const server = startProcess(process.execPath, [
    ...nodeArgs, join(ROOT, 'dist/cli/main.js'), 'serve', '--port', String(port),
  ], { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor(`${base}/healthz`);
    const headers = { authorization: `Bearer ${token}` };
    const q = `schedule=${scheduleId}&reason=${reasonId}`;
    const days = (await (await fetch(`${base}/api/days?${q}`, { headers })).json()) as { data: string[] };
    const slotsBody = await (await fetch(`${base}/api/slots?${q}&day=${busiestDay}`, { headers })).text();
    const schedules = await load(`${base}/api/schedules`, { headers });
    const daysFigures = await load(`${base}/api/days?${q}`, { headers });
    const slots = await load(`${base}/api/slots?${q}&day=${busiestDay}`, { headers });

    // Added only now, so that /schedules above answered the same one-schedule list as before; the
    // server sees it on its next request (the config version is bumped with it).
    const booking = await seedBookingSchedule(databaseUrl);
    const bq = `schedule=${booking.scheduleId}&reason=${booking.reasonId}`;
    const today = formatDate(TimeZone.of(ZONE).localDayOf(Date.now()));
    const bookingDays = ((await (await fetch(`${base}/api/days?${bq}`, { headers })).json()) as { data: string[] }).data;
    // Free times through the API, as a client would book them: latest day first, and never today, whose
    // first times may pass while the phase runs. Each is booked at most once.
    const free: string[] = [];
    for (const day of bookingDays.filter((d) => d > today).reverse()) {
      const answer = await fetch(`${base}/api/slots?${bq}&day=${day}`, { headers });
      if (!answer.ok) throw new Error(`GET /slots ${day} answered ${answer.status}`);
      free.push(...((await answer.json()) as { data: string[] }).data);
    }
    if (free.length < CONNECTIONS) throw new Error(`only ${free.length} free times to book`);
    let next = 0;
    const bookings = await load(`${base}/api/bookings`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      // autocannon stops at this many requests even before the duration ends: a booking never repeats a time
      maxOverallRequests: free.length,
      requests: [{
        setupRequest: (request: any) => {
          const slot = free[next++];
          return { ...request, body: JSON.stringify({ schedule: booking.scheduleId, reason: booking.reasonId, slot, submission: { email: `b${next}@example.com` } }) };
        },
      }],
    });
    const exhausted = next >= free.length ? `, all of them: the phase stopped before its ${DURATION} s, so its req/s reads low` : '';
    console.log(`${name}: POST /bookings booked ${bookings.ok} of ${free.length} distinct free times (${bookingDays.length} days)${exhausted}`);
    const figures = { schedules, days: daysFigures, slots, bookings, slotsBytes: Buffer.byteLength(slotsBody), daysCount: days.data.length };
    return figures;
  } finally {
    await stopProcess(server);
  }
}

async function benchBaseline(bytes: number): Promise<Figures> {
  const server = startProcess(process.execPath, [join(ROOT, 'bench/baseline-server.mjs'), String(bytes)], {});
  const port = await new Promise<string>((resolve) => server.stdout!.once('data', (d) => resolve(String(d).trim())));
  try {
    return await load(`http://127.0.0.1:${port}/`);
  } finally {
    await stopProcess(server);
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
const row = (label: string, f: Figures) =>
  `${label.padEnd(28)} ${f.rps.toFixed(0).padStart(8)} ${ms(f.p50).padStart(8)} ${ms(f.p99).padStart(8)} ${String(f.errors).padStart(8)}`;

async function main() {
  console.log(`node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'}); autocannon ${CONNECTIONS} connections x ${DURATION} s per target`);
  const dir = mkdtempSync(join(tmpdir(), 'booking-bench-'));
  const results: [string, EngineFigures][] = [];
  try {
    // BENCH_ENGINES=sqlite (or postgres) runs one engine only, e.g. while profiling
    const engines = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',');
    if (engines.includes('sqlite')) results.push(['sqlite', await benchEngine('sqlite', `sqlite:${join(dir, 'bench.db')}`, 3901)]);
    if (engines.includes('postgres')) results.push(['postgres', await withPostgresDatabase((url) => benchEngine('postgres', url, 3902))]);
  } finally {
    if (!process.env.BENCH_KEEP) rmSync(dir, { recursive: true, force: true }); else console.log("kept", dir);
  }
  const baseline = await benchBaseline(results[0]![1].slotsBytes);

  console.log(`\n/slots answer ${results[0]![1].slotsBytes} bytes; /days lists ${results[0]![1].daysCount} days\n`);
  console.log(`${'target'.padEnd(28)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'non-2xx'.padStart(8)}`);
  console.log(row('baseline node:http', baseline));
  for (const [engine, f] of results) {
    console.log(row(`${engine} GET /schedules`, f.schedules));
    console.log(row(`${engine} GET /days (365 d)`, f.days));
    console.log(row(`${engine} GET /slots (busiest)`, f.slots));
    console.log(row(`${engine} POST /bookings`, f.bookings));
  }
  console.log('');
  for (const [engine, f] of results) {
    const slotsRatio = f.slots.rps / baseline.rps;
    // from the response times kept in load(), so sub-millisecond p50s compare as they are
    const daysRatio = f.days.p50 / f.schedules.p50;
    console.log(`${engine}: /slots rps / baseline rps = ${slotsRatio.toFixed(2)} (target >= 0.5)   /days p50 / /schedules p50 = ${daysRatio.toFixed(2)} (target <= 3)`);
  }
}

await main();
