// A ready installation for integration tests: fresh database, setup done, schedules imported,
// API on, a token, and the app built around a clock the test controls.
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { connect, type Db, type DialectName } from '../../src/db/connect.js';
import { buildApp } from '../../src/http/build-app.js';
import { setup, setApiEnabled, generateToken, type SetupInput } from '../../src/app/installation.js';
import { importSchedules, type ImportedSchedule } from '../../src/app/schedules.js';
import { migrate } from '../../src/db/migrate.js';
import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { freshDatabase, migratedDatabase, type TestDatabase } from './databases.js';

export interface TestClock {
  now: number;
  (): number;
}

export function testClock(start: number): TestClock {
  const clock = (() => clock.now) as TestClock;
  clock.now = start;
  return clock;
}

/** A clock that reads `start` now and runs on in real time (a worker's, so that what it waits for comes due). */
export const runningFrom = (start: number) => {
  const real = Date.now();
  return () => start + (Date.now() - real);
};

export interface TestInstallation {
  db: Db;
  /** DATABASE_URL of its database, for a second connection (as another process or instance would open) */
  url: string;
  app: FastifyInstance;
  clock: TestClock;
  token: string;
  schedules: ImportedSchedule[];
  /** inject with the bearer token */
  api(options: InjectOptions & { token?: string | null }): Promise<LightMyRequestResponse>;
  /** listens on a free loopback port (for fetch, a client or a browser); resolves to the origin, http://127.0.0.1:PORT */
  listen(): Promise<string>;
  close(): Promise<void>;
}

export interface InstallationOptions {
  timezone?: string;
  now?: number;
  schedules?: unknown[];
  configured?: boolean;
  apiEnabled?: boolean;
}

export async function testInstallation(dialect: DialectName, options: InstallationOptions = {}): Promise<TestInstallation> {
  const { db, target, dispose } = await migratedDatabase(dialect);
  const clock = testClock(options.now ?? Date.now());
  let token = '';
  let schedules: ImportedSchedule[] = [];
  if (options.configured !== false) {
    await setup(
      db,
      {
        timezone: options.timezone ?? 'Europe/Berlin',
        adminEmail: 'admin@example.com',
        adminPassword: 'correct horse battery',
        name: 'Test practice',
        notifyEmail: 'desk@example.com',
      },
      clock(),
    );
    if (options.schedules) schedules = (await importSchedules(db, { schedules: options.schedules }, clock())).schedules;
    if (options.apiEnabled !== false) await setApiEnabled(db, true);
    token = await generateToken(db);
  }
  const app = await buildApp({ db, clock });
  await app.ready();
  const installation: TestInstallation = {
    db,
    url: target.url,
    app,
    clock,
    token,
    schedules,
    // the current `installation.token`, so a test that issues a new one can make it the default
    api: ({ token: t, headers, ...rest }) =>
      app.inject({
        ...rest,
        headers: { ...(t === null ? {} : { authorization: `Bearer ${t ?? installation.token}` }), ...headers },
      }),
    listen: async () => {
      await app.listen({ host: '127.0.0.1', port: 0 });
      return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    },
    close: async () => {
      await app.close();
      await dispose();
    },
  };
  return installation;
}

export const ALL_WEEK = (hours: [string, string][]) =>
  Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, hours]));

/** The local date (YYYY-MM-DD) in `zone`, `days` after today by the real clock. */
export const localDateFromToday = (days: number, zone = 'Europe/Berlin') =>
  new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(
    new Date(Date.now() + days * 86_400_000),
  );

/** Monday 2026-06-01 08:00 in Berlin (06:00Z): the `now` of most integration tests. */
export const MONDAY_JUNE_1 = Date.UTC(2026, 5, 1, 6, 0);

/** The booking form most admin tests book through: a required first name, then optional last name, e-mail and phone. */
export const CONTACT_FORM = {
  first_name: { label: 'First name', input_type: 'text', required: true },
  last_name: { label: 'Last name', input_type: 'text', required: false },
  email: { label: 'E-mail', input_type: 'email', required: false },
  phone: { label: 'Phone', input_type: 'tel', required: false },
};

/** The schedule "Desk" of many tests (30-minute slots, 7 days ahead, 09:00-12:00 daily, "Talk"); `changes` replace its fields. */
export const deskSchedule = <T extends object>(changes: T = {} as T) => ({
  name: 'Desk',
  slot_interval_minutes: 30,
  horizon_days: 7,
  weekly_hours: ALL_WEEK([['09:00', '12:00']]),
  reasons: [{ name: 'Talk', duration_minutes: 30 }],
  ...changes,
});

/** The administrator of the browser tests, who types these into the sign-in page. */
export const OWNER = { email: 'owner@example.com', password: 'a long secret phrase' };

/** `booking serve` in this process on a free loopback port, over the database at `url` (it migrates it). */
export const serveDatabase = (url: string): Promise<RunningServer> =>
  startServer(loadConfig({ DATABASE_URL: url, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent' }));

/** A served installation for browser tests: the real server (workers and all) on a real port, real clock. */
export interface ServedInstallation {
  /** the test's own connection, for looking into the database */
  db: Db;
  database: TestDatabase;
  server: RunningServer;
  /** the server's origin, http://127.0.0.1:PORT */
  base: string;
  /** the API token ('' unless `api` was asked for) */
  token: string;
  schedules: ImportedSchedule[];
  /** books `slot` through POST /api/bookings (of the first schedule and its first reason unless told), asserts 201 */
  book(
    slot: string,
    submission: Record<string, unknown>,
    target?: { schedule: number; reason: number },
  ): Promise<{ booking_details_id: string; user_id: number; booking_id: number }>;
  close(): Promise<void>;
}

export interface ServedOptions {
  /** setup's fields over the defaults: Europe/Berlin, OWNER, 'Test practice', desk@example.com */
  setup?: Partial<SetupInput>;
  schedules?: unknown[];
  /** the API on and a token generated */
  api?: boolean;
}

export async function servedInstallation(dialect: DialectName, options: ServedOptions = {}): Promise<ServedInstallation> {
  const database = await freshDatabase(dialect);
  const db = connect(database.url);
  let server: RunningServer | undefined;
  const close = async () => {
    await server?.stop();
    await db.close();
    await database.drop();
  };
  try {
    await migrate(db);
    const input: SetupInput = {
      timezone: 'Europe/Berlin',
      adminEmail: OWNER.email,
      adminPassword: OWNER.password,
      name: 'Test practice',
      notifyEmail: 'desk@example.com',
      ...options.setup,
    };
    await setup(db, input, Date.now());
    const schedules = options.schedules ? (await importSchedules(db, { schedules: options.schedules }, Date.now())).schedules : [];
    let token = '';
    if (options.api) {
      await setApiEnabled(db, true);
      token = await generateToken(db);
    }
    server = await serveDatabase(database.url);
    const base = server.url;
    return {
      db,
      database,
      server,
      base,
      token,
      schedules,
      book: async (slot, submission, target) => {
        const schedule = target?.schedule ?? schedules[0]!.id;
        const reason = target?.reason ?? schedules[0]!.reasons[0]!.id;
        const res = await fetch(`${base}/api/bookings`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ schedule, reason, slot, submission }),
        });
        assert.equal(res.status, 201, await res.clone().text());
        return (await res.json()) as { booking_details_id: string; user_id: number; booking_id: number };
      },
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}
