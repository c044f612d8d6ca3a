// A ready installation for integration tests: fresh database, setup done, schedules imported,
// API on, a token, and the app built around a clock the test controls.
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Db, DialectName } from '../../src/db/connect.js';
import { buildApp } from '../../src/http/build-app.js';
import { setup, setApiEnabled, generateToken } from '../../src/app/installation.js';
import { importSchedules, type ImportedSchedule } from '../../src/app/schedules.js';
import { migratedDatabase } from './databases.js';

export interface TestClock {
  now: number;
  (): number;
}

export function testClock(start: number): TestClock {
  const clock = (() => clock.now) as TestClock;
  clock.now = start;
  return clock;
}

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
