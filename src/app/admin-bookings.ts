// What the admin area reads about bookings and customers. Writes go through src/app/bookings.ts
// (createBooking with source 'admin', cancelBooking): the same rules and transaction as the API.
import type { Db } from '../db/connect.js';
import { findBookingDetails, listBookingDetails, type BookingDetails, type BookingFilter } from '../db/repos/booking.repository.js';
import { findCustomer as findCustomerRecord, listCustomers as listCustomerRecords, type CustomerRecord } from '../db/repos/customer.repository.js';
import type { Answer } from '../core/forms/form-fields.js';
import { personName } from '../core/text.js';

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

function bookingRow(b: BookingDetails): BookingRow {
  return {
    id: b.id, detailsId: b.detailsId, scheduleId: b.scheduleId, scheduleName: b.scheduleName, reasonName: b.reasonName,
    customerId: b.customerId, customerName: personName(b.customerFirstName, b.customerLastName), customerEmail: b.customerEmail,
    customerPhone: b.customerPhone, start: b.start, end: b.end, status: b.status, source: b.source, createdAt: b.createdAt,
    cancelledAt: b.cancelledAt, answers: b.answers,
  };
}

export async function listBookings(db: Db, filter: BookingFilter, now: number): Promise<BookingRow[]> {
  return (await listBookingDetails(db.kysely, filter, now)).map(bookingRow);
}

export async function findBooking(db: Db, detailsId: string): Promise<BookingRow | null> {
  const booking = await findBookingDetails(db.kysely, { detailsId });
  return booking ? bookingRow(booking) : null;
}

export interface CustomerRow {
  id: number;
  name: string;
  email: string | null;
  phone: string;
  createdAt: number;
  bookings: number;
}

const customerRow = (c: CustomerRecord): CustomerRow => ({
  id: c.id, name: personName(c.firstName, c.lastName), email: c.email, phone: c.phone, createdAt: c.createdAt, bookings: c.bookings,
});

export async function listCustomers(db: Db, search: string, limit = 200): Promise<CustomerRow[]> {
  return (await listCustomerRecords(db.kysely, search, limit)).map(customerRow);
}

export async function findCustomer(db: Db, id: number): Promise<CustomerRow | null> {
  const customer = await findCustomerRecord(db.kysely, id);
  return customer ? customerRow(customer) : null;
}
