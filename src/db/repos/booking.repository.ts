import { sql, type ExpressionBuilder, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../schema.js';
import type { BookedTime } from '../../core/availability/free-slots.js';
import type { Answer } from '../../core/forms/form-fields.js';
import {
  isAttendance,
  isStaffOverride,
  type Attendance,
  type BookingSource,
  type BookingStatus,
  type StaffOverride,
} from '../../core/bookings.js';

type Q = Kysely<Database>;

/**
 * Booked (not cancelled) appointments of a schedule starting in [from, to): one indexed range read.
 * `exceptBookingId`: leave that booking out (a move is checked against the others, not against itself).
 */
export async function bookedTimes(db: Q, scheduleId: number, from: number, to: number, exceptBookingId?: number): Promise<BookedTime[]> {
  const rows = await db
    .selectFrom('bookings')
    .select(['start_at', 'end_at'])
    .where('schedule_id', '=', scheduleId)
    .where('start_at', '>=', from)
    .where('start_at', '<', to)
    .where('status', '=', 'booked')
    .$if(exceptBookingId !== undefined, (q) => q.where('id', '!=', exceptBookingId!))
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

/**
 * Within the transaction that books or cancels, before writing the booking: every process's cached answers
 * for the schedule go stale. Returns the new version, which the booking's row must carry (`changed_in`) so
 * that a process can find what changed after the version its answers were computed at (hot-reads.ts,
 * changesAround); null when there is no such schedule, or (`inService`: a booking landing on it) when it is
 * retired. On PostgreSQL it locks the schedule's row until the transaction ends; a retirement takes the same
 * lock, and PostgreSQL checks `retired_at` again on the row as the lock's holder left it, so a booking that
 * waited for a retirement finds the schedule retired.
 */
export async function bumpBookingsVersion(trx: Q, scheduleId: number, options: { inService?: boolean } = {}): Promise<number | null> {
  const row = await trx
    .updateTable('schedules')
    .set((eb) => ({ bookings_version: eb('bookings_version', '+', 1) }))
    .where('id', '=', scheduleId)
    .$if(options.inService === true, (q) => q.where('retired_at', 'is', null))
    .returning('bookings_version')
    .executeTakeFirst();
  return row === undefined ? null : Number(row.bookings_version);
}

export interface NewBooking {
  detailsId: string;
  scheduleId: number;
  reasonId: number;
  customerId: number;
  start: number;
  end: number;
  source: BookingSource;
  answers: Readonly<Record<string, Answer>>;
  createdAt: number;
  /** the bookings version bumpBookingsVersion returned in this transaction */
  changedIn: number;
  /** rules staff set aside (booking by hand only) */
  overrides?: readonly StaffOverride[];
}

/**
 * Inserts the booking while its reason is in service; null when the reason is retired (or not the
 * schedule's). Under the schedule's lock, in a statement of its own: on PostgreSQL it reads the reasons as
 * committed now, so a reason retired by a transaction that held the lock first is seen (one statement, no
 * round trip more under the lock).
 */
export async function insertBooking(trx: Q, b: NewBooking): Promise<number | null> {
  // the casts give PostgreSQL each parameter's type in the SELECT list
  const typed = (value: unknown, type: 'bigint' | 'integer' | 'text') => sql`cast(${value} as ${sql.raw(type)})`;
  const row = await trx
    .insertInto('bookings')
    .columns([
      'details_id',
      'schedule_id',
      'reason_id',
      'customer_id',
      'start_at',
      'end_at',
      'status',
      'source',
      'answers',
      'created_at',
      'changed_in',
      'staff_overrides',
    ])
    .expression((eb) =>
      eb
        .selectFrom('reasons')
        .select([
          typed(b.detailsId, 'text').as('details_id'),
          'schedule_id',
          'id',
          typed(b.customerId, 'integer').as('customer_id'),
          typed(b.start, 'bigint').as('start_at'),
          typed(b.end, 'bigint').as('end_at'),
          sql`'booked'`.as('status'),
          typed(b.source, 'text').as('source'),
          typed(JSON.stringify(b.answers), 'text').as('answers'),
          typed(b.createdAt, 'bigint').as('created_at'),
          typed(b.changedIn, 'integer').as('changed_in'),
          typed(b.overrides?.length ? b.overrides.join(',') : null, 'text').as('staff_overrides'),
        ])
        .where('id', '=', b.reasonId)
        .where('schedule_id', '=', b.scheduleId)
        .where('retired_at', 'is', null),
    )
    .returning('id')
    .executeTakeFirst();
  return row === undefined ? null : row.id;
}

/** Booked appointments of a schedule or a reason that have not ended yet. */
export async function countFutureBookings(db: Q, of: { scheduleId: number } | { reasonId: number }, now: number): Promise<number> {
  const row = await db
    .selectFrom('bookings')
    .select(sql<number>`count(*)`.as('n'))
    .$call((q) => ('scheduleId' in of ? q.where('schedule_id', '=', of.scheduleId) : q.where('reason_id', '=', of.reasonId)))
    .where('status', '=', 'booked')
    .where('end_at', '>', now)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A booking with the names of its schedule, reason and customer: what the admin area and the e-mails show. */
export interface BookingDetails {
  id: number;
  detailsId: string;
  scheduleId: number;
  scheduleName: string;
  reasonId: number;
  reasonName: string;
  reasonDurationMinutes: number;
  customerId: number;
  customerFirstName: string;
  customerLastName: string;
  customerEmail: string | null;
  customerPhone: string;
  start: number;
  end: number;
  status: BookingStatus;
  source: BookingSource;
  createdAt: number;
  cancelledAt: number | null;
  /** rules staff set aside booking it by hand */
  overrides: StaffOverride[];
  /** last edited in the admin area (details or answers), null when never */
  updatedAt: number | null;
  answers: Record<string, Answer>;
  /** the iCalendar SEQUENCE of the booking's event now */
  sequence: number;
  /** the time before the last move by the customer, or null */
  movedFrom: { start: number; end: number } | null;
  cancelReason: string | null;
  cancelledBy: 'customer' | 'office' | null;
  /** whether the customer came, as the office marked it once the appointment began; null: not marked */
  attendance: Attendance | null;
  attendanceAt: number | null;
}

const joinedBookings = (db: Q) =>
  db
    .selectFrom('bookings')
    .innerJoin('schedules', 'schedules.id', 'bookings.schedule_id')
    .innerJoin('reasons', 'reasons.id', 'bookings.reason_id')
    .innerJoin('customers', 'customers.id', 'bookings.customer_id');

type Joined<O> = SelectQueryBuilder<Database, 'bookings' | 'schedules' | 'reasons' | 'customers', O>;

function bookingDetailsQuery(db: Q) {
  return joinedBookings(db).select([
    'bookings.id',
    'bookings.details_id',
    'bookings.schedule_id',
    'schedules.name as schedule_name',
    'bookings.reason_id',
    'reasons.name as reason_name',
    'reasons.duration_minutes',
    'bookings.customer_id',
    'customers.first_name',
    'customers.last_name',
    'customers.email',
    'customers.phone',
    'bookings.start_at',
    'bookings.end_at',
    'bookings.status',
    'bookings.source',
    'bookings.created_at',
    'bookings.cancelled_at',
    'bookings.updated_at',
    'bookings.staff_overrides',
    'bookings.answers',
    'bookings.sequence',
    'bookings.moved_from_start',
    'bookings.moved_from_end',
    'bookings.cancel_reason',
    'bookings.cancelled_by',
    'bookings.attendance',
    'bookings.attendance_at',
  ]);
}

type BookingDetailsRow = Awaited<ReturnType<ReturnType<typeof bookingDetailsQuery>['execute']>>[number];

function bookingDetailsOf(r: BookingDetailsRow): BookingDetails {
  return {
    id: r.id,
    detailsId: r.details_id,
    scheduleId: r.schedule_id,
    scheduleName: r.schedule_name,
    reasonId: r.reason_id,
    reasonName: r.reason_name,
    reasonDurationMinutes: r.duration_minutes,
    customerId: r.customer_id,
    customerFirstName: r.first_name,
    customerLastName: r.last_name,
    customerEmail: r.email,
    customerPhone: r.phone,
    start: Number(r.start_at),
    end: Number(r.end_at),
    status: r.status,
    source: r.source,
    createdAt: Number(r.created_at),
    cancelledAt: r.cancelled_at === null ? null : Number(r.cancelled_at),
    overrides: (r.staff_overrides ?? '').split(',').filter(isStaffOverride),
    updatedAt: r.updated_at === null ? null : Number(r.updated_at),
    answers: JSON.parse(r.answers) as Record<string, Answer>,
    sequence: Number(r.sequence),
    movedFrom:
      r.moved_from_start === null || r.moved_from_end === null
        ? null
        : { start: Number(r.moved_from_start), end: Number(r.moved_from_end) },
    cancelReason: r.cancel_reason,
    cancelledBy: r.cancelled_by === 'customer' || r.cancelled_by === 'office' ? r.cancelled_by : null,
    attendance: isAttendance(r.attendance) ? r.attendance : null,
    attendanceAt: r.attendance_at === null ? null : Number(r.attendance_at),
  };
}

export interface BookingFilter {
  /** upcoming: ends after now, ascending; past: ended, descending */
  when?: 'upcoming' | 'past' | 'all';
  scheduleId?: number | null;
  /** only these schedules (a staff member's); null or absent: all */
  scheduleIds?: readonly number[] | null;
  customerId?: number | null;
  /** instants: start in [from, to) */
  from?: number | null;
  to?: number | null;
  /** only this status; when absent, booked ones, or any with includeCancelled */
  status?: BookingStatus | null;
  /** only booked ones the office marked so (the Bookings page's "Completed", "No-show") */
  attendance?: Attendance | null;
  includeCancelled?: boolean;
  /** the customer's name, e-mail or phone contains it, in any case; phone numbers compared by digits (phoneDigits) */
  text?: string | null;
  /** null: every matching row (the export) */
  limit?: number | null;
  offset?: number;
}

// The characters people put between a phone number's digits. Stripped in SQL with nested replace(), which both
// engines have (SQLite has no regexp_replace), so `01632 960 777` and `(01632) 960-777` compare as 01632960777.
const PHONE_PUNCTUATION = [' ', '-', '(', ')', '.', '/', '+'];

/** The digits of a search term that looks like a phone number (at least 3 digits, nothing but digits and punctuation), else null. */
export function phoneDigits(term: string): string | null {
  const digits = term.replace(/\D/g, '');
  return digits.length >= 3 && /^[\d\s\-()./+]+$/.test(term) ? digits : null;
}

const likePattern = (term: string) => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

function filtered<O>(q: Joined<O>, filter: BookingFilter, now: number): Joined<O> {
  let r = q;
  const when = filter.when ?? 'all';
  if (when === 'upcoming') r = r.where('bookings.end_at', '>', now);
  if (when === 'past') r = r.where('bookings.end_at', '<=', now);
  if (filter.scheduleId) r = r.where('bookings.schedule_id', '=', filter.scheduleId);
  if (filter.scheduleIds) r = r.where('bookings.schedule_id', 'in', filter.scheduleIds.length ? [...filter.scheduleIds] : [-1]);
  if (filter.customerId) r = r.where('bookings.customer_id', '=', filter.customerId);
  if (filter.from != null) r = r.where('bookings.start_at', '>=', filter.from);
  if (filter.to != null) r = r.where('bookings.start_at', '<', filter.to);
  if (filter.status) r = r.where('bookings.status', '=', filter.status);
  else if (!filter.includeCancelled) r = r.where('bookings.status', '=', 'booked');
  if (filter.attendance) r = r.where('bookings.status', '=', 'booked').where('bookings.attendance', '=', filter.attendance);
  const term = filter.text?.trim().toLowerCase() ?? '';
  if (term) {
    // lower() on both sides: PostgreSQL's LIKE is case-sensitive, SQLite's is case-insensitive for ASCII only
    const pattern = likePattern(term);
    const like = (expression: RawBuilder<unknown>) => sql<boolean>`lower(${expression}) like ${pattern} escape '\\'`;
    const digits = phoneDigits(term);
    const phoneOnlyDigits = PHONE_PUNCTUATION.reduce<RawBuilder<unknown>>(
      (e, c) => sql`replace(${e}, ${sql.lit(c)}, '')`,
      sql`customers.phone`,
    );
    r = r.where((eb) =>
      eb.or([
        like(sql`customers.first_name || ' ' || customers.last_name`),
        like(sql`customers.last_name || ' ' || customers.first_name`),
        like(sql`coalesce(customers.email, '')`),
        like(sql`customers.phone`),
        ...(digits ? [sql<boolean>`${phoneOnlyDigits} like ${likePattern(digits)} escape '\\'`] : []),
      ]),
    );
  }
  return r;
}

export async function listBookingDetails(db: Q, filter: BookingFilter, now: number): Promise<BookingDetails[]> {
  const when = filter.when ?? 'all';
  let q = filtered(bookingDetailsQuery(db), filter, now)
    .orderBy('bookings.start_at', when === 'past' ? 'desc' : 'asc')
    .orderBy('bookings.id');
  const limit = filter.limit === undefined ? 500 : filter.limit;
  if (limit !== null) q = q.limit(limit);
  if (filter.offset) q = q.offset(filter.offset);
  return (await q.execute()).map(bookingDetailsOf);
}

/** How many bookings match (limit and offset ignored): the list's page count. */
export async function countBookingDetails(db: Q, filter: BookingFilter, now: number): Promise<number> {
  const row = await filtered(joinedBookings(db).select(sql<string | number>`count(*)`.as('n')), filter, now).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findBookingDetails(db: Q, key: { id: number } | { detailsId: string }): Promise<BookingDetails | null> {
  const q = bookingDetailsQuery(db);
  const row = await (
    'id' in key ? q.where('bookings.id', '=', key.id) : q.where('bookings.details_id', '=', key.detailsId)
  ).executeTakeFirst();
  return row ? bookingDetailsOf(row) : null;
}

/** Several bookings' details by id, in one query; ids without a booking are absent. */
export async function findBookingDetailsByIds(db: Q, ids: readonly number[]): Promise<BookingDetails[]> {
  if (ids.length === 0) return [];
  const rows = await bookingDetailsQuery(db).where('bookings.id', 'in', ids).execute();
  return rows.map(bookingDetailsOf);
}

export async function findBookingId(db: Q, detailsId: string): Promise<number | null> {
  const row = await db.selectFrom('bookings').select('id').where('details_id', '=', detailsId).executeTakeFirst();
  return row ? row.id : null;
}

/** A booked (not cancelled) appointment with its customer's address, for cancelling it. */
export async function findBookedForCancel(
  trx: Q,
  detailsId: string,
): Promise<{ id: number; scheduleId: number; start: number; customerEmail: string | null } | null> {
  const row = await trx
    .selectFrom('bookings')
    .innerJoin('customers', 'customers.id', 'bookings.customer_id')
    .select(['bookings.id', 'bookings.schedule_id', 'bookings.start_at', 'customers.email'])
    .where('bookings.details_id', '=', detailsId)
    .where('bookings.status', '=', 'booked')
    .executeTakeFirst();
  return row ? { id: row.id, scheduleId: row.schedule_id, start: Number(row.start_at), customerEmail: row.email } : null;
}

/**
 * `changedIn`: the bookings version bumpBookingsVersion returned in this transaction. The SEQUENCE goes up:
 * the cancellation's METHOD:CANCEL must carry a higher one than every request the customer has.
 */
export async function markBookingCancelled(
  trx: Q,
  id: number,
  now: number,
  changedIn: number,
  by: { who: 'customer' | 'office'; reason?: string | null } = { who: 'office' },
): Promise<boolean> {
  const result = await trx
    .updateTable('bookings')
    .set((eb) => ({
      status: 'cancelled',
      cancelled_at: now,
      changed_in: changedIn,
      sequence: eb('sequence', '+', 1),
      cancelled_by: by.who,
      cancel_reason: by.reason ?? null,
      // a mark of whether the customer came belongs to a booking that stands
      attendance: null,
      attendance_at: null,
    }))
    .where('id', '=', id)
    // only a booking still booked: of two cancellations at once, the second (waiting on the lock) changes nothing
    .where('status', '=', 'booked')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Whether the reason a booking lands on (`reasonId`, or the booking's own) is one of its schedule's reasons in
 * service: in the UPDATE's own statement, so on PostgreSQL a retirement committed while this transaction
 * waited for the schedule's lock is seen (as `insertBooking` checks it).
 */
function reasonInService(eb: ExpressionBuilder<Database, 'bookings'>, reasonId: number | undefined) {
  return eb.exists(
    eb
      .selectFrom('reasons')
      .select(sql`1`.as('one'))
      .whereRef('reasons.schedule_id', '=', 'bookings.schedule_id')
      .where('reasons.retired_at', 'is', null)
      .$if(reasonId === undefined, (q) => q.whereRef('reasons.id', '=', 'bookings.reason_id'))
      .$if(reasonId !== undefined, (q) => q.where('reasons.id', '=', reasonId!)),
  );
}

/**
 * Moves a booked appointment to a new time, and to another reason of its schedule when `to.reasonId` is given
 * (already re-checked in this transaction); the SEQUENCE goes up. The rules staff set aside booking it by hand
 * are cleared: the new time was checked by every rule; so is a mark of whether the customer came (it was about
 * the old time). False when the reason it lands on has been retired (nothing changed).
 */
export async function moveBookingTo(
  trx: Q,
  id: number,
  from: { start: number; end: number },
  to: { start: number; end: number; reasonId?: number },
  changedIn: number,
): Promise<boolean> {
  const result = await trx
    .updateTable('bookings')
    .set((eb) => ({
      start_at: to.start,
      end_at: to.end,
      ...(to.reasonId === undefined ? {} : { reason_id: to.reasonId }),
      moved_from_start: from.start,
      moved_from_end: from.end,
      changed_in: changedIn,
      sequence: eb('sequence', '+', 1),
      staff_overrides: null,
      attendance: null,
      attendance_at: null,
    }))
    .where('id', '=', id)
    .where((eb) => reasonInService(eb, to.reasonId))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * A cancelled booking booked again (the office's "Undo cancellation"), its time already re-checked in this
 * transaction under the schedule's lock. The SEQUENCE goes up past the cancellation's, so the new confirmation
 * replaces the cancelled event in the customer's calendar. The rules staff set aside booking it by hand are
 * cleared: the time was checked again by every rule. False when it was not cancelled (any more) or its reason
 * has been retired.
 */
export async function markBookingRestored(trx: Q, id: number, changedIn: number): Promise<boolean> {
  const result = await trx
    .updateTable('bookings')
    .set((eb) => ({
      status: 'booked',
      cancelled_at: null,
      cancelled_by: null,
      cancel_reason: null,
      changed_in: changedIn,
      sequence: eb('sequence', '+', 1),
      staff_overrides: null,
    }))
    .where('id', '=', id)
    .where('status', '=', 'cancelled')
    .where((eb) => reasonInService(eb, undefined))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Marks whether the customer came (null clears the mark), only on a booking still booked that began by `now`;
 * false otherwise. No free time changes (the status stays 'booked'), so the bookings version is not bumped.
 */
export async function markBookingAttendance(trx: Q, id: number, attendance: Attendance | null, now: number): Promise<boolean> {
  const result = await trx
    .updateTable('bookings')
    .set({ attendance, attendance_at: attendance === null ? null : now })
    .where('id', '=', id)
    .where('status', '=', 'booked')
    .where('start_at', '<=', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A schedule's cut-off for changes through the manage link, in minutes before the start (0 when unknown). */
export async function findCancelCutoffMinutes(db: Q, scheduleId: number): Promise<number> {
  const row = await db.selectFrom('schedules').select('cancel_cutoff_minutes').where('id', '=', scheduleId).executeTakeFirst();
  return row ? Number(row.cancel_cutoff_minutes) : 0;
}

/**
 * A booking's answers, replaced as edited in the admin area (validated by the caller with the schedule's form).
 * Its time is not changed, so neither is the schedule's bookings version.
 */
export async function updateBookingAnswers(trx: Q, id: number, answers: Readonly<Record<string, Answer>>, now: number): Promise<void> {
  await trx
    .updateTable('bookings')
    .set({ answers: JSON.stringify(answers), updated_at: now })
    .where('id', '=', id)
    .execute();
}

/** Upcoming booked appointments of a customer (they block erasure: docs/security.md). */
export async function countUpcomingOfCustomer(db: Q, customerId: number, now: number): Promise<number> {
  const row = await db
    .selectFrom('bookings')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('customer_id', '=', customerId)
    .where('status', '=', 'booked')
    .where('end_at', '>', now)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Erasure: the customer's bookings keep schedule, reason, time, status and source; their answers go. */
export async function clearCustomerAnswers(trx: Q, customerId: number, now: number): Promise<number> {
  const result = await trx
    .updateTable('bookings')
    .set({ answers: '{}', updated_at: now })
    .where('customer_id', '=', customerId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
