// Creating a booking (docs/decisions.md §5): the slot is re-checked inside the transaction that stores it,
// under a lock on the schedule, so concurrent requests for the last place give exactly one booking.
// The customer record and the notification e-mails (outbox rows) are written in the same transaction.
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/connect.js';
import {
  bumpBookingsVersion,
  findBookedForCancel,
  findBookingDetails,
  insertBooking,
  markBookingCancelled,
  updateBookingAnswers,
  type BookingDetails,
} from '../db/repos/booking.repository.js';
import { customerVisibleTo, findCustomerIdByEmail, saveCustomer } from '../db/repos/customer.repository.js';
import { loadSettings } from '../db/repos/installation.repository.js';
import { enqueueMessages } from '../db/repos/outbox.repository.js';
import { mailRecipient, reminderDueTimes, type MessageKind } from '../core/messages.js';
import type { BookingSource, StaffOverride } from '../core/bookings.js';
import { InvalidInput, NotFound } from '../core/errors.js';
import { answerText, validateSubmission, publicFields, type Answer, type FormField } from '../core/forms/form-fields.js';
import { MINUTE_MS } from '../core/time/calendar.js';
import type { Snapshot } from './snapshot.js';
import type { OnCreated } from './form-tokens.js';
import { availabilityContext, findReason, findSchedule, freeSlotAt } from './availability.js';
import { bookingForEvent, queueBookingEvent, subscribedWebhookEndpoints } from './webhooks.js';
import { API_ACTOR, auditTime, recordAudit, type Actor } from './audit.js';

