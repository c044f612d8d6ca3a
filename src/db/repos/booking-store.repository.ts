// Storing a new booking with its customer and outbox rows. On PostgreSQL a booking of one schedule waits for
// the others on the schedule's row lock, and every round trip made while holding it bounds that schedule's
// bookings per second (issue 13: with the process busy serving reads, each round trip is a turn of its event
// loop). So the write is one statement: bump (the lock), customer, booking and outbox rows together.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { BookedTime } from '../../core/availability/free-slots.js';
import type { MessageKind } from '../../core/messages.js';
import { insertBooking, type NewBooking } from './booking.repository.js';
import { saveCustomer, type CustomerDetails, type SavedCustomer } from './customer.repository.js';
import { checkRecipients, enqueueMessages } from './outbox.repository.js';

type Q = Kysely<Database>;

/** A booking as it is to be stored: the customer it is saved under, its row and the messages it queues. */
export interface BookingToStore {
  customer: CustomerDetails;
  booking: Omit<NewBooking, 'customerId' | 'changedIn'>;
  messages: readonly { kind: MessageKind; recipient: string; notBefore?: number }[];
}

export interface StoredBooking {
  bookingId: number;
  customer: SavedCustomer;
  /** the schedule's bookings version the booking was stored under */
  changedIn: number;
}

/** What a booking's check saw: the schedule's bookings version and its booked spans in a range, one statement (one snapshot). */
export interface BookingsSeen {
  /** null: no such schedule */
  readonly version: number | null;
  readonly booked: BookedTime[];
  readonly from: number;
  readonly to: number;
}

export async function bookingsSeen(db: Q, scheduleId: number, from: number, to: number): Promise<BookingsSeen> {
  const { rows } = await sql<{ kind: number; a: number; b: number }>`
    select 0 as kind, bookings_version as a, 0 as b from schedules where id = ${scheduleId}
    union all
    select 1, start_at, end_at from bookings where schedule_id = ${scheduleId} and start_at >= ${from} and start_at < ${to} and status = 'booked'`.execute(
    db,
  );
  let version: number | null = null;
  const booked: BookedTime[] = [];
  for (const row of rows) {
    if (Number(row.kind) === 0) version = Number(row.a);
    else booked.push({ start: Number(row.a), end: Number(row.b) });
  }
  return { version, booked, from, to };
}

/**
 * PostgreSQL, outside a transaction (the statement is its own): stores the booking unless a booking of the
 * schedule starting in the range `seen` read was booked, cancelled or moved after the version seen (its
 * `changed_in` is above it), in one statement that takes the schedule's lock (the bump) and holds it for no
 * round trip; null, storing nothing, otherwise. The condition is the function of migration 016: when the
 * UPDATE waited for the lock, PostgreSQL checks it again on the row it waited for, and the function's
 * own snapshot then holds the booking that held the lock (the statement's snapshot, from before the wait,
 * does not).
 */
export async function storeBookingIfUnchanged(db: Q, store: BookingToStore, seen: BookingsSeen): Promise<StoredBooking | null> {
  const { scheduleId } = store.booking;
  const { rows } = await sql<StoredRow>`
    with bump as (
      update schedules set bookings_version = bookings_version + 1
      where id = ${scheduleId} and not bookings_changed_since(${scheduleId}::int4, ${seen.version}::int8, ${seen.from}::int8, ${seen.to}::int8)
      returning bookings_version
    ),
    ${rowsAfterBump(store)}`.execute(db);
  return rows[0] ? storedOf(rows[0]) : null;
}

/**
 * Within the transaction holding the schedule's lock, whose bump returned `changedIn`: the customer, the
 * booking and its outbox rows; one statement on PostgreSQL (round trips under the lock), three on SQLite
 * (no data-modifying WITH; statements there cost no round trip).
 */
export async function storeBookingLocked(
  trx: Q,
  dialect: 'sqlite' | 'postgres',
  store: BookingToStore,
  changedIn: number,
  now: number,
): Promise<StoredBooking> {
  if (dialect === 'postgres') {
    const { rows } = await sql<StoredRow>`
      with bump as (select ${changedIn}::int8 as bookings_version),
      ${rowsAfterBump(store)}`.execute(trx);
    return storedOf(rows[0]!);
  }
  const customer = await saveCustomer(trx, store.customer, now);
  const bookingId = await insertBooking(trx, { ...store.booking, customerId: customer.id, changedIn });
  await enqueueMessages(trx, bookingId, store.messages, now);
  return { bookingId, customer, changedIn };
}

interface StoredRow {
  booking_id: number;
  changed_in: number;
  customer_id: number;
  email: string | null;
  first_name: string;
  last_name: string;
  phone: string;
}

const storedOf = (row: StoredRow): StoredBooking => ({
  bookingId: Number(row.booking_id),
  changedIn: Number(row.changed_in),
  customer: { id: Number(row.customer_id), email: row.email, firstName: row.first_name, lastName: row.last_name, phone: row.phone },
});

/**
 * The rest of the statement after a CTE `bump` of at most one row (the bookings version to store under): with
 * no row, nothing is written. The customer as saveCustomer saves it (an empty value keeps what was known;
 * without an e-mail a new record, which no conflict can meet: NULL keys are distinct), the booking as
 * insertBooking and the messages as enqueueMessages store them.
 */
function rowsAfterBump({ customer, booking: b, messages }: BookingToStore) {
  const now = b.createdAt;
  checkRecipients(messages);
  const keep = (column: 'first_name' | 'last_name' | 'phone') =>
    sql`case when excluded.${sql.ref(column)} <> '' then excluded.${sql.ref(column)} else customers.${sql.ref(column)} end`;
  return sql`
    customer as (
      insert into customers (email_key, email, first_name, last_name, phone, created_at, updated_at)
      select ${customer.email?.toLowerCase() ?? null}::text, ${customer.email}::text, ${customer.firstName}::text,
        ${customer.lastName}::text, ${customer.phone}::text, ${now}::int8, ${now}::int8
      from bump
      on conflict (email_key) do update set email = excluded.email, first_name = ${keep('first_name')},
        last_name = ${keep('last_name')}, phone = ${keep('phone')}, updated_at = excluded.updated_at
      returning id, email, first_name, last_name, phone
    ),
    booking as (
      insert into bookings (details_id, schedule_id, reason_id, customer_id, start_at, end_at, status, source, answers, created_at,
        changed_in, staff_overrides)
      select ${b.detailsId}::text, ${b.scheduleId}::int8, ${b.reasonId}::int8, customer.id, ${b.start}::int8, ${b.end}::int8, 'booked',
        ${b.source}::text, ${JSON.stringify(b.answers)}::text, ${now}::int8, bump.bookings_version,
        ${b.overrides?.length ? b.overrides.join(',') : null}::text
      from bump, customer
      returning id, changed_in
    ),
    messages as (
      insert into outbox (booking_id, kind, recipient, state, attempts, next_attempt_at, created_at)
      select booking.id, m.kind, m.recipient, 'queued', 0, m.due, ${now}::int8
      from booking, unnest(${messages.map((m) => m.kind)}::text[], ${messages.map((m) => m.recipient)}::text[],
        ${messages.map((m) => m.notBefore ?? now)}::int8[]) as m(kind, recipient, due)
    )
    select booking.id as booking_id, booking.changed_in, customer.id as customer_id, customer.email, customer.first_name,
      customer.last_name, customer.phone
    from booking, customer`;
}
