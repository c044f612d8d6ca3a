// A PostgreSQL server of the test's own, so a test can stop, restart and freeze it (SIGSTOP/SIGCONT)
// without touching the machine's server: initdb into a temporary directory, a free port, the binaries of
// /usr/lib/postgresql/15/bin (POSTGRES_BIN overrides). initdb refuses to run as root, so as root every
// command runs as the user postgres (spawn's uid/gid). Where the binaries are missing, OWN_POSTGRES_SKIP says why
// (a plain message for `skip`); under CI=true a missing server is a failure, not a skip.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './processes.js';

const BIN = process.env.POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin';
const AS_ROOT = process.getuid?.() === 0;

function missing(): string | false {
  if (!existsSync(join(BIN, 'initdb')) || !existsSync(join(BIN, 'postgres'))) return `PostgreSQL binaries not found in ${BIN}`;
  if (AS_ROOT) {
    try {
      execFileSync('id', ['postgres'], { stdio: 'ignore' });
    } catch {
      return 'running as root and there is no user postgres to run initdb as';
    }
  }
  return false;
}

const why = missing();
if (why && process.env.CI === 'true') throw new Error(`own PostgreSQL required under CI=true: ${why}`);
/** false when an own PostgreSQL can run here, else the reason (pass it to `skip`) */
export const OWN_POSTGRES_SKIP: string | false = why;

// as root: the user postgres's ids for spawn (not runuser/su: they stop themselves when their child is
// stopped, and a SIGCONT to the postmaster does not wake them, so they never reap it)
const ids = (): { uid?: number; gid?: number } =>
  AS_ROOT
    ? {
        uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()),
        gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()),
      }
    : {};

export interface OwnPostgres {
  /** postgres://postgres@127.0.0.1:<port>/booking */
  readonly url: string;
  readonly port: number;
  /** the postmaster's pid (changes on restart) */
  pid(): number;
  start(): Promise<void>;
  /** fast shutdown (SIGINT: sessions are terminated with 57P01, then the server is gone), or immediate
   * (SIGQUIT: every process quits at once, as a crash would, and the next start recovers) */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  restart(): Promise<void>;
  /** SIGSTOP to the postmaster and every backend: the server accepts TCP but answers nothing */
  freeze(): void;
  thaw(): void;
  /** stops the server and removes its directory; safe to call twice, and after a failure */
  destroy(): Promise<void>;
}

export async function ownPostgres(): Promise<OwnPostgres> {
  if (why) throw new Error(why);
  const dir = mkdtempSync(join(tmpdir(), 'booking-own-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const port = await freePort();
  const as = ids();
  const run = (command: string, args: string[]) =>
    execFileSync(join(BIN, command), args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir, ...as });
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  let child: ChildProcess | null = null;
  let frozen = false;

  const start = async () => {
    const proc = spawn(
      join(BIN, 'postgres'),
      ['-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir, '-c', 'fsync=off', '-c', 'max_connections=60'],
      { stdio: 'ignore', cwd: dir, ...as },
    );
    child = proc;
    const until = Date.now() + 30_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error('own PostgreSQL exited while starting');
      const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 1000 });
      try {
        await client.connect();
        await client.query('select 1');
        await client.end();
        return;
      } catch {
        await client.end().catch(() => {});
      }
      if (Date.now() > until) throw new Error('own PostgreSQL did not start within 30 s');
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const postmasterPid = () => Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  /** the postmaster and its children (backends, checkpointer, …) */
  const processGroup = (): number[] => {
    const main = postmasterPid();
    const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(main)], { encoding: 'utf8' })
      .split('\n')
      .map((s) => Number(s.trim()))
      .filter((n) => n > 0);
    return [main, ...children];
  };
  const signalAll = (signal: NodeJS.Signals) => {
    for (const pid of processGroup()) {
      try {
        process.kill(pid, signal);
      } catch {
        /* gone meanwhile */
      }
    }
  };
  const stop = async (mode: 'fast' | 'immediate' = 'fast') => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    if (frozen) thaw();
    const exited = new Promise((ok) => proc.once('exit', ok));
    try {
      process.kill(postmasterPid(), mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
    } catch {
      proc.kill(mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
    }
    await exited;
    child = null;
  };
  const thaw = () => {
    frozen = false;
    signalAll('SIGCONT');
  };

  await start();
  const admin = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
  await admin.connect();
  await admin.query('create database booking');
  await admin.end();

  let destroyed = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/booking`,
    port,
    pid: postmasterPid,
    start,
    stop,
    restart: async () => {
      await stop();
      await start();
    },
    freeze: () => {
      frozen = true;
      signalAll('SIGSTOP');
    },
    thaw,
    destroy: async () => {
      if (destroyed) return;
      destroyed = true;
      await stop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
