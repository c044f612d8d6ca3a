// Customers in the admin area: editing their details and notes, and their data on request (GDPR, see
// docs/security.md "Customers' personal data"): an export of everything stored about them, and erasure.
import type { Db } from '../db/connect.js';
import { InvalidInput, NotFound } from '../core/errors.js';
import { isEmailAddress } from '../core/forms/form-fields.js';
import { controlCharacterProblem } from '../core/text.js';
import { clearCustomerAnswers, countUpcomingOfCustomer, listBookingDetails } from '../db/repos/booking.repository.js';
import { anonymiseCustomer, findCustomerIdByEmail, findCustomerRecord, updateCustomer } from '../db/repos/customer.repository.js';
import { deleteCustomerMessages, listCustomerMessages } from '../db/repos/outbox.repository.js';
import { scrubCustomerDeliveries } from '../db/repos/webhook.repository.js';

export interface CustomerEdit {
  firstName: string;
  lastName: string;
  email: string;
  phone: string;
  notes: string;
}

const LIMITS: Record<keyof CustomerEdit, number> = { firstName: 200, lastName: 200, email: 254, phone: 50, notes: 10_000 };

/** Every problem of an edit at once, keyed by field (empty when it is fine). */
export function customerEditProblems(edit: CustomerEdit): Partial<Record<keyof CustomerEdit, string>> {
  const problems: Partial<Record<keyof CustomerEdit, string>> = {};
  for (const key of Object.keys(LIMITS) as (keyof CustomerEdit)[]) {
    const value = edit[key];
    if (value.length > LIMITS[key]) problems[key] = `Enter at most ${LIMITS[key]} characters.`;
    // notes may span lines; the other fields are one line
    else if (controlCharacterProblem(value, key === 'notes') !== null) problems[key] = 'Remove the control characters.';
  }
  if (!problems.email && edit.email !== '' && !isEmailAddress(edit.email))
    problems.email = 'Enter an e-mail address like name@example.com.';
  return problems;
}

/** The e-mail address is what bookings match a customer by (any case), so it cannot be another customer's too. */
const emailClash = (other: number, email: string) =>
  new InvalidInput(`another customer (number ${other}) has the e-mail address ${email}`, 'email');

/** Thrown inside the transaction to end it (on PostgreSQL it is aborted) when the unique index refused the address. */
class EmailTakenMeanwhile extends Error {}

/**
 * Saves a customer's details and notes. The e-mail address is what bookings match a customer by (any case):
 * one held by another customer is refused (InvalidInput on 'email'), not merged, also when the other got it
 * between the check and the update (two admins at the same moment, or a booking).
 */
export async function editCustomer(db: Db, id: number, edit: CustomerEdit, now: number, tries = 3): Promise<void> {
  const email = edit.email.trim();
  try {
    await db.write(async (trx) => {
      if (email !== '') {
        const other = await findCustomerIdByEmail(trx, email, id);
        if (other !== null) throw emailClash(other, email);
      }
      const saved = await updateCustomer(
        trx,
        id,
        {
          firstName: edit.firstName.trim(),
          lastName: edit.lastName.trim(),
          email: email || null,
          phone: edit.phone.trim(),
          notes: edit.notes,
        },
        now,
      );
      if (saved === 'not found') throw new NotFound('Customer not found');
      if (saved === 'email taken') throw new EmailTakenMeanwhile();
    });
  } catch (error) {
    if (!(error instanceof EmailTakenMeanwhile)) throw error;
    // the other transaction has committed (the index waited for it), so a read now names its customer
    const other = await findCustomerIdByEmail(db.kysely, email, id);
    if (other !== null) throw emailClash(other, email);
    // given up again meanwhile: the address is free, so the edit is tried once more
    if (tries > 1) return editCustomer(db, id, edit, now, tries - 1);
    throw error;
  }
}

/** Everything stored about one customer, as the JSON download of a data request. */
export async function exportCustomer(db: Db, id: number, now: number) {
  const customer = await findCustomerRecord(db.kysely, id);
  if (!customer) throw new NotFound('Customer not found');
  const bookings = await listBookingDetails(db.kysely, { customerId: id, includeCancelled: true, limit: 100_000 }, now);
  const messages = await listCustomerMessages(db.kysely, id, customer.email?.toLowerCase() ?? null);
  const iso = (instant: number | null) => (instant === null ? null : new Date(instant).toISOString());
  return {
    exported_at: iso(now),
    customer: {
      id: customer.id,
      first_name: customer.firstName,
      last_name: customer.lastName,
      email: customer.email,
      phone: customer.phone,
      notes: customer.notes,
      created_at: iso(customer.createdAt),
      updated_at: iso(customer.updatedAt),
    },
    bookings: bookings.map((b) => ({
      reference: b.detailsId,
      schedule: b.scheduleName,
      reason: b.reasonName,
      start: iso(b.start),
      end: iso(b.end),
      status: b.status,
      source: b.source,
      created_at: iso(b.createdAt),
      cancelled_at: iso(b.cancelledAt),
      updated_at: iso(b.updatedAt),
      answers: b.answers,
    })),
    messages: messages.map((m) => ({
      kind: m.kind,
      recipient: m.recipient,
      state: m.state,
      booking_reference: bookings.find((b) => b.id === m.booking_id)?.detailsId ?? null,
      created_at: iso(m.created_at),
      sent_at: iso(m.sent_at),
    })),
  };
}

export type ErasureCheck = { ok: true } | { ok: false; upcoming: number };

/** Erasure waits until the customer has no upcoming appointment: cancel those first (the customer is e-mailed). */
export async function erasureCheck(db: Db, id: number, now: number): Promise<ErasureCheck> {
  const upcoming = await countUpcomingOfCustomer(db.kysely, id, now);
  return upcoming === 0 ? { ok: true } : { ok: false, upcoming };
}

/**
 * Erases a customer's personal data in one transaction: the row is emptied (kept, so the bookings keep
 * their statistics), their bookings' answers cleared, the mail addressed to them deleted, webhook delivery
 * bodies about their bookings scrubbed. Refused (InvalidInput) while an upcoming appointment exists.
 * Erasing twice is the same as once.
 */
export async function eraseCustomer(db: Db, id: number, now: number): Promise<void> {
  await db.write(async (trx) => {
    const customer = await findCustomerRecord(trx, id);
    if (!customer) throw new NotFound('Customer not found');
    if (customer.erasedAt !== null) return;
    // emptying the row first takes its lock: a booking matching this customer at the same moment (its
    // upsert locks the row too) is either seen by the count below, or finds no address and makes a new customer
    await anonymiseCustomer(trx, id, now);
    const upcoming = await countUpcomingOfCustomer(trx, id, now);
    if (upcoming > 0) throw new InvalidInput(`the customer has ${upcoming} upcoming appointment(s): cancel them first`, 'erase');
    await deleteCustomerMessages(trx, id, customer.email?.toLowerCase() ?? null);
    await scrubCustomerDeliveries(trx, id);
    await clearCustomerAnswers(trx, id, now);
  });
}