export interface BookingRequest {
  scheduleId: number;
  reasonId: number;
  /** local wall time 'YYYY-MM-DD HH:MM:SS' */
  slot: string;
  submission: Readonly<Record<string, unknown>>;
  source: BookingSource;
  /**
   * Booking by hand only (the API never passes these): the rules staff ticked to set aside, each relaxing
   * exactly its rule in the same locked re-check, and stored on the booking.
   */
  overrides?: readonly StaffOverride[];
  /** false: no confirmation to the customer (staff told them); the office's notification is queued still */
  emailCustomer?: boolean;
  /** who books, for the audit trail; default: the API for source 'api', else the system */
  actor?: Actor;
  /**
   * Booking by hand by staff: the schedules whose customers they may see (app/admin-users.ts visibleSchedules).
   * A customer matched by the e-mail address whom they may not see (customerVisibleTo) is linked to the
   * booking without their details being changed: staff do not overwrite another schedule's customer.
   */
  visibleSchedules?: readonly number[] | null;
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

/** The customer's e-mail: the value of the form's first e-mail field named 'email', else of any e-mail field. */
function customerEmail(form: readonly FormField[], answers: Readonly<Record<string, Answer>>): string | null {
  const emailFields = publicFields(form).filter((f) => f.inputType === 'email');
  const field = emailFields.find((f) => f.name === 'email') ?? emailFields[0];
  const value = field ? answers[field.name] : undefined;
  return typeof value === 'string' && value !== '' ? value : null;
}

/** Whether a booking by `visibleSchedules`' staff may update the details of the customer with this address. */
async function mayUpdateCustomer(trx: Db['kysely'], email: string | null, visibleSchedules: readonly number[] | null | undefined) {
  if (!visibleSchedules || email === null) return true;
  const existing = await findCustomerIdByEmail(trx, email);
  return existing === null || (await customerVisibleTo(trx, existing, visibleSchedules));
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
  const overrides = request.source === 'admin' ? [...new Set(request.overrides ?? [])] : [];
  const ctx = { ...availabilityContext(snapshot, schedule, reason, now), overrides: new Set(overrides) };
  const email = customerEmail(schedule.form, answers);
  // only addresses we could deliver to are queued (both were validated on entry; this keeps it so)
  const customerRecipient = mailRecipient(email);
  const operator = mailRecipient(snapshot.settings.notifyEmail);

  return db.write(async (trx) => {
    // before the schedule's lock: bookings of one schedule wait for each other only for what needs it
    const details = {
      email,
      firstName: answerText(answers, 'first_name'),
      lastName: answerText(answers, 'last_name'),
      phone: answerText(answers, 'phone'),
    };
    const customer = await saveCustomer(trx, details, now, {
      updateDetails: await mayUpdateCustomer(trx, email, request.visibleSchedules),
    });
    // the bump is the lock: bookings of one schedule wait here for each other (PostgreSQL's row lock;
    // SQLite's write lock is already held), one round trip less than a lock and a bump apart (issue 13:
    // on PostgreSQL the round trips under the lock bound one schedule's bookings per second). A retirement
    // takes the lock too: a schedule retired since the snapshot (or while this waited) is not found
    const changedIn = await bumpBookingsVersion(trx, schedule.id, { inService: true });
    if (changedIn === null) throw new NotFound('Schedule not found');
    const slot = await freeSlotAt(trx, schedule, ctx, request.slot);
    const end = slot.start + reason.durationMinutes * MINUTE_MS;
    const detailsId = newDetailsId();
    const bookingId = await insertBooking(trx, {
      detailsId,
      scheduleId: schedule.id,
      reasonId: reason.id,
      customerId: customer.id,
      start: slot.start,
      end,
      source: request.source,
      answers,
      createdAt: now,
      changedIn,
      overrides,
    });
    // its reason retired since the snapshot (or while this waited for the lock)
    if (bookingId === null) throw new NotFound('Reason not found');
    const messages: { kind: MessageKind; recipient: string; notBefore?: number }[] = [];
    // staff booking by hand may choose not to e-mail the customer: then no confirmation and no reminders
    if (customerRecipient && request.emailCustomer !== false) {
      messages.push({ kind: 'booking_confirmation', recipient: customerRecipient });
      // the schedule's reminders as they are now (a later change applies to later bookings: docs/reminders.md)
      for (const due of reminderDueTimes(slot.start, schedule.reminderMinutesBefore, now))
        messages.push({ kind: 'booking_reminder', recipient: customerRecipient, notBefore: due });
    }
    if (operator) messages.push({ kind: 'booking_notification', recipient: operator });
    await enqueueMessages(trx, bookingId, messages, now);
    // the subscribers as of the request's snapshot (none: no webhook work at all), the payload from what is at hand
    const subscribers = snapshot.webhooks.get('booking.created') ?? [];
    if (subscribers.length > 0) {
      const booking: BookingDetails = {
        id: bookingId,
        detailsId,
        scheduleId: schedule.id,
        scheduleName: schedule.name,
        reasonId: reason.id,
        reasonName: reason.name,
        reasonDurationMinutes: reason.durationMinutes,
        customerId: customer.id,
        customerFirstName: customer.firstName,
        customerLastName: customer.lastName,
        customerEmail: customer.email,
        customerPhone: customer.phone,
        start: slot.start,
        end,
        status: 'booked',
        source: request.source,
        createdAt: now,
        cancelledAt: null,
        answers,
        overrides,
        updatedAt: null,
        sequence: 0,
        movedFrom: null,
        cancelReason: null,
        cancelledBy: null,
        attendance: null,
        attendanceAt: null,
      };
      await queueBookingEvent(trx, 'booking.created', booking, snapshot.settings.timezone, subscribers, now);
    }
    const actor = request.actor ?? (request.source === 'api' ? API_ACTOR : { kind: 'system' });
    // no customer data in the trail: erasing a customer (GDPR) leaves nothing of them here
    await recordAudit(trx, actor, 'booking.created', bookingId, `${reason.name}, ${request.slot.slice(0, 16)}`, now);
    const created = { bookingId, detailsId, customerId: customer.id, start: slot.start, end };
    await onCreated?.(trx, created);
    return created;
  });
}

/**
 * Cancels a booking (admin area): its time is free on the next request, and a cancellation message to the
 * customer and a notice to the office are queued in the same transaction. Returns false when there is no such booked appointment.
 */
export async function cancelBooking(db: Db, detailsId: string, now: number, actor: Actor = { kind: 'system' }): Promise<boolean> {
  return db.write(async (trx) => {
    const booking = await findBookedForCancel(trx, detailsId);
    if (!booking) return false;
    // what the event needs is read before the schedule's lock (PostgreSQL: no round trips under it)
    const subscribers = await subscribedWebhookEndpoints(trx, 'booking.cancelled');
    const event = subscribers.length > 0 ? await bookingForEvent(trx, booking.id) : null;
    const settings = await loadSettings(trx);
    const office = mailRecipient(settings.notifyEmail);
    // the bump is the schedule's lock, as in createBooking (the booking's schedule exists: the row refers to it)
    const changedIn = await bumpBookingsVersion(trx, booking.scheduleId);
    // cancelled meanwhile by a request that held the lock first: nothing more to do, nothing sent twice
    if (!(await markBookingCancelled(trx, booking.id, now, changedIn!))) return false;
    const messages: { kind: MessageKind; recipient: string }[] = [];
    const recipient = mailRecipient(booking.customerEmail);
    if (recipient) messages.push({ kind: 'booking_cancellation', recipient });
    // the office hears of every cancellation as it hears of every booking
    if (office) messages.push({ kind: 'booking_cancellation_notification', recipient: office });
    await enqueueMessages(trx, booking.id, messages, now);
    await recordAudit(
      trx,
      actor,
      'booking.cancelled',
      booking.id,
      `the appointment of ${auditTime(settings.timezone, booking.start)}`,
      now,
    );
    if (event) {
      const cancelled = { ...event.booking, status: 'cancelled' as const, cancelledAt: now };
      await queueBookingEvent(trx, 'booking.cancelled', cancelled, event.timezone, subscribers, now);
    }
    return true;
  });
}

/**
 * A booking's answers edited in the admin area, checked with its schedule's form rules exactly as a
 * submission (InvalidInput naming the field otherwise). The time, the customer record (where mail goes:
 * edited on the customer's page) and the bookings version are untouched: no free time changes.
 */
export async function editBookingAnswers(
  db: Db,
  snapshot: Snapshot,
  detailsId: string,
  submission: Readonly<Record<string, unknown>>,
  now: number,
  actor: Actor = { kind: 'system' },
): Promise<void> {
  const booking = await findBookingDetails(db.kysely, { detailsId });
  if (!booking) throw new NotFound('Booking not found');
  const form = snapshot.schedules.get(booking.scheduleId)?.form;
  if (!form) throw new NotFound('Schedule not found (or retired)');
  const checked = validateSubmission(form, submission);
  if (!checked.ok) throw new InvalidInput(checked.message, checked.field);
  // answers to fields since removed from the form are kept: they were given, and the edit did not show them
  const names = new Set(publicFields(form).map((f) => f.name));
  const kept = Object.fromEntries(Object.entries(booking.answers).filter(([name]) => !names.has(name)));
  const changed = [...names].filter((name) => JSON.stringify(checked.answers[name]) !== JSON.stringify(booking.answers[name]));
  await db.write(async (trx) => {
    await updateBookingAnswers(trx, booking.id, { ...kept, ...checked.answers }, now);
    await recordAudit(
      trx,
      actor,
      'booking.edited',
      booking.id,
      changed.length ? `answers: ${changed.join(', ')}` : 'answers (unchanged)',
      now,
    );
  });
}
