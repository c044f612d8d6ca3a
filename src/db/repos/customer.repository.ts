import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { isUniqueViolation } from '../unique-violation.js';

type Q = Kysely<Database>;

export interface CustomerDetails {
  email: string | null;
  firstName: string;
  lastName: string;
  phone: string;
}

/** A customer as saved: what a booking's event carries (the details kept may be older than those given). */
export interface SavedCustomer extends CustomerDetails {
  id: number;
}

const SAVED_COLUMNS = ['id', 'email', 'first_name', 'last_name', 'phone'] as const;
const savedOf = (r: { id: number; email: string | null; first_name: string; last_name: string; phone: string }): SavedCustomer => ({
  id: r.id,
  email: r.email,
  firstName: r.first_name,
  lastName: r.last_name,
  phone: r.phone,
});

/**
 * The customer with this e-mail address (case-insensitive), its details updated with what was given
 * (`updateDetails` false: kept as they are), or a new one. One statement, so two bookings racing with the
 * same new address share one record.
 */
export async function saveCustomer(
  trx: Q,
  details: CustomerDetails,
  now: number,
  { updateDetails }: { updateDetails: boolean } = { updateDetails: true },
): Promise<SavedCustomer> {
  const values = {
    email_key: details.email?.toLowerCase() ?? null,
    email: details.email,
    first_name: details.firstName,
    last_name: details.lastName,
    phone: details.phone,
    created_at: now,
    updated_at: now,
  };
  if (values.email_key === null) {
    return savedOf(await trx.insertInto('customers').values(values).returning(SAVED_COLUMNS).executeTakeFirstOrThrow());
  }
  // an empty value in this booking keeps what we knew
  const keep = (column: 'first_name' | 'last_name' | 'phone') =>
    sql<string>`case when excluded.${sql.ref(column)} <> '' then excluded.${sql.ref(column)} else customers.${sql.ref(column)} end`;
  const row = await trx
    .insertInto('customers')
    .values(values)
    .onConflict((oc) =>
      oc.column('email_key').doUpdateSet(
        updateDetails
          ? {
              email: sql`excluded.email`,
              first_name: keep('first_name'),
              last_name: keep('last_name'),
              phone: keep('phone'),
              updated_at: now,
            }
          : // an update that changes nothing, so the row is returned
            { email_key: sql`customers.email_key` },
      ),
    )
    .returning(SAVED_COLUMNS)
    .executeTakeFirstOrThrow();
  return savedOf(row);
}

const CUSTOMER_COLUMNS = [
  'customers.id',
  'customers.first_name',
  'customers.last_name',
  'customers.email',
  'customers.phone',
  'customers.created_at',
  'customers.updated_at',
  'customers.notes',
  'customers.erased_at',
] as const;

interface CustomerRow {
  id: number;
  first_name: string;
  last_name: string;
  email: string | null;
  phone: string;
  created_at: number;
  updated_at: number;
  notes: string;
  erased_at: number | null;
}

function customerRecordOf(r: CustomerRow, bookings: number): CustomerRecord {
  return {
    id: r.id,
    firstName: r.first_name,
    lastName: r.last_name,
    email: r.email,
    phone: r.phone,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    notes: r.notes,
    erasedAt: r.erased_at === null ? null : Number(r.erased_at),
    bookings,
  };
}

export interface CustomerRecord {
  id: number;
  firstName: string;
  lastName: string;
  email: string | null;
  phone: string;
  createdAt: number;
  updatedAt: number;
  /** staff-only text */
  notes: string;
  /** when their personal data was erased on request, null otherwise */
  erasedAt: number | null;
  /** how many bookings (any status) the customer has made */
  bookings: number;
}

/** Customers whose name, e-mail or phone contains `search` (any case), by last then first name. */
/** `scheduleIds`: only customers with bookings in them and none elsewhere (a staff member's view: customerVisibleTo). */
export async function listCustomerRecords(
  db: Q,
  search: string,
  limit: number,
  scheduleIds: readonly number[] | null = null,
): Promise<CustomerRecord[]> {
  let q = (
    scheduleIds
      ? db
          .selectFrom('customers')
          .innerJoin('bookings', 'bookings.customer_id', 'customers.id')
          .where('bookings.schedule_id', 'in', scheduleIds.length ? [...scheduleIds] : [-1])
          // not a customer shared with another schedule (customerVisibleTo)
          .where((eb) =>
            eb.not(
              eb.exists(
                eb
                  .selectFrom('bookings as elsewhere')
                  .select('elsewhere.id')
                  .whereRef('elsewhere.customer_id', '=', 'customers.id')
                  .where('elsewhere.schedule_id', 'not in', scheduleIds.length ? [...scheduleIds] : [-1]),
              ),
            ),
          )
      : db.selectFrom('customers').leftJoin('bookings', 'bookings.customer_id', 'customers.id')
  )
    .select(CUSTOMER_COLUMNS)
    .select(sql<number>`count(bookings.id)`.as('bookings'))
    .groupBy(CUSTOMER_COLUMNS);
  const term = search.trim().toLowerCase();
  if (term) {
    // lower() on both sides: PostgreSQL's LIKE is case-sensitive, SQLite's is not for ASCII only
    const pattern = `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const like = (column: string) => sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`;
    q = q.where((eb) =>
      eb.or([
        like('customers.first_name'),
        like('customers.last_name'),
        like('customers.email'),
        like('customers.phone'),
        eb(sql`lower(customers.first_name || ' ' || customers.last_name)`, 'like', pattern),
      ]),
    );
  }
  const rows = await q.orderBy('customers.last_name').orderBy('customers.first_name').orderBy('customers.id').limit(limit).execute();
  return rows.map((r) => customerRecordOf(r, Number(r.bookings)));
}

