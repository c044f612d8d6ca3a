// Creating a booking (docs/decisions.md §5): the slot is re-checked inside the transaction that stores it,
// under a lock on the schedule, so concurrent requests for the last place give exactly one booking.
// The customer record and the notification e-mails (outbox rows) are written in the same transaction.
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/connect.js';
import { bumpBookingsVersion, findBookedForCancel, insertBooking, markBookingCancelled } from '../db/repos/booking.repository.js';
import { saveCustomer } from '../db/repos/customer.repository.js';
import { loadSettings } from '../db/repos/installation.repository.js';
import { enqueueMessages } from '../db/repos/outbox.repository.js';
import { mailRecipient, type MessageKind } from '../core/messages.js';
import type { BookingSource } from '../core/bookings.js';
import { InvalidInput, NotFound } from '../core/errors.js';
import { validateSubmission, publicFields, type Answer, type FormField } from '../core/forms/form-fields.js';
import { MINUTE_MS } from '../core/time/calendar.js';
import type { Snapshot } from './snapshot.js';
import type { OnCreated } from './form-tokens.js';
import { availabilityContext, findReason, findSchedule, freeSlotAt } from './availability.js';
import { queueBookingEvent } from './webhooks.js';

export interface BookingRequest {
  scheduleId: number;
  reasonId: number;
  /** local wall time 'YYYY-MM-DD HH:MM:SS' */
  slot: string;
  submission: Readonly<Record<string, unknown>>;
  source: BookingSource;
}

export interface BookingCreated {
  bookingId: number;
  detailsId: string;
  customerId: number;
  start: number;
  end: number;
}

/** 24 URL-safe characters, 144 random bits: unguessable, used in links and the admin area. */
export const newDetailsId = () => randomBytes(18).toString('base64url');

function answerText(answers: Readonly<Record<string, Answer>>, name: string): string {
  const v = answers[name];
  return typeof v === 'string' ? v : '';
}

/** The customer's e-mail: the value of the form's first e-mail field named 'email', else of any e-mail field. */
function customerEmail(form: readonly FormField[], answers: Readonly<Record<string, Answer>>): string | null {
  const emailFields = publicFields(form).filter((f) => f.inputType === 'email');
  const field = emailFields.find((f) => f.name === 'email') ?? emailFields[0];
  const value = field ? answers[field.name] : undefined;
  return typeof value === 'string' && value !== '' ? value : null;
}

export async function createBooking(
  db: Db,
  snapshot: Snapshot,
  request: BookingRequest,
  now: number,
  onCreated?: OnCreated<BookingCreated>,
): Promise<BookingCreated> {
  const schedule = findSchedule(snapshot, request.scheduleId);
  const reason = findReason(schedule, request.reasonId);
  const checked = validateSubmission(schedule.form, request.submission);
  if (!checked.ok) throw new InvalidInput(checked.message, checked.field);
  const { answers } = checked;
  const ctx = availabilityContext(snapshot, schedule, reason, now);
  const email = customerEmail(schedule.form, answers);
  // only addresses we could deliver to are queued (both were validated on entry; this keeps it so)
  const customerRecipient = mailRecipient(email);
  const operator = mailRecipient(snapshot.settings.notifyEmail);

  return db.write(async (trx) => {
    // before the schedule's lock: bookings of one schedule wait for each other only for what needs it
    const customerId = await saveCustomer(
      trx,
      {
        email,
        firstName: answerText(answers, 'first_name'),
        lastName: answerText(answers, 'last_name'),
        phone: answerText(answers, 'phone'),
      },
      now,
    );
    // the bump is the lock: bookings of one schedule wait here for each other (PostgreSQL's row lock;
    // SQLite's write lock is already held), one round trip less than a lock and a bump apart (issue 13:
    // on PostgreSQL the round trips under the lock bound one schedule's bookings per second)
    const changedIn = await bumpBookingsVersion(trx, schedule.id);
    if (changedIn === null) throw new NotFound('Schedule not found');
    const slot = await freeSlotAt(trx, schedule, ctx, request.slot);
    const end = slot.start + reason.durationMinutes * MINUTE_MS;
    const detailsId = newDetailsId();
    const bookingId = await insertBooking(trx, {
      detailsId,
      scheduleId: schedule.id,
      reasonId: reason.id,
      customerId,
      start: slot.start,
      end,
      source: request.source,
      answers,
      createdAt: now,
      changedIn,
    });
    const messages: { kind: MessageKind; recipient: string }[] = [];
    if (customerRecipient) messages.push({ kind: 'booking_confirmation', recipient: customerRecipient });
    if (operator) messages.push({ kind: 'booking_notification', recipient: operator });
    await enqueueMessages(trx, bookingId, messages, now);
    await queueBookingEvent(trx, 'booking.created', bookingId, now);
    const created = { bookingId, detailsId, customerId, start: slot.start, end };
    await onCreated?.(trx, created);
    return created;
  });
}

/**
 * Cancels a booking (admin area): its time is free on the next request, and a cancellation message to the
 * customer and a notice to the office are queued in the same transaction. Returns false when there is no such booked appointment.
 */
export async function cancelBooking(db: Db, detailsId: string, now: number): Promise<boolean> {
  return db.write(async (trx) => {
    const booking = await findBookedForCancel(trx, detailsId);
    if (!booking) return false;
    // the bump is the schedule's lock, as in createBooking (the booking's schedule exists: the row refers to it)
    const changedIn = await bumpBookingsVersion(trx, booking.scheduleId);
    await markBookingCancelled(trx, booking.id, now, changedIn!);
    const messages: { kind: MessageKind; recipient: string }[] = [];
    const recipient = mailRecipient(booking.customerEmail);
    if (recipient) messages.push({ kind: 'booking_cancellation', recipient });
    // the office hears of every cancellation as it hears of every booking; the address is read in the
    // transaction so that callers need not pass the installation's settings
    const office = mailRecipient((await loadSettings(trx)).notifyEmail);
    if (office) messages.push({ kind: 'booking_cancellation_notification', recipient: office });
    await enqueueMessages(trx, booking.id, messages, now);
    await queueBookingEvent(trx, 'booking.cancelled', booking.id, now);
    return true;
  });
}
