// The benchmark's installation, made through the app's own use-cases. The only file of bench/ that imports
// from src/, so that a move there is fixed here alone.
import { randomBytes } from 'node:crypto';
import { connect } from '../src/db/connect.js';
import { migrate } from '../src/db/migrate.js';
import { setup, setApiEnabled, generateToken } from '../src/app/installation.js';
import { importSchedules } from '../src/app/schedules.js';
import { TimeZone } from '../src/core/time/zone.js';
import { MINUTE_MS, formatDate } from '../src/core/time/calendar.js';

export const SEEDED_BOOKINGS = 10_000;
export const HORIZON_DAYS = 365;
const ZONE = 'Europe/Berlin';
const AROUND_THE_CLOCK = Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, [['00:00', '24:00']]]));

export interface BenchSchedule {
  scheduleId: number;
  reasonId: number;
}

/** Today in the installation's zone (YYYY-MM-DD): never booked, since its first times may pass while a phase runs. */
export function today(): string {
  return formatDate(TimeZone.of(ZONE).localDayOf(Date.now()));
}

/** Deterministic shuffle, so every run seeds and books the same times. */
export function shuffled<T>(items: readonly T[], seed = 42): T[] {
  const out = [...items];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * Setup, one schedule open around the clock (30-minute grid, 30-minute reason), 10,000 bookings spread over
 * the year: of its 17,520 times about 7,500 stay free, room for the bookings the mixed load adds to it.
 */
export async function seedInstallation(databaseUrl: string): Promise<BenchSchedule & { token: string; busiestDay: string }> {
  const db = connect(databaseUrl);
  try {
    const now = Date.now();
    await migrate(db);
    await setup(
      db,
      {
        timezone: ZONE,
        adminEmail: 'bench@example.com',
        adminPassword: 'bench password 1',
        name: 'Bench',
        notifyEmail: 'desk@example.com',
      },
      now,
    );
    const { schedules } = await importSchedules(
      db,
      {
        schedules: [
          {
            name: 'Bench',
            slot_interval_minutes: 30,
            horizon_days: HORIZON_DAYS,
            weekly_hours: AROUND_THE_CLOCK,
            reasons: [{ name: 'Talk', duration_minutes: 30 }],
          },
        ],
      },
      now,
    );
    const scheduleId = schedules[0]!.id;
    const reasonId = schedules[0]!.reasons[0]!.id;
    await setApiEnabled(db, true);
    const token = await generateToken(db);

    const zone = TimeZone.of(ZONE);
    const first = zone.localDayOf(now);
    const places: [number, number][] = [];
    for (let day = first + 1; day <= first + HORIZON_DAYS; day++)
      for (let minute = 0; minute < 1440; minute += 30) places.push([day, minute]);
    const chosen = shuffled(places)
      .slice(0, SEEDED_BOOKINGS)
      .filter(([day, minute]) => zone.startInstant(day, minute) !== null);
    const perDay = new Map<number, number>();
    for (const [day] of chosen) perDay.set(day, (perDay.get(day) ?? 0) + 1);
    const busiest = [...perDay].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]![0];
    await db.write(async (trx) => {
      const customer = await trx
        .insertInto('customers')
        .values({
          email_key: 'seed@example.com',
          email: 'seed@example.com',
          first_name: 'Seed',
          last_name: '',
          phone: '',
          created_at: now,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      for (let i = 0; i < chosen.length; i += 500) {
        await trx
          .insertInto('bookings')
          .values(
            chosen.slice(i, i + 500).map(([day, minute]) => {
              const start = zone.startInstant(day, minute)!;
              return {
                details_id: randomBytes(18).toString('base64url'),
                schedule_id: scheduleId,
                reason_id: reasonId,
                customer_id: customer.id,
                start_at: start,
                end_at: start + 30 * MINUTE_MS,
                status: 'booked',
                source: 'admin',
                answers: '{}',
                created_at: now,
              };
            }),
          )
          .execute();
      }
    });
    return { token, scheduleId, reasonId, busiestDay: formatDate(busiest) };
  } finally {
    await db.close();
  }
}

/**
 * Schedules that POST /bookings books, in one import: open around the clock on a 5-minute grid with a
 * 5-minute reason over the same horizon, about 105,000 free times each, so that a closed-loop phase at this
 * machine's speed never books the same time twice (a 30-minute grid ran out within the first second and
 * the rest of the phase measured 404s).
 */
export async function addBookingSchedules(databaseUrl: string, count: number): Promise<BenchSchedule[]> {
  const db = connect(databaseUrl);
  try {
    const { schedules } = await importSchedules(
      db,
      {
        schedules: Array.from({ length: count }, (_, i) => ({
          name: `Bench bookings ${i + 1}`,
          slot_interval_minutes: 5,
          horizon_days: HORIZON_DAYS,
          weekly_hours: AROUND_THE_CLOCK,
          reasons: [{ name: 'Quick', duration_minutes: 5 }],
        })),
      },
      Date.now(),
    );
    return schedules.map((s) => ({ scheduleId: s.id, reasonId: s.reasons[0]!.id }));
  } finally {
    await db.close();
  }
}

/** The outbox rows from `firstId` on (what the mail benchmark's bookings queued) and when each was queued. */
export async function queuedMessages(databaseUrl: string, firstId: number): Promise<{ id: number; createdAt: number }[]> {
  const db = connect(databaseUrl);
  try {
    const rows = await db.kysely.selectFrom('outbox').select(['id', 'created_at']).where('id', '>=', firstId).execute();
    return rows.map((r) => ({ id: r.id, createdAt: Number(r.created_at) }));
  } finally {
    await db.close();
  }
}

/** The highest outbox id so far (0 when empty): the next phase's messages come after it. */
export async function lastMessageId(databaseUrl: string): Promise<number> {
  const db = connect(databaseUrl);
  try {
    const row = await db.kysely
      .selectFrom('outbox')
      .select((eb) => eb.fn.max('id').as('id'))
      .executeTakeFirst();
    return Number(row?.id ?? 0);
  } finally {
    await db.close();
  }
}

/** Marks every message not yet sent as failed, so that the next phase starts with an empty outbox. */
export async function discardUnsent(databaseUrl: string): Promise<void> {
  const db = connect(databaseUrl);
  try {
    await db.kysely.updateTable('outbox').set({ state: 'failed', claimed_until: null }).where('state', '<>', 'sent').execute();
  } finally {
    await db.close();
  }
}