/** The customer; `bookings` is not counted (0). */
export async function findCustomerRecord(db: Q, id: number): Promise<CustomerRecord | null> {
  const row = await db.selectFrom('customers').select(CUSTOMER_COLUMNS).where('id', '=', id).executeTakeFirst();
  return row ? customerRecordOf(row, 0) : null;
}

/**
 * Whether staff of these schedules may see the customer: they have a booking in one of them and none
 * elsewhere. A customer shared with another schedule is not theirs: the notes and the contact details are
 * the other schedule's office's too (docs/admin.md "Users and roles").
 */
export async function customerVisibleTo(db: Q, customerId: number, scheduleIds: readonly number[]): Promise<boolean> {
  if (scheduleIds.length === 0) return false;
  const row = await db
    .selectFrom('bookings')
    .select([
      sql<number>`count(case when schedule_id in (${sql.join(scheduleIds)}) then 1 end)`.as('inside'),
      sql<number>`count(case when schedule_id not in (${sql.join(scheduleIds)}) then 1 end)`.as('outside'),
    ])
    .where('customer_id', '=', customerId)
    .executeTakeFirst();
  return row !== undefined && Number(row.inside) > 0 && Number(row.outside) === 0;
}

/** Of these customers, those with a booking outside these schedules (hidden from their staff: customerVisibleTo). */
export async function customersWithBookingsOutside(
  db: Q,
  customerIds: readonly number[],
  scheduleIds: readonly number[],
): Promise<Set<number>> {
  if (customerIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('bookings')
    .select('customer_id')
    .distinct()
    .where('customer_id', 'in', [...new Set(customerIds)])
    .$if(scheduleIds.length > 0, (q) => q.where('schedule_id', 'not in', [...scheduleIds]))
    .execute();
  return new Set(rows.map((r) => Number(r.customer_id)));
}

/** Another customer holding this e-mail address (case-insensitively, as bookings match customers), if any. */
export async function findCustomerIdByEmail(db: Q, email: string, except?: number): Promise<number | null> {
  const row = await db
    .selectFrom('customers')
    .select('id')
    .where('email_key', '=', email.toLowerCase())
    .$if(except !== undefined, (q) => q.where('id', '<>', except!))
    .executeTakeFirst();
  return row ? row.id : null;
}

/**
 * The customer's details as edited in the admin area: 'not found' when there is no such (unerased) customer;
 * 'email taken' when another customer got the address after the caller's check (on PostgreSQL two edits, or
 * an edit and a booking, can both check before either commits; the unique index refuses the second). Then,
 * on PostgreSQL, the transaction is aborted: the caller must end it.
 */
export async function updateCustomer(
  trx: Q,
  id: number,
  details: CustomerDetails & { notes: string },
  now: number,
): Promise<'saved' | 'not found' | 'email taken'> {
  try {
    const result = await trx
      .updateTable('customers')
      .set({
        email_key: details.email?.toLowerCase() ?? null,
        email: details.email,
        first_name: details.firstName,
        last_name: details.lastName,
        phone: details.phone,
        notes: details.notes,
        updated_at: now,
      })
      .where('id', '=', id)
      .where('erased_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0 ? 'saved' : 'not found';
  } catch (error) {
    if (isUniqueViolation(error)) return 'email taken';
    throw error;
  }
}

/** Empties the customer's row of personal data; the row (and its id, which bookings refer to) stays. */
export async function anonymiseCustomer(trx: Q, id: number, now: number): Promise<void> {
  await trx
    .updateTable('customers')
    .set({ email_key: null, email: null, first_name: '', last_name: '', phone: '', notes: '', updated_at: now, erased_at: now })
    .where('id', '=', id)
    .execute();
}
