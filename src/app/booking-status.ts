// What the office records about a booking after the fact (docs/admin.md, "Statuses"): whether the customer
// came (completed, no-show) and undoing a cancellation while the time is still free. One entry point per
// write, each one transaction, so whatever else a write must record (an audit trail) is added in one place.
import type { Db } from '../db/connect.js';
import {
  bumpBookingsVersion,
  findBookingDetails,
  markBookingAttendance,
  markBookingRestored,
  type BookingDetails,
} from '../db/repos/booking.repository.js';
import { enqueueMessages, skipWaitingOfBooking } from '../db/repos/outbox.repository.js';
import { mailRecipient, reminderDueTimes, type MessageKind } from '../core/messages.js';
import type { Attendance } from '../core/bookings.js';
import { Conflict, NotFound } from '../core/errors.js';
import { MINUTE_MS, formatLocalDateTime } from '../core/time/calendar.js';
import type { Snapshot } from './snapshot.js';
import { availabilityContext, freeSlotAt } from './availability.js';
import { queueBookingEvent } from './webhooks.js';
import { recordAudit, type Actor } from './audit.js';

const NOT_BEGUN = 'This appointment has not begun yet: it can be marked completed or no-show from its start time.';
const CANCELLED = 'A cancelled booking cannot be marked completed or no-show.';

/**
 * Marks whether the customer came (`null` clears the mark). Only a booked appointment that has begun: a future
 * or a cancelled one is refused (Conflict, with why). The status stays 'booked', so the time stays taken.
 */
export async function markAttendance(
  db: Db,
  detailsId: string,
  attendance: Attendance | null,
  now: number,
  actor: Actor = { kind: 'system' },
): Promise<void> {
  const booking = await findBookingDetails(db.kysely, { detailsId });
  if (!booking) throw new NotFound('Booking not found');
  const refusal = (b: BookingDetails) => (b.status !== 'booked' ? CANCELLED : b.start > now ? NOT_BEGUN : null);
  const before = refusal(booking);
  if (before) throw new Conflict(before);
  await db.write(async (trx) => {
    if (await markBookingAttendance(trx, booking.id, attendance, now)) {
      const action = attendance === 'completed' ? 'booking.completed' : attendance === 'no_show' ? 'booking.no_show' : 'booking.edited';
      await recordAudit(trx, actor, action, booking.id, attendance === null ? 'attendance mark cleared' : '', now);
      return;
    }
    // cancelled in the meantime
    const current = await findBookingDetails(trx, { id: booking.id });
    throw current ? new Conflict(refusal(current) ?? CANCELLED) : new NotFound('Booking not found');
  });
}

const REASON_RETIRED = 'Its reason is retired: restore the reason first, or book the customer anew.';

export type RestoreOutcome = 'restored' | 'unchanged';

/** Why a cancelled booking cannot be booked again, as far as can be told without the schedule's lock; null: it may be. */
export function restoreRefusal(snapshot: Snapshot, booking: BookingDetails, now: number): string | null {
  if (booking.start <= now) return "The appointment's time has passed: a cancellation can be undone only before it.";
  const schedule = snapshot.schedules.get(booking.scheduleId);
  if (!schedule) return 'Its schedule is retired: restore the schedule first, or book the customer anew.';
  if (!schedule.reasons.has(booking.reasonId)) return REASON_RETIRED;
  return null;
}

const TAKEN =
  'The time is no longer free (booked meanwhile, closed, outside the hours, or inside the minimum notice): the cancellation cannot be undone. Book the customer at another time.';

/**
 * Undoes a cancellation: the same booking is booked again at its time, in one transaction under the schedule's
 * lock (the bookings version bump, `changed_in` written) that re-checks the time exactly as POST /bookings does
 * (capacity, buffers, hours, closures, notice, horizon; the booking's own length), so it can never double-book.
 * Refused (Conflict, with why) when the time has passed or is taken, or the schedule or reason is retired.
 * The customer is e-mailed a confirmation again (SEQUENCE past the cancellation's) with the schedule's
 * reminders, the office a notification as of a new booking; what the cancellation queued and is still waiting
 * (its mail, the office's notice, the old reminders) is skipped. Webhooks: `booking.restored`. 'unchanged'
 * when it is booked already (a second submission).
 */
export async function restoreBooking(
  db: Db,
  snapshot: Snapshot,
  detailsId: string,
  now: number,
  actor: Actor = { kind: 'system' },
): Promise<RestoreOutcome> {
  const before = await findBookingDetails(db.kysely, { detailsId });
  if (!before) throw new NotFound('Booking not found');
  if (before.status === 'booked') return 'unchanged';
  const refused = restoreRefusal(snapshot, before, now);
  if (refused) throw new Conflict(refused);
  const schedule = snapshot.schedules.get(before.scheduleId)!;
  const reason = schedule.reasons.get(before.reasonId)!;
  // the booking's own length, as it was booked (the reason's duration may have changed since)
  const ctx = { ...availabilityContext(snapshot, schedule, reason, now), durationMinutes: (before.end - before.start) / MINUTE_MS };
  const zone = ctx.zone;
  const slotText = formatLocalDateTime(zone.localDayOf(before.start), zone.localMinuteOf(before.start));
  return db.write(async (trx) => {
    // the booking lands on the schedule again like a new one: not once it is retired
    const changedIn = await bumpBookingsVersion(trx, schedule.id, { inService: true });
    const current = await findBookingDetails(trx, { id: before.id });
    if (!current || changedIn === null) throw new NotFound('Booking not found');
    if (current.status === 'booked') return 'unchanged';
    const slot = await freeSlotAt(trx, schedule, ctx, slotText).catch((error: unknown) => {
      throw error instanceof NotFound ? new Conflict(TAKEN) : error;
    });
    if (slot.start !== current.start) throw new Conflict(TAKEN);
    // the snapshot may predate the reason's retirement, committed while this waited for the lock
    if (!(await markBookingRestored(trx, current.id, changedIn))) throw new Conflict(REASON_RETIRED);
    await recordAudit(trx, actor, 'booking.restored', current.id, '', now);
    await skipWaitingOfBooking(trx, current.id, 'the cancellation was undone: a new confirmation replaces it', now);
    const messages: { kind: MessageKind; recipient: string; notBefore?: number }[] = [];
    const customer = mailRecipient(current.customerEmail);
    const office = mailRecipient(snapshot.settings.notifyEmail);
    if (customer) {
      messages.push({ kind: 'booking_confirmation', recipient: customer });
      for (const due of reminderDueTimes(current.start, schedule.reminderMinutesBefore, now))
        messages.push({ kind: 'booking_reminder', recipient: customer, notBefore: due });
    }
    if (office) messages.push({ kind: 'booking_notification', recipient: office });
    await enqueueMessages(trx, current.id, messages, now);
    const subscribers = snapshot.webhooks.get('booking.restored') ?? [];
    if (subscribers.length > 0) {
      const restored: BookingDetails = {
        ...current,
        status: 'booked',
        cancelledAt: null,
        cancelledBy: null,
        cancelReason: null,
        sequence: current.sequence + 1,
      };
      await queueBookingEvent(trx, 'booking.restored', restored, snapshot.settings.timezone, subscribers, now);
    }
    return 'restored';
  });
}
