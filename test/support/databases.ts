// Every database test runs on SQLite and on PostgreSQL (the machine's server, each run in its own
// fresh database, dropped afterwards). Without a reachable PostgreSQL the PostgreSQL tier is skipped,
// and says so; under CI=true it must run (scripts/test.mjs checks before the tests start).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe } from 'node:test';
import pg from 'pg';
import { connect, type Db, type DialectName } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import type { Database } from '../../src/db/schema.js';

export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  readonly dialect: DialectName;
  readonly url: string;
  drop(): Promise<void>;
}

// Patient: on a loaded machine (a browser starting beside the test) a 2 s connect timed out and silently
// skipped the PostgreSQL tier of a whole file. Under CI=true an unreachable server fails the file instead.
async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 15_000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export const POSTGRES_AVAILABLE = await postgresReachable();
if (!POSTGRES_AVAILABLE && process.env.CI === 'true') {
  throw new Error(`PostgreSQL is not reachable at ${POSTGRES_ADMIN_URL}, and under CI=true the PostgreSQL tier must run`);
}

export function freshSqlite(): TestDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'booking-test-'));
  return { dialect: 'sqlite', url: `sqlite:${join(dir, 'booking.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

export async function freshPostgres(): Promise<TestDatabase> {
  const name = `booking_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    dialect: 'postgres',
    url: url.href,
    drop: async () => {
      const c = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

export function freshDatabase(dialect: DialectName): Promise<TestDatabase> | TestDatabase {
  return dialect === 'sqlite' ? freshSqlite() : freshPostgres();
}

/** A migrated database of this dialect, and a function that closes and drops it. */
export async function migratedDatabase(dialect: DialectName): Promise<{ db: Db; target: TestDatabase; dispose(): Promise<void> }> {
  const target = await freshDatabase(dialect);
  const db = connect(target.url);
  await migrate(db);
  return {
    db,
    target,
    dispose: async () => {
      await db.close();
      await target.drop();
    },
  };
}

/** `describe` once per database engine; the PostgreSQL one is skipped, visibly, when no server answers. */
export function describeEachDatabase(title: string, body: (dialect: DialectName) => void): void {
  describe(`${title} [sqlite]`, () => body('sqlite'));
  describe(`${title} [postgres]`, { skip: POSTGRES_AVAILABLE ? false : 'PostgreSQL not reachable at 127.0.0.1:5432' }, () =>
    body('postgres'),
  );
}

/** How many rows `table` holds; with `where`, only those whose columns equal the values given. */
export async function countRows(db: Db, table: keyof Database, where: Record<string, string | number> = {}): Promise<number> {
  // the table is chosen at run time, so the query is built untyped
  let query = db.kysely.selectFrom(table as 'bookings').select((eb) => eb.fn.countAll().as('n'));
  for (const [column, value] of Object.entries(where)) query = query.where(column as 'id', '=', value as number);
  return Number((await query.executeTakeFirstOrThrow()).n);
}
