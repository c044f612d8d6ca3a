// Storing a new booking with its customer, outbox rows and audit event. On PostgreSQL a booking of one schedule waits for
// the others on the schedule's row lock, and every round trip made while holding it bounds that schedule's
// bookings per second (issue 13: with the process busy serving reads, each round trip is a turn of its event
// loop). So the write is one statement: bump (the lock), customer, booking, outbox rows and audit event together.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { BookedTime } from '../../core/availability/free-slots.js';
import type { MessageKind } from '../../core/messages.js';
import { insertBooking, type NewBooking } from './booking.repository.js';
import { saveCustomer, type CustomerDetails, type SavedCustomer } from './customer.repository.js';
import { checkRecipients, enqueueMessages } from './outbox.repository.js';
import { insertAuditEvent, type AuditRow } from './audit.repository.js';
import { PREPARED } from '../prepared.js';

type Q = Kysely<Database>;

/** A booking as it is to be stored: the customer it is saved under, its row, the messages it queues and its audit event. */
export interface BookingToStore {
  customer: CustomerDetails;
  /** false: an existing customer of this address is linked, their details kept (staff booking another schedule's customer) */
  updateCustomer?: boolean;
  booking: Omit<NewBooking, 'customerId' | 'changedIn'>;
  messages: readonly { kind: MessageKind; recipient: string; notBefore?: number }[];
  audit: Omit<AuditRow, 'bookingId'>;
}

export interface StoredBooking {
  bookingId: number;
  customer: SavedCustomer;
  /** the schedule's bookings version the booking was stored under */
  changedIn: number;
}

/** What a booking's check saw: the schedule's bookings version and its booked spans in a range, one statement (one snapshot). */
export interface BookingsSeen {
  /** null: no such schedule, or it is retired */
  readonly version: number | null;
  /** the booking's reason is the schedule's and in service */
  readonly reasonInService: boolean;
  readonly booked: BookedTime[];
  readonly from: number;
  readonly to: number;
}

export async function bookingsSeen(db: Q, scheduleId: number, reasonId: number, from: number, to: number): Promise<BookingsSeen> {
  const { rows } = await sql<{ kind: number; a: number; b: number }>`${PREPARED}
    select 0 as kind, bookings_version as a, 0 as b from schedules where id = ${scheduleId} and retired_at is null
    union all
    select 2, 0, 0 from reasons where id = ${reasonId} and schedule_id = ${scheduleId} and retired_at is null
    union all
    select 1, start_at, end_at from bookings where schedule_id = ${scheduleId} and start_at >= ${from} and start_at < ${to} and status = 'booked'`.execute(
    db,
  );
  let version: number | null = null;
  let reasonInService = false;
  const booked: BookedTime[] = [];
  for (const row of rows) {
    const kind = Number(row.kind);
    if (kind === 0) version = Number(row.a);
    else if (kind === 2) reasonInService = true;
    else booked.push({ start: Number(row.a), end: Number(row.b) });
  }
  return { version, reasonInService, booked, from, to };
}

/**
 * PostgreSQL, outside a transaction (the statement is its own): stores the booking unless a booking of the
 * schedule starting in the range `seen` read was booked, cancelled or moved after the version seen (its
 * `changed_in` is above it), or the schedule or the reason is retired, in one statement that takes the
 * schedule's lock (the bump) and holds it for no round trip; null, storing nothing, otherwise (a new
 * bookingsSeen tells which). The conditions are the functions of migration 016: when the UPDATE waited for
 * the lock, PostgreSQL checks them again on the row it waited for, and the functions' own snapshots then
 * hold what the lock's holder committed (the statement's snapshot, from before the wait, does not);
 * `retired_at` is the row's own, checked on the row as its holder left it.
 */
export async function storeBookingIfUnchanged(db: Q, store: BookingToStore, seen: BookingsSeen): Promise<StoredBooking | null> {
  const { scheduleId, reasonId } = store.booking;
  const { rows } = await sql<StoredRow>`${PREPARED}
    with bump as (
      update schedules set bookings_version = bookings_version + 1
      where id = ${scheduleId} and retired_at is null
        and not bookings_changed_since(${scheduleId}::int4, ${seen.version}::int8, ${seen.from}::int8, ${seen.to}::int8)
        and reason_in_service(${reasonId}::int4, ${scheduleId}::int4)
      returning bookings_version
    ),
    ${rowsAfterBump(store)}`.execute(db);
  return rows[0] ? storedOf(rows[0]) : null;
}

/**
 * Within the transaction holding the schedule's lock, whose bump returned `changedIn`: the customer, the
 * booking, its outbox rows and audit event; one statement on PostgreSQL (round trips under the lock), four on
 * SQLite (no data-modifying WITH; statements there cost no round trip). Null, storing nothing, when the
 * reason is retired: read after the lock was taken, so a retirement that held it first is seen.
 */
export async function storeBookingLocked(
  trx: Q,
  dialect: 'sqlite' | 'postgres',
  store: BookingToStore,
  changedIn: number,
  now: number,
): Promise<StoredBooking | null> {
  const { scheduleId, reasonId } = store.booking;
  if (dialect === 'postgres') {
    const { rows } = await sql<StoredRow>`${PREPARED}
      with bump as (
        select ${changedIn}::int8 as bookings_version
        where exists (select 1 from reasons where id = ${reasonId} and schedule_id = ${scheduleId} and retired_at is null)
      ),
      ${rowsAfterBump(store)}`.execute(trx);
    return rows[0] ? storedOf(rows[0]) : null;
  }
  const customer = await saveCustomer(trx, store.customer, now, { updateDetails: store.updateCustomer !== false });
  const bookingId = await insertBooking(trx, { ...store.booking, customerId: customer.id, changedIn });
  if (bookingId === null) return null;
  await enqueueMessages(trx, bookingId, store.messages, now);
  await insertAuditEvent(trx, { ...store.audit, bookingId });
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
 * insertBooking, the messages as enqueueMessages and the audit event as insertAuditEvent store them.
 */
function rowsAfterBump({ customer, updateCustomer, booking: b, messages, audit: a }: BookingToStore) {
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
      on conflict (email_key) do update set ${
        updateCustomer === false
          ? sql`email_key = customers.email_key` // changes nothing, so the row is returned
          : sql`email = excluded.email, first_name = ${keep('first_name')},
        last_name = ${keep('last_name')}, phone = ${keep('phone')}, updated_at = excluded.updated_at`
      }
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
    ),
    audit as (
      insert into audit_events (at, actor_kind, actor_admin_id, actor_label, action, booking_id, summary)
      select ${a.at}::int8, ${a.actorKind}::text, ${a.actorAdminId}::int4, ${a.actorLabel}::text, ${a.action}::text, booking.id,
        ${a.summary}::text
      from booking
    )
    select booking.id as booking_id, booking.changed_in, customer.id as customer_id, customer.email, customer.first_name,
      customer.last_name, customer.phone
    from booking, customer`;
}
