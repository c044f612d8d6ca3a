// How the benchmark loads a server: closed loop with autocannon, and the open-loop booking driver (its own
// process, bench/booking-driver.ts) whose send times autocannon's busy event loop would otherwise delay.
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error autocannon ships no type declarations
import autocannon from 'autocannon';
import type { DriverCommand, DriverReport } from './booking-driver.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  ok: number;
  /** status code -> count of every answer outside 2xx, so that a failing phase says why */
  others: Record<string, number>;
}

/** Nearest-rank percentile of ascending `sorted` (NaN when empty). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export interface LoadOptions {
  connections: number;
  seconds: number;
  [option: string]: unknown;
}

/** Closed loop: `connections` each send their next request when the previous one is answered. */
export async function load(url: string, { connections, seconds, ...options }: LoadOptions): Promise<Figures> {
  const instance = autocannon({ url, connections, duration: seconds, ...options });
  // autocannon's result.latency holds whole milliseconds, and every GET here answers in under one, so
  // p50 would read 0 for all of them: keep each 2xx response time (a float in ms, from hrtime) instead,
  // as autocannon's own histogram does (it records 2xx only).
  let times = new Float64Array(1 << 16);
  let count = 0;
  const others: Record<string, number> = {};
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    if (statusCode < 200 || statusCode >= 300) {
      others[statusCode] = (others[statusCode] ?? 0) + 1;
      return;
    }
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
    others,
  };
}

export interface OfferedBookings {
  offered: number;
  accepted: number;
  /** status code (or "no answer", "error") -> count, every answer but 201 */
  others: Record<string, number>;
  /** answered after more than 1 s from its send time, or never */
  queuedPastOneSecond: number;
  p50: number;
  p99: number;
  /** how late the driver sent its latest request against its fixed schedule: above a few ms it was starved itself */
  maxSendLagMs: number;
}

/**
 * Open loop: `bodies.length` POST /bookings at `perSecond`, each sent at its fixed time whether or not the
 * earlier ones were answered. `during` starts with the first send (the load to measure meanwhile); the
 * returned promise settles when both are done. Response times count from the scheduled send time.
 */
export async function offerBookings<T>(
  url: string,
  headers: Record<string, string>,
  bodies: string[],
  perSecond: number,
  during: () => Promise<T>,
): Promise<{ bookings: OfferedBookings; during: T }> {
  const driver = fork(join(ROOT, 'bench/booking-driver.ts'), [], {
    execArgv: ['--import', join(ROOT, 'node_modules/tsx/dist/loader.mjs')],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<number | null>((resolve) => driver.once('exit', resolve));
  try {
    const command: DriverCommand = { url, headers, bodies, perSecond, answerWithinMs: 10_000 };
    if ((await nextReport(driver)).type !== 'listening') throw new Error('booking driver did not start');
    const ready = nextReport(driver);
    driver.send(command);
    if ((await ready).type !== 'ready') throw new Error('booking driver could not connect');
    const report = nextReport(driver);
    const [measured, done] = await Promise.all([during(), (driver.send('go'), report)]);
    if (done.type !== 'done') throw new Error('booking driver stopped without a report');
    const times = Float64Array.from(done.acceptedMs).sort();
    const bookings: OfferedBookings = {
      offered: bodies.length,
      accepted: times.length,
      others: done.others,
      queuedPastOneSecond: done.queuedPastOneSecond,
      p50: percentile(times, 50),
      p99: percentile(times, 99),
      maxSendLagMs: done.maxSendLagMs,
    };
    return { bookings, during: measured };
  } finally {
    if (driver.exitCode === null) driver.kill('SIGTERM');
    await exited;
  }
}

function nextReport(driver: ChildProcess): Promise<DriverReport> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => {
      driver.off('message', onMessage);
      reject(new Error(`booking driver exited (${code}) without a report`));
    };
    const onMessage = (report: DriverReport) => {
      driver.off('exit', onExit);
      resolve(report);
    };
    driver.once('message', onMessage);
    driver.once('exit', onExit);
  });
}

/** A port nobody listens on now: a fixed one may be taken by another server on this machine, whose answers would be measured. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** The code of commit `rev`, built in a temporary directory (removed with `dispose`), with this checkout's node_modules. */
export function buildBaseline(rev: string, prefix: string): { root: string; dispose(): void } {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const archive = spawnSync('sh', ['-c', `git archive ${JSON.stringify(rev)} | tar -x -C ${JSON.stringify(root)}`], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (archive.status !== 0) throw new Error(`git archive ${rev}: ${archive.stderr}`);
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  const build = spawnSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json'], { cwd: root, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`building ${rev}: ${build.stdout}${build.stderr}`);
  return { root, dispose: () => rmSync(root, { recursive: true, force: true }) };
}

const TICKS_PER_SECOND = 100; // /proc/PID/stat's clock ticks (USER_HZ) on Linux

/** CPU time (user + system) a process has used so far, in ms. */
export function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}
