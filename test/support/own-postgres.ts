// A PostgreSQL server of the test's own, which the test may stop and start again (a real database fault):
// initdb into a temporary directory, on a free port, trust authentication on loopback only. The binaries
// come from /usr/lib/postgresql/15/bin (POSTGRES_BIN overrides). As root, initdb and the server run as
// the `postgres` user (initdb refuses root). Without the binaries the test is skipped with a plain message,
// and under CI=true it fails instead.
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './processes.js';

const run = promisify(execFile);
export const POSTGRES_BIN = process.env.POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin';

/** Why an own PostgreSQL cannot run here, or null when it can. Under CI=true a reason is a failure. */
export function ownPostgresUnavailable(): string | null {
  if (existsSync(join(POSTGRES_BIN, 'initdb')) && existsSync(join(POSTGRES_BIN, 'pg_ctl'))) return null;
  const reason = `no PostgreSQL binaries in ${POSTGRES_BIN} (set POSTGRES_BIN): the test needs a PostgreSQL of its own to stop and restart`;
  if (process.env.CI === 'true') throw new Error(`${reason}; under CI=true this test must run`);
  return reason;
}

async function postgresUser(): Promise<{ uid: number; gid: number } | null> {
  if (process.getuid?.() !== 0) return null;
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

export class OwnPostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly user: { uid: number; gid: number } | null,
  ) {}

  /** initdb and start; the database `postgres` is there, the superuser is `postgres`. */
  static async start(): Promise<OwnPostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'booking-own-pg-'));
    const user = await postgresUser();
    if (user) chownSync(dir, user.uid, user.gid);
    const pg = new OwnPostgres(dir, await freePort(), user);
    await pg.bin('initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
    await pg.up();
    return pg;
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private async bin(name: string, args: string[]): Promise<string> {
    const { stdout } = await run(join(POSTGRES_BIN, name), args, {
      uid: this.user?.uid,
      gid: this.user?.gid,
      cwd: this.dir,
      timeout: 60_000,
    });
    return stdout;
  }

  /** Starts the server and waits until it accepts connections. */
  async up(): Promise<void> {
    const options = `-p ${this.port} -c listen_addresses=127.0.0.1 -k ${this.dir} -c fsync=off -c max_connections=50`;
    await this.bin('pg_ctl', ['-D', join(this.dir, 'data'), '-l', join(this.dir, 'log'), '-o', options, '-w', 'start']);
  }

  /** Stops the server: `fast` (clients disconnected, clean shutdown) or `immediate` (like a crash). */
  async down(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await this.bin('pg_ctl', ['-D', join(this.dir, 'data'), '-m', mode, '-w', 'stop']);
  }

  /** Stops the server (if running) and removes its directory. */
  async dispose(): Promise<void> {
    await this.down('immediate').catch(() => {});
    rmSync(this.dir, { recursive: true, force: true });
  }
}
