import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { BookedTime } from '../../core/availability/free-slots.js';
import type { Answer } from '../../core/forms/form-fields.js';

type Q = Kysely<Database>;

/** Booked (not cancelled) appointments of a schedule starting in [from, to): one indexed range read. */
export async function bookedTimes(db: Q, scheduleId: number, from: number, to: number): Promise<BookedTime[]> {
  const rows = await db.selectFrom('bookings')
    .select(['start_at', 'end_at'])
    .where('schedule_id', '=', scheduleId)
    .where('start_at', '>=', from)
    .where('start_at', '<', to)
    .where('status', '=', 'booked')
    .execute();
  return rows.map((r) => ({ start: Number(r.start_at), end: Number(r.end_at) }));
}

/** The schedule's bookings version, or null when there is no such schedule. */
export async function findBookingsVersion(db: Q, scheduleId: number): Promise<number | null> {
  const row = await db.selectFrom('schedules').select('bookings_version').where('id', '=', scheduleId).executeTakeFirst();
  return row === undefined ? null : Number(row.bookings_version);
}

/** The schedule's bookings version (0 when there is no such schedule). */
export async function bookingsVersion(db: Q, scheduleId: number): Promise<number> {
  return (await findBookingsVersion(db, scheduleId)) ?? 0;
}

/** Within the transaction that books or cancels: every process's cached answers for the schedule go stale. */
export async function bumpBookingsVersion(trx: Q, scheduleId: number): Promise<void> {
  await trx.updateTable('schedules').set((eb) => ({ bookings_version: eb('bookings_version', '+', 1) })).where('id', '=', scheduleId).execute();
}

export interface NewBooking {
  detailsId: string;
  scheduleId: number;
  reasonId: number;
  customerId: number;
  start: number;
  end: number;
  source: 'api' | 'admin';
  answers: Readonly<Record<string, Answer>>;
  createdAt: number;
}

export async function insertBooking(trx: Q, b: NewBooking): Promise<number> {
  const row = await trx.insertInto('bookings').values({
    details_id: b.detailsId, schedule_id: b.scheduleId, reason_id: b.reasonId, customer_id: b.customerId,
    start_at: b.start, end_at: b.end, status: 'booked', source: b.source, answers: JSON.stringify(b.answers), created_at: b.createdAt,
  }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

export async function countFutureBookings(db: Q, scheduleId: number, now: number): Promise<number> {
  const row = await db.selectFrom('bookings').select(sql<number>`count(*)`.as('n'))
    .where('schedule_id', '=', scheduleId).where('status', '=', 'booked').where('end_at', '>', now)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
