// What the admin area reads about bookings and customers. Writes go through src/app/bookings.ts
// (createBooking with source 'admin', cancelBooking): the same rules and transaction as the API; moves through
// src/app/reschedule.ts, marks and undoing a cancellation through src/app/booking-status.ts.
import type { Db } from '../db/connect.js';
import {
  countBookingDetails,
  findBookingDetails,
  listBookingDetails,
  type BookingDetails,
  type BookingFilter,
} from '../db/repos/booking.repository.js';
import {
  customersWithBookingsOutside,
  customerVisibleTo,
  findCustomerRecord,
  listCustomerRecords,
  type CustomerRecord,
} from '../db/repos/customer.repository.js';
import { personName } from '../core/text.js';
import { statusLabel } from '../core/bookings.js';
import { csvDocument } from '../core/csv.js';
import { answerText, type Answer } from '../core/forms/form-fields.js';

export type { BookingFilter };

export interface BookingRow extends BookingDetails {
  /** first and last name, as the list shows it */
  customerName: string;
  /** false: the customer's page is not for this user (staff; a customer shared with another schedule) */
  customerVisible: boolean;
}

const bookingRow = (b: BookingDetails, customerVisible = true): BookingRow => ({
  ...b,
  customerName: personName(b.customerFirstName, b.customerLastName),
  customerVisible,
});

/**
 * For staff, a booking whose customer they may not see (one shared with another schedule: customerVisibleTo)
 * tells the customer as its own answers hold them, not the customer's record (whose details and notes are the
 * other schedule's office's too).
 */
async function rowsFor(db: Db, bookings: BookingDetails[], scheduleIds: VisibleSchedules): Promise<BookingRow[]> {
  if (scheduleIds === null) return bookings.map((b) => bookingRow(b));
  const hidden = await customersWithBookingsOutside(
    db.kysely,
    bookings.map((b) => b.customerId),
    scheduleIds,
  );
  return bookings.map((b) => {
    if (!hidden.has(b.customerId)) return bookingRow(b);
    const email = answerText(b.answers, 'email');
    const asAnswered = {
      ...b,
      customerFirstName: answerText(b.answers, 'first_name'),
      customerLastName: answerText(b.answers, 'last_name'),
      customerEmail: email === '' ? null : email,
      customerPhone: answerText(b.answers, 'phone'),
    };
    return bookingRow(asAnswered, false);
  });
}

export async function listBookings(db: Db, filter: BookingFilter, now: number): Promise<BookingRow[]> {
  return rowsFor(db, await listBookingDetails(db.kysely, filter, now), filter.scheduleIds ?? null);
}

/** One page of the matching bookings and how many match in all. */
export async function listBookingsPage(
  db: Db,
  filter: BookingFilter,
  page: { number: number; size: number },
  now: number,
): Promise<{ rows: BookingRow[]; total: number }> {
  const [rows, total] = await Promise.all([
    listBookings(db, { ...filter, limit: page.size, offset: (page.number - 1) * page.size }, now),
    countBookingDetails(db.kysely, filter, now),
  ]);
  return { rows, total };
}

const csvAnswer = (value: Answer | undefined) => (value === undefined ? '' : value === true ? 'yes' : value === false ? 'no' : value);

/**
 * Every booking matching the filter as CSV (docs/admin.md, "Find and export"): one row per booking, times in
 * the installation's local time, then one column per form answer (`answer:NAME`, in order of first
 * appearance), so the columns of different schedules' forms sit side by side and a spreadsheet can filter
 * on them.
 */
export async function bookingsCsv(db: Db, filter: BookingFilter, localTime: (instant: number) => string, now: number): Promise<string> {
  const rows = await listBookings(db, { ...filter, limit: null, offset: 0 }, now);
  const answerNames = [...new Set(rows.flatMap((b) => Object.keys(b.answers)))];
  const header = ['id', 'reference', 'schedule', 'reason', 'start', 'end', 'status', 'source', 'customer', 'email', 'phone'];
  return csvDocument([
    [...header, ...answerNames.map((n) => `answer:${n}`)],
    ...rows.map((b) => [
      String(b.id),
      b.detailsId,
      b.scheduleName,
      b.reasonName,
      localTime(b.start),
      localTime(b.end),
      statusLabel(b),
      b.source,
      b.customerName,
      b.customerEmail ?? '',
      b.customerPhone,
      ...answerNames.map((n) => csvAnswer(b.answers[n])),
    ]),
  ]);
}

/**
 * `scheduleIds`: the schedules the user may see (app/admin-users.ts visibleSchedules; null: all). A booking or
 * customer outside them is not found, exactly as one that does not exist.
 */
export type VisibleSchedules = readonly number[] | null;

export async function findBooking(db: Db, detailsId: string, scheduleIds: VisibleSchedules = null): Promise<BookingRow | null> {
  const booking = await findBookingDetails(db.kysely, { detailsId });
  if (!booking || (scheduleIds && !scheduleIds.includes(booking.scheduleId))) return null;
  const [row] = await rowsFor(db, [booking], scheduleIds);
  return row!;
}

export interface CustomerRow extends CustomerRecord {
  name: string;
}

const customerRow = (c: CustomerRecord): CustomerRow => ({ ...c, name: personName(c.firstName, c.lastName) });

export async function listCustomers(db: Db, search: string, limit = 200, scheduleIds: VisibleSchedules = null): Promise<CustomerRow[]> {
  return (await listCustomerRecords(db.kysely, search, limit, scheduleIds)).map(customerRow);
}

export async function findCustomer(db: Db, id: number, scheduleIds: VisibleSchedules = null): Promise<CustomerRow | null> {
  const customer = await findCustomerRecord(db.kysely, id);
  if (!customer || (scheduleIds && !(await customerVisibleTo(db.kysely, id, scheduleIds)))) return null;
  return customerRow(customer);
}
