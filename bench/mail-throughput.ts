// `npm run bench:mail`: does one instance's mail delivery keep up with the booking rate that instance
// reaches? (issue 15). For each engine (a fresh database, dropped afterwards), with the real server
// (dist/cli/main.js serve: the API and its outbox worker in one process, as in production), the SMTP
// server (bench/smtp-sink.ts) and the open-loop booking driver (bench/booking-driver.ts) each in a process
// of their own:
//
// 1. peak: closed-loop POST /bookings with no SMTP server configured (the worker claims nothing) for
//    BENCH_SECONDS: the booking rate one instance reaches, and the server's CPU per booking;
// 2. at the peak rate, per variant: the server restarted with SMTP_URL and MAIL_CONCURRENCY, bookings
//    offered open loop at that rate for BENCH_MAIL_SECONDS, then up to BENCH_MAIL_DRAIN_SECONDS for the
//    outbox to drain. Mails/s queued and delivered while the bookings arrive, the backlog (queued, not yet
//    delivered) at each second, queue-to-delivery (outbox row created -> the SMTP server's 250) p50/p99,
//    and once the bookings stop: mails/s and the server's CPU per mail (its CPU time over the messages it
//    delivered, nothing else running in it then);
// 3. sustained, per variant of this code: 70% of the booking rate one process carries with its mail, the
//    lower of the CPU bound (1000 / (ms per booking + 2 x ms per mail): one core) and the lanes' bound
//    (the drain rate of 2 / 2), offered the same way: the backlog must stay bounded and drain. (70%, not
//    90%: bookings and sends come at random, and a queue run close to its capacity grows long.)
// Each phase books its own schedule; the messages a phase left undelivered are marked failed before the
// next, so each starts with an empty outbox.
//
// Variants: this code at MAIL_CONCURRENCY 4 (the default) and 16, per MAIL_WORKER in BENCH_MAIL_WORKERS
// (thread: delivery in a worker thread of its own, the default; inline: on the API's event loop); with
// BENCH_MAIL_BASELINE=REV (a commit, e.g. main), first that commit's code at the same concurrencies, on the
// same database: the bench takes it with `git archive` into a temporary directory and builds it there
// (this checkout's node_modules).
//
// Env: BENCH_ENGINES=sqlite,postgres  BENCH_SECONDS (5)  BENCH_CONNECTIONS (20)  BENCH_MAIL_SECONDS (5)
// BENCH_MAIL_DRAIN_SECONDS (10)  BENCH_MAIL_DELAY_MS (30: how long the SMTP server takes to answer)
// BENCH_MAIL_CONCURRENCY (4,16)  BENCH_MAIL_WORKERS (thread)  BENCH_MAIL_SUSTAINED_RATE (bookings/s for phase 3
// of every variant; default 70% of each one's bound)  BENCH_MAIL_BASELINE  BENCH_POSTGRES_URL  BENCH_SERVER_NODE_ARGS
// (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the server). Figures are printed, not asserted.
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { buildBaseline, cpuMsOf, freePort, load, offerBookings, percentile } from './measure.js';
import { addBookingSchedules, discardUnsent, lastMessageId, queuedMessages, seedInstallation, today, type BenchSchedule } from './seed.js';
import type { SinkCommand, SinkReport } from './smtp-sink.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const env = process.env;
const SECONDS = Number(env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 20);
const MAIL_SECONDS = Number(env.BENCH_MAIL_SECONDS ?? 5);
const DRAIN_SECONDS = Number(env.BENCH_MAIL_DRAIN_SECONDS ?? 10);
const DELAY_MS = Number(env.BENCH_MAIL_DELAY_MS ?? 30);
const CONCURRENCIES = (env.BENCH_MAIL_CONCURRENCY ?? '4,16').split(',').map(Number);
const SUSTAINED_RATE = Number(env.BENCH_MAIL_SUSTAINED_RATE ?? 0);
const WORKERS = (env.BENCH_MAIL_WORKERS ?? 'thread').split(',').map((w) => w.trim());
const BASELINE = env.BENCH_MAIL_BASELINE;
const POSTGRES_ADMIN_URL = env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ENGINES = (env.BENCH_ENGINES ?? 'sqlite,postgres').split(',').map((e) => e.trim()) as ('sqlite' | 'postgres')[];

interface Variant {
  name: string;
  concurrency: number;
  /** the checkout whose dist/cli/main.js serves */
  root: string;
  /** MAIL_WORKER (this code only) */
  worker?: string;
}

