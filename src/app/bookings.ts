// Creating a booking (docs/decisions.md §5): the slot is re-checked inside the transaction that stores it,
// under a lock on the schedule, so concurrent requests for the last place give exactly one booking.
// The customer record and the notification e-mails (outbox rows) are written in the same transaction.
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/connect.js';
import {
  bookedTimes,
  bumpBookingsVersion,
  findBookedForCancel,
  findBookingDetails,
  markBookingCancelled,
  updateBookingAnswers,
  type BookingDetails,
} from '../db/repos/booking.repository.js';
import {
  bookingsSeen,
  storeBookingIfUnchanged,
  storeBookingLocked,
  type BookingToStore,
  type StoredBooking,
} from '../db/repos/booking-store.repository.js';
import { customerVisibleTo, findCustomerIdByEmail } from '../db/repos/customer.repository.js';
import { loadSettings } from '../db/repos/installation.repository.js';
import { enqueueMessages } from '../db/repos/outbox.repository.js';
import { mailRecipient, reminderDueTimes, type MessageKind } from '../core/messages.js';
import type { BookingSource, StaffOverride } from '../core/bookings.js';
import { InvalidInput, NotFound } from '../core/errors.js';
import { answerText, validateSubmission, publicFields, type Answer, type FormField } from '../core/forms/form-fields.js';
import { MINUTE_MS } from '../core/time/calendar.js';
import type { Snapshot } from './snapshot.js';
import type { OnCreated } from './form-tokens.js';
import { availabilityContext, findReason, findSchedule, freeSlotAmong, requestedTime } from './availability.js';
import type { FreeSlot } from '../core/availability/free-slots.js';
import { bookingForEvent, queueBookingEvent, subscribedWebhookEndpoints } from './webhooks.js';
import { API_ACTOR, auditEvent, auditTime, recordAudit, type Actor } from './audit.js';

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

  const at = requestedTime(ctx, request.slot);
  const actor = request.actor ?? (request.source === 'api' ? API_ACTOR : { kind: 'system' });
  const detailsId = newDetailsId();
  const toStore = (slot: FreeSlot, updateCustomer = true): BookingToStore => {
    const messages: BookingToStore['messages'][number][] = [];
    // staff booking by hand may choose not to e-mail the customer: then no confirmation and no reminders
    if (customerRecipient && request.emailCustomer !== false) {
      messages.push({ kind: 'booking_confirmation', recipient: customerRecipient });
      // the schedule's reminders as they are now (a later change applies to later bookings: docs/reminders.md)
      for (const due of reminderDueTimes(slot.start, schedule.reminderMinutesBefore, now))
        messages.push({ kind: 'booking_reminder', recipient: customerRecipient, notBefore: due });
    }
    if (operator) messages.push({ kind: 'booking_notification', recipient: operator });
    return {
      customer: {
        email,
        firstName: answerText(answers, 'first_name'),
        lastName: answerText(answers, 'last_name'),
        phone: answerText(answers, 'phone'),
      },
      updateCustomer,
      booking: {
        detailsId,
        scheduleId: schedule.id,
        reasonId: reason.id,
        start: slot.start,
        end: slot.start + reason.durationMinutes * MINUTE_MS,
        source: request.source,
        answers,
        createdAt: now,
        overrides,
      },
      messages,
      // no customer data in the trail: erasing a customer (GDPR) leaves nothing of them here
      audit: auditEvent(actor, 'booking.created', `${reason.name}, ${request.slot.slice(0, 16)}`, now),
    };
  };
  const createdOf = ({ bookingId, customer }: StoredBooking, slot: FreeSlot): BookingCreated => ({
    bookingId,
    detailsId,
    customerId: customer.id,
    start: slot.start,
    end: slot.start + reason.durationMinutes * MINUTE_MS,
  });
  // the subscribers as of the request's snapshot (none: no webhook work at all)
  const subscribers = snapshot.webhooks.get('booking.created') ?? [];

  // PostgreSQL, nothing to write beyond the booking itself: checked against the bookings read outside the
  // lock, and stored by one statement that takes the lock only if none of the bookings that matter changed
  // meanwhile, so the schedule's lock is held for no round trip at all (issue 13). Else the locked
  // transaction below, which also tells a retirement since the snapshot (the statement stores nothing on a
  // retired schedule or reason: a retirement takes the lock too) from a booking changed meanwhile.
  // (Staff booking by hand, whose customer match may not update details, always take the locked path.)
  const lockFree =
    db.dialect === 'postgres' && subscribers.length === 0 && !onCreated && !request.visibleSchedules && !clashedLately(schedule.id, now);
  if (lockFree) {
    const seen = await bookingsSeen(db.kysely, schedule.id, reason.id, at.from, at.to);
    if (seen.version === null) throw new NotFound('Schedule not found');
    if (!seen.reasonInService) throw new NotFound('Reason not found');
    const slot = freeSlotAmong(ctx, at, seen.booked);
    const stored = await storeBookingIfUnchanged(db.kysely, toStore(slot), seen);
    if (stored) return createdOf(stored, slot);
    lastClashAt.set(schedule.id, now);
  }

  return db.write(async (trx) => {
    // the bump is the lock: bookings of one schedule wait here for each other (PostgreSQL's row lock;
    // SQLite's write lock is already held). The customer is saved after it, as the statement above does:
    // one order of locks, so two bookings of one customer cannot deadlock. A retirement takes the lock too:
    // a schedule retired since the snapshot (or while this waited) is not found, and so is a reason.
    const changedIn = await bumpBookingsVersion(trx, schedule.id, { inService: true });
    if (changedIn === null) throw new NotFound('Schedule not found');
    const slot = freeSlotAmong(ctx, at, await bookedTimes(trx, schedule.id, at.from, at.to));
    const store = toStore(slot, await mayUpdateCustomer(trx, email, request.visibleSchedules));
    const stored = await storeBookingLocked(trx, db.dialect, store, changedIn, now);
    if (!stored) throw new NotFound('Reason not found');
    const { customer } = stored;
    if (subscribers.length > 0) {
      const booking: BookingDetails = {
        id: stored.bookingId,
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
        end: store.booking.end,
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
    const created = createdOf(stored, slot);
    await onCreated?.(trx, created);
    return created;
  });
}

/**
 * When a schedule's lock-free store last found a booking committed meanwhile. While one schedule's bookings
 * come that densely (many at once on one day), a lock-free try is mostly refused and its read wasted: for a
 * second after a refusal its bookings take the locked transaction at once (measured on PostgreSQL, 20
 * connections booking one schedule: 271 req/s with three tries, 367 with one, against 509 locked only).
 */
const lastClashAt = new Map<number, number>();
const CLASH_BACKOFF_MS = 1000;
const clashedLately = (scheduleId: number, now: number) => now - (lastClashAt.get(scheduleId) ?? -Infinity) < CLASH_BACKOFF_MS;

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
