// What the admin area reads about bookings and customers. Writes go through src/app/bookings.ts
// (createBooking with source 'admin', cancelBooking): the same rules and transaction as the API.
import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Answer } from '../core/forms/form-fields.js';

export interface BookingRow {
  id: number;
  detailsId: string;
  scheduleId: number;
  scheduleName: string;
  reasonName: string;
  customerId: number;
  customerName: string;
  customerEmail: string | null;
  customerPhone: string;
  start: number;
  end: number;
  status: string;
  source: string;
  createdAt: number;
  cancelledAt: number | null;
  answers: Record<string, Answer>;
}

export interface BookingFilter {
  /** upcoming: ends after now, ascending; past: ended, descending */
  when?: 'upcoming' | 'past' | 'all';
  scheduleId?: number | null;
  customerId?: number | null;
  /** instants: start in [from, to) */
  from?: number | null;
  to?: number | null;
  includeCancelled?: boolean;
  limit?: number;
}

function baseQuery(db: Db) {
  return db.kysely.selectFrom('bookings')
    .innerJoin('schedules', 'schedules.id', 'bookings.schedule_id')
    .innerJoin('reasons', 'reasons.id', 'bookings.reason_id')
    .innerJoin('customers', 'customers.id', 'bookings.customer_id')
    .select([
      'bookings.id', 'bookings.details_id', 'bookings.schedule_id', 'schedules.name as schedule_name', 'reasons.name as reason_name',
      'bookings.customer_id', 'customers.first_name', 'customers.last_name', 'customers.email', 'customers.phone',
      'bookings.start_at', 'bookings.end_at', 'bookings.status', 'bookings.source', 'bookings.created_at', 'bookings.cancelled_at', 'bookings.answers',
    ]);
}

type RawRow = Awaited<ReturnType<ReturnType<typeof baseQuery>['execute']>>[number];

export const customerName = (c: { first_name: string; last_name: string }) => `${c.first_name} ${c.last_name}`.trim();

function toRow(r: RawRow): BookingRow {
  return {
    id: r.id, detailsId: r.details_id, scheduleId: r.schedule_id, scheduleName: r.schedule_name, reasonName: r.reason_name,
    customerId: r.customer_id, customerName: customerName(r), customerEmail: r.email, customerPhone: r.phone,
    start: Number(r.start_at), end: Number(r.end_at), status: r.status, source: r.source, createdAt: Number(r.created_at),
    cancelledAt: r.cancelled_at === null ? null : Number(r.cancelled_at), answers: JSON.parse(r.answers) as Record<string, Answer>,
  };
}

export async function listBookings(db: Db, filter: BookingFilter, now: number): Promise<BookingRow[]> {
  let q = baseQuery(db);
  const when = filter.when ?? 'all';
  if (when === 'upcoming') q = q.where('bookings.end_at', '>', now);
  if (when === 'past') q = q.where('bookings.end_at', '<=', now);
  if (filter.scheduleId) q = q.where('bookings.schedule_id', '=', filter.scheduleId);
  if (filter.customerId) q = q.where('bookings.customer_id', '=', filter.customerId);
  if (filter.from != null) q = q.where('bookings.start_at', '>=', filter.from);
  if (filter.to != null) q = q.where('bookings.start_at', '<', filter.to);
  if (!filter.includeCancelled) q = q.where('bookings.status', '=', 'booked');
  q = q.orderBy('bookings.start_at', when === 'past' ? 'desc' : 'asc').orderBy('bookings.id').limit(filter.limit ?? 500);
  return (await q.execute()).map(toRow);
}

export async function findBooking(db: Db, detailsId: string): Promise<BookingRow | null> {
  const row = await baseQuery(db).where('bookings.details_id', '=', detailsId).executeTakeFirst();
  return row ? toRow(row) : null;
}

export interface CustomerRow {
  id: number;
  name: string;
  email: string | null;
  phone: string;
  createdAt: number;
  bookings: number;
}

export async function listCustomers(db: Db, search: string, limit = 200): Promise<CustomerRow[]> {
  let q = db.kysely.selectFrom('customers')
    .leftJoin('bookings', 'bookings.customer_id', 'customers.id')
    .select(['customers.id', 'customers.first_name', 'customers.last_name', 'customers.email', 'customers.phone', 'customers.created_at'])
    .select(sql<number>`count(bookings.id)`.as('bookings'))
    .groupBy(['customers.id', 'customers.first_name', 'customers.last_name', 'customers.email', 'customers.phone', 'customers.created_at']);
  const term = search.trim().toLowerCase();
  if (term) {
    // lower() on both sides: PostgreSQL's LIKE is case-sensitive, SQLite's is not for ASCII only
    const pattern = `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const like = (column: string) => sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`;
    q = q.where((eb) => eb.or([
      like('customers.first_name'), like('customers.last_name'), like('customers.email'), like('customers.phone'),
      eb(sql`lower(customers.first_name || ' ' || customers.last_name)`, 'like', pattern),
    ]));
  }
  const rows = await q.orderBy('customers.last_name').orderBy('customers.first_name').orderBy('customers.id').limit(limit).execute();
  return rows.map((r) => ({ id: r.id, name: customerName(r), email: r.email, phone: r.phone, createdAt: Number(r.created_at), bookings: Number(r.bookings) }));
}

export async function findCustomer(db: Db, id: number): Promise<CustomerRow | null> {
  const row = await db.kysely.selectFrom('customers').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) return null;
  return { id: row.id, name: customerName(row), email: row.email, phone: row.phone, createdAt: Number(row.created_at), bookings: 0 };
}