const baseline = BASELINE ? buildBaseline(BASELINE, 'booking-mail-baseline-') : null;
const VARIANTS: Variant[] = [
  ...(baseline
    ? CONCURRENCIES.map((c) => ({ name: `baseline ${BASELINE}, MAIL_CONCURRENCY=${c}`, concurrency: c, root: baseline.root }))
    : []),
  ...WORKERS.flatMap((worker) =>
    CONCURRENCIES.map((c) => ({
      name: `this code, MAIL_WORKER=${worker}, MAIL_CONCURRENCY=${c}${c === 4 ? ' (default)' : ''}`,
      concurrency: c,
      root: ROOT,
      worker,
    })),
  ),
];

class Sink {
  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
  ) {}

  static async start(): Promise<Sink> {
    const child = fork(join(ROOT, 'bench/smtp-sink.ts'), [String(DELAY_MS)], {
      execArgv: ['--import', join(ROOT, 'node_modules/tsx/dist/loader.mjs')],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const first = await new Promise<SinkReport>((resolve) => child.once('message', resolve));
    if (first.type !== 'listening') throw new Error('SMTP sink did not start');
    return new Sink(child, first.port);
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}/?ignoreTLS=true`;
  }

  send(command: SinkCommand): void {
    this.child.send(command);
  }

  report(): Promise<Extract<SinkReport, { type: 'arrivals' }>> {
    return new Promise((resolve) => {
      this.child.once('message', (r: SinkReport) => resolve(r as Extract<SinkReport, { type: 'arrivals' }>));
      this.child.send('report' satisfies SinkCommand);
    });
  }

  stop(): void {
    this.child.disconnect();
  }
}

interface Server {
  child: ChildProcess;
  base: string;
  stop(): Promise<void>;
}

async function startServer(root: string, databaseUrl: string, extraEnv: NodeJS.ProcessEnv): Promise<Server> {
  const port = await freePort();
  const nodeArgs = (env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, join(root, 'dist/cli/main.js'), 'serve', '--port', String(port)], {
    cwd: root,
    env: { ...env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', ...extraEnv },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    await new Promise((r) => setTimeout(r, 100));
    // exited (the port taken meanwhile): whatever answers there is not this server
    if (i > 200 || child.exitCode !== null) throw new Error(`serve (${root}) did not start`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      /* not listening yet */
    }
  }
  return {
    child,
    base,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Free times of a schedule through the API, latest day first and never today, at least `enough` of them. */
async function freeTimes(base: string, headers: Record<string, string>, { scheduleId, reasonId }: BenchSchedule, enough: number) {
  const get = async (path: string) => {
    const answer = await fetch(`${base}/api${path}`, { headers });
    if (!answer.ok) throw new Error(`GET ${path} answered ${answer.status}: ${await answer.text()}`);
    return ((await answer.json()) as { data: string[] }).data;
  };
  const q = `schedule=${scheduleId}&reason=${reasonId}`;
  const first = today();
  const free: string[] = [];
  for (const day of (await get(`/days?${q}`)).filter((d) => d > first).reverse()) {
    if (free.length >= enough) break;
    free.push(...(await get(`/slots?${q}&day=${day}`)));
  }
  return free;
}

const bodyOf = (s: BenchSchedule, slot: string, email: string) =>
  JSON.stringify({ schedule: s.scheduleId, reason: s.reasonId, slot, submission: { email } });

interface Peak {
  rate: number;
  cpuMsPerBooking: number;
}

/** 1: the booking rate with no mail delivery, and the server's CPU per booking. */
async function measurePeak(databaseUrl: string, token: string, schedule: BenchSchedule): Promise<Peak> {
  const headers = { authorization: `Bearer ${token}` };
  const server = await startServer(ROOT, databaseUrl, {});
  try {
    const times = await freeTimes(server.base, headers, schedule, 3000 * SECONDS);
    let next = 0;
    const cpuBefore = cpuMsOf(server.child.pid!);
    const figures = await load(`${server.base}/api/bookings`, {
      connections: CONNECTIONS,
      seconds: SECONDS,
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      maxOverallRequests: times.length,
      requests: [{ setupRequest: (r: object) => ({ ...r, body: bodyOf(schedule, times[next++]!, `peak${next}@example.com`) }) }],
    });
    const cpuMs = cpuMsOf(server.child.pid!) - cpuBefore;
    return { rate: Math.floor(figures.ok / SECONDS), cpuMsPerBooking: cpuMs / figures.ok };
  } finally {
    await server.stop();
    // the mail these bookings queued is not part of the next phases
    await discardUnsent(databaseUrl);
  }
}

interface Delivery {
  offered: number;
  accepted: number;
  /** messages queued by the bookings, and how many of them arrived while bookings were still coming in */
  queued: number;
  deliveredWhileBooking: number;
  delivered: number;
  duplicates: number;
  /** backlog (queued, not yet delivered) at the end of each second from the first booking */
  backlog: number[];
  p50: number;
  p99: number;
  /** seconds from the last booking until the last message arrived; null when not drained within the limit */
  drainSeconds: number | null;
  /** mails/s once bookings stopped, while a backlog remained: what delivery alone reaches */
  drainRate: number;
  /** the server's CPU per message delivered once bookings stopped (nothing else to do then) */
  cpuMsPerMail: number;
  sinkCpuMsPerMail: number;
}

/** Bookings offered at `rate` for MAIL_SECONDS to a server that delivers their mail, then the drain. */
async function measureDelivery(
  variant: Variant,
  databaseUrl: string,
  token: string,
  schedule: BenchSchedule,
  rate: number,
  sink: Sink,
): Promise<Delivery> {
  const headers = { authorization: `Bearer ${token}` };
  const server = await startServer(variant.root, databaseUrl, {
    SMTP_URL: sink.url,
    MAIL_CONCURRENCY: String(variant.concurrency),
    MAIL_FROM: 'bench@example.com',
    ...(variant.worker ? { MAIL_WORKER: variant.worker } : {}),
  });
  try {
    const offered = Math.ceil(rate * MAIL_SECONDS);
    const times = await freeTimes(server.base, headers, schedule, offered);
    const bodies = times.slice(0, offered).map((slot, i) => bodyOf(schedule, slot, `mail${i}@example.com`));
    const firstId = (await lastMessageId(databaseUrl)) + 1;
    sink.send('reset');
    const started = Date.now();
    const { bookings } = await offerBookings(`${server.base}/api/bookings`, headers, bodies, rate, async () => {});
    const bookedUntil = Date.now();
    const cpuAtLastBooking = cpuMsOf(server.child.pid!);
    const rows = await queuedMessages(databaseUrl, firstId);
    const ours = (r: Extract<SinkReport, { type: 'arrivals' }>) => {
      const keep = r.ids.map((id, i) => [id, r.at[i]!] as const).filter(([id]) => id >= firstId);
      return { ids: keep.map(([id]) => id), at: keep.map(([, at]) => at), duplicates: r.duplicates, cpuMs: r.cpuMs };
    };
    let arrivals = ours(await sink.report());
    const deliveredWhileBooking = arrivals.at.filter((a) => a <= bookedUntil).length;
    const drainLimit = bookedUntil + DRAIN_SECONDS * 1000;
    while (arrivals.ids.length - arrivals.duplicates < rows.length && Date.now() < drainLimit) {
      await new Promise((r) => setTimeout(r, 100));
      arrivals = ours(await sink.report());
    }
    const drainEnd = Date.now();
    const cpuMs = cpuMsOf(server.child.pid!) - cpuAtLastBooking;
    const createdAt = new Map(rows.map((r) => [r.id, r.createdAt]));
    const latencies = arrivals.ids.map((id, i) => arrivals.at[i]! - createdAt.get(id)!).sort((a, b) => a - b);
    const delivered = arrivals.ids.length;
    const drained = delivered >= rows.length;
    const lastArrival = Math.max(bookedUntil, ...arrivals.at);
    const backlog: number[] = [];
    for (let t = started + 1000; t < (drained ? lastArrival : drainEnd) + 1000; t += 1000)
      backlog.push(rows.filter((r) => r.createdAt <= t).length - arrivals.at.filter((a) => a <= t).length);
    const afterBookings = delivered - deliveredWhileBooking;
    // an undelivered message counts as infinitely late
    const quantile = (p: number) =>
      latencies.length >= (rows.length * p) / 100 ? percentile(latencies, (p * rows.length) / latencies.length) : Infinity;
    return {
      offered,
      accepted: bookings.accepted,
      queued: rows.length,
      deliveredWhileBooking,
      delivered,
      duplicates: arrivals.duplicates,
      backlog,
      p50: quantile(50),
      p99: quantile(99),
      drainSeconds: drained ? (lastArrival - bookedUntil) / 1000 : null,
      drainRate: afterBookings / (((drained ? lastArrival : drainEnd) - bookedUntil) / 1000),
      cpuMsPerMail: cpuMs / Math.max(1, afterBookings),
      sinkCpuMsPerMail: arrivals.cpuMs / Math.max(1, delivered),
    };
  } finally {
    await server.stop();
    await discardUnsent(databaseUrl);
  }
}

async function withDatabase<T>(engine: 'sqlite' | 'postgres', work: (url: string) => Promise<T>): Promise<T> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'booking-mail-bench-'));
    try {
      return await work(`sqlite:${join(dir, 'bench.db')}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const name = `booking_mail_bench_${randomBytes(4).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  try {
    return await work(url.href);
  } finally {
    await admin(`drop database if exists ${name} with (force)`);
  }
}

const fixed = (x: number, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : '-');
const seconds = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(2)} s` : 'not delivered');

function printDelivery(label: string, rate: number, d: Delivery): void {
  const drained =
    d.drainSeconds === null
      ? `NOT drained ${DRAIN_SECONDS} s after the last booking (${d.queued - d.delivered} left)`
      : `drained ${fixed(d.drainSeconds, 1)} s after the last booking`;
  console.log(`  ${label}`);
  console.log(
    `    ${rate} bookings/s offered for ${MAIL_SECONDS} s (${d.accepted} of ${d.offered} accepted): mails/s queued ${fixed(d.queued / MAIL_SECONDS)}, delivered meanwhile ${fixed(d.deliveredWhileBooking / MAIL_SECONDS)}; ${drained}`,
  );
  console.log(
    `    queue-to-delivery p50 ${seconds(d.p50)}, p99 ${seconds(d.p99)}; after the bookings: ${fixed(d.drainRate)} mails/s, server CPU ${fixed(d.cpuMsPerMail, 2)} ms per mail (SMTP server ${fixed(d.sinkCpuMsPerMail, 2)} ms)${d.duplicates ? `; ${d.duplicates} DUPLICATES` : ''}`,
  );
  console.log(`    backlog at each second: ${d.backlog.join(' ')}`);
}

async function benchEngine(engine: 'sqlite' | 'postgres', databaseUrl: string, sink: Sink): Promise<void> {
  const { token } = await seedInstallation(databaseUrl);
  // the limiter must not distort the figures
  const set = spawnSync(join(ROOT, 'bin/booking'), ['set', 'api.rate_limit_per_minute', '9999999'], {
    env: { ...env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
  });
  if (set.status !== 0) throw new Error(`booking set failed: ${set.stderr}`);
  const ours = VARIANTS.filter((v) => v.root === ROOT);
  const schedules = await addBookingSchedules(databaseUrl, 1 + VARIANTS.length + ours.length);
  const peak = await measurePeak(databaseUrl, token, schedules.pop()!);
  console.log(
    `\n${engine}: POST /bookings closed loop, ${CONNECTIONS} connections, no mail delivery: ${peak.rate} bookings/s (${2 * peak.rate} mails/s to queue); server CPU ${fixed(peak.cpuMsPerBooking, 2)} ms per booking`,
  );
  const atPeak = new Map<Variant, Delivery>();
  for (const variant of VARIANTS) {
    const d = await measureDelivery(variant, databaseUrl, token, schedules.pop()!, peak.rate, sink);
    atPeak.set(variant, d);
    printDelivery(`at the peak rate, ${variant.name}`, peak.rate, d);
  }
  // inline: one core shared by the bookings and their two mails each; in a thread: a core for the bookings
  // and one for the mail (on this machine shared with the SMTP server and the driver); and no more mail
  // than the lanes deliver
  for (const variant of ours) {
    const d = atPeak.get(variant)!;
    const thread = variant.worker === 'thread';
    const byCpu = thread
      ? Math.min(1000 / peak.cpuMsPerBooking, 1000 / (2 * d.cpuMsPerMail))
      : 1000 / (peak.cpuMsPerBooking + 2 * d.cpuMsPerMail);
    // the drain rate is the lanes' rate only while a backlog remained; when the peak's mail was delivered
    // as it came (drained within 2 s), the lanes carry at least the rate it was queued at
    const keptUp = d.drainSeconds !== null && d.drainSeconds < 2;
    const laneRate = keptUp ? Math.max(d.drainRate, d.queued / MAIL_SECONDS) : d.drainRate;
    const byLanes = laneRate / 2;
    // BENCH_MAIL_SUSTAINED_RATE: one rate for every variant, to compare them like for like
    const rate = SUSTAINED_RATE || Math.floor(0.7 * Math.min(byCpu, byLanes));
    if (!(rate > 0)) continue;
    const sustained = await measureDelivery(variant, databaseUrl, token, schedules.pop()!, rate, sink);
    printDelivery(
      `sustained, ${variant.name}: 70% of min(CPU: ${thread ? `min(1000 / ${fixed(peak.cpuMsPerBooking, 2)}, 1000 / (2 x ${fixed(d.cpuMsPerMail, 2)}))` : `1000 / (${fixed(peak.cpuMsPerBooking, 2)} + 2 x ${fixed(d.cpuMsPerMail, 2)}) ms`} = ${fixed(byCpu)}, lanes: ${keptUp ? 'at least ' : ''}${fixed(laneRate)} / 2 = ${fixed(byLanes)}) bookings/s`,
      rate,
      sustained,
    );
  }
}

console.log(
  `node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'}); SMTP server answers after ${DELAY_MS} ms; bookings offered for ${MAIL_SECONDS} s per phase, drain up to ${DRAIN_SECONDS} s`,
);
const sink = await Sink.start();
try {
  for (const engine of ENGINES) await withDatabase(engine, (url) => benchEngine(engine, url, sink));
} finally {
  baseline?.dispose();
  sink.stop();
}
