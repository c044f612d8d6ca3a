// What the admin area reads about bookings and customers. Writes go through src/app/bookings.ts
// (createBooking with source 'admin', cancelBooking): the same rules and transaction as the API.
import type { Db } from '../db/connect.js';
import { findBookingDetails, listBookingDetails, type BookingDetails, type BookingFilter } from '../db/repos/booking.repository.js';
import { findCustomerRecord, listCustomerRecords, type CustomerRecord } from '../db/repos/customer.repository.js';
import { personName } from '../core/text.js';

export interface BookingRow extends BookingDetails {
  /** first and last name, as the list shows it */
  customerName: string;
}

const bookingRow = (b: BookingDetails): BookingRow => ({ ...b, customerName: personName(b.customerFirstName, b.customerLastName) });

export async function listBookings(db: Db, filter: BookingFilter, now: number): Promise<BookingRow[]> {
  return (await listBookingDetails(db.kysely, filter, now)).map(bookingRow);
}

export async function findBooking(db: Db, detailsId: string): Promise<BookingRow | null> {
  const booking = await findBookingDetails(db.kysely, { detailsId });
  return booking ? bookingRow(booking) : null;
}

export interface CustomerRow extends CustomerRecord {
  name: string;
}

const customerRow = (c: CustomerRecord): CustomerRow => ({ ...c, name: personName(c.firstName, c.lastName) });

export async function listCustomers(db: Db, search: string, limit = 200): Promise<CustomerRow[]> {
  return (await listCustomerRecords(db.kysely, search, limit)).map(customerRow);
}

export async function findCustomer(db: Db, id: number): Promise<CustomerRow | null> {
  const customer = await findCustomerRecord(db.kysely, id);
  return customer ? customerRow(customer) : null;
}
