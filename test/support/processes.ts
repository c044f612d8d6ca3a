// Runs bin/booking as a real child process, as an operator or a load balancer would.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const CLI = fileURLToPath(new URL('../../bin/booking', import.meta.url));
const run = promisify(execFile);

export async function cli(databaseUrl: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(CLI, args, { env: { ...process.env, DATABASE_URL: databaseUrl }, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const error = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof error.code === 'number' ? error.code : 1, stdout: error.stdout ?? '', stderr: error.stderr ?? String(e) };
  }
}

export async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.on('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
  });
}

export interface ServeProcess {
  child: ChildProcess;
  origin: string;
  log(): string;
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `bin/booking serve` on a free port, ready when /healthz answers 200. */
export async function serve(databaseUrl: string, env: Record<string, string> = {}): Promise<ServeProcess> {
  const port = await freePort();
  const child = spawn(CLI, ['serve', '--host', '127.0.0.1', '--port', String(port)], {
    env: { ...process.env, DATABASE_URL: databaseUrl, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.on('data', (d) => {
    log += d;
  });
  child.stderr.on('data', (d) => {
    log += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((ok) =>
    child.on('exit', (code, signal) => ok({ code, signal })),
  );
  const origin = `http://127.0.0.1:${port}`;
  const until = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve exited early:\n${log}`);
    try {
      if ((await fetch(`${origin}/healthz`)).status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > until) throw new Error(`serve not ready:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    origin,
    log: () => log,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

const ALL_WEEK = (h: string[][]) => Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, h]));

/** a configured installation, made through the CLI as an operator would */
export interface Ready {
  token: string;
  schedule: number;
  headers: Record<string, string>;
}

/** setup, one schedule open every day, the API on, a token, no practical rate limit: through the CLI */
export async function readyInstallation(url: string): Promise<Ready> {
  const ok = async (...args: string[]) => {
    const r = await cli(url, ...args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  await ok('setup', '--timezone', 'Europe/Berlin', '--admin-email', 'op@example.com', '--admin-password', 'correct horse');
  const dir = mkdtempSync(join(tmpdir(), 'booking-faults-'));
  const file = join(dir, 'schedules.json');
  writeFileSync(
    file,
    JSON.stringify({
      schedules: [
        {
          name: 'Desk',
          slot_interval_minutes: 15,
          horizon_days: 60,
          capacity: 1000,
          weekly_hours: ALL_WEEK([['08:00', '20:00']]),
          reasons: [{ name: 'Quarter', duration_minutes: 15 }],
        },
      ],
    }),
  );
  const imported = JSON.parse(await ok('import', file));
  await ok('api', 'enable');
  const token = (await ok('token', 'generate')).trim();
  await ok('set', 'api.rate_limit_per_minute', '100000');
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  return { token, schedule: imported.schedules[0].id as number, headers };
}
