// Moving a booking to another free time (docs/manage-link.md, docs/admin.md "Reschedule"): the customer through
// the manage link (same reason, the schedule's cut-off) and the office in the admin area (optionally another
// reason of the same schedule, at any time before the start). Same booking, same customer, same answers; the
// customer is e-mailed the change (the updated .ics: same UID, higher SEQUENCE), not a cancellation and a new one.
import type { Db } from '../db/connect.js';
import {
  bookedTimes,
  bumpBookingsVersion,
  findBookingDetails,
  findCancelCutoffMinutes,
  moveBookingTo,
  type BookingDetails,
} from '../db/repos/booking.repository.js';
import { bumpConfigVersion } from '../db/repos/installation.repository.js';
import { enqueueMessages, skipWaitingOfBooking } from '../db/repos/outbox.repository.js';
import { mailRecipient, reminderDueTimes, type MessageKind } from '../core/messages.js';
import { NotFound } from '../core/errors.js';
import { bookingWindow, firstFreeStarts, freeDaysOf, freeSlotsOn, relevantBookingStarts } from '../core/availability/free-slots.js';
import { MINUTE_MS, formatDate, formatLocalDateTime, parseDate } from '../core/time/calendar.js';
import type { Snapshot } from './snapshot.js';
import { availabilityContext, freeSlotAt } from './availability.js';
import { queueBookingEvent } from './webhooks.js';
import { CUSTOMER_ACTOR, auditTime, recordAudit, type Actor } from './audit.js';

/** Thrown when the manage link's cut-off has passed between showing the page and submitting it. */
export class InsideCutoff extends Error {}

/**
 * The schedule and reason a booking moves within, as the engine needs them: its own reason, or `reasonId` (one
 * of the same schedule's reasons in service); NotFound when the schedule or that reason was retired.
 */
function moveRules(snapshot: Snapshot, booking: BookingDetails, now: number, reasonId = booking.reasonId) {
  const schedule = snapshot.schedules.get(booking.scheduleId);
  const reason = schedule?.reasons.get(reasonId);
  if (!schedule || !reason) throw new NotFound('This appointment cannot be moved here');
  return { schedule, reason, ctx: availabilityContext(snapshot, schedule, reason, now) };
}

/**
 * The days with a free time to move this booking to (for `reasonId`, by default its own): the engine and rules
 * of /days (notice, horizon, capacity, buffers), against the schedule's other bookings: the booking's own span
 * does not block its move (moving by 15 minutes within it works). Uncached: a page view, not the API's hot path.
 */
export async function freeDaysToMove(
  db: Db,
  snapshot: Snapshot,
  booking: BookingDetails,
  now: number,
  reasonId?: number,
): Promise<string[]> {
  const { schedule, ctx } = moveRules(snapshot, booking, now, reasonId);
  const window = bookingWindow(ctx);
  const { from, to } = relevantBookingStarts(ctx, window.firstDay, window.lastDay);
  const others = await bookedTimes(db.kysely, schedule.id, from, to, booking.id);
  const starts = firstFreeStarts(ctx, others, window.firstDay, window.lastDay);
  return freeDaysOf(ctx, window.firstDay, starts).days.map(formatDate);
}

/** The free times of one day to move this booking to ('YYYY-MM-DD HH:MM:SS'), or null for a day outside the window. */
export async function freeTimesToMove(
  db: Db,
  snapshot: Snapshot,
  booking: BookingDetails,
  dayText: string,
  now: number,
  reasonId?: number,
): Promise<{ slot: string; start: number }[] | null> {
  const day = parseDate(dayText);
  if (day === null) return null;
  const { schedule, ctx } = moveRules(snapshot, booking, now, reasonId);
  const { from, to } = relevantBookingStarts(ctx, day, day);
  const others = await bookedTimes(db.kysely, schedule.id, from, to, booking.id);
  const slots = freeSlotsOn(ctx, day, others);
  return slots && slots.map((s) => ({ slot: formatLocalDateTime(s.day, s.minute), start: s.start }));
}

export type RescheduleOutcome = 'moved' | 'unchanged';

/**
 * Moves a booked appointment to another free time of the same schedule, in one transaction that locks the
 * schedule like POST /bookings (the bookings version bump) and re-checks the new time against the other
 * bookings there with every rule a customer's booking meets (no staff overrides: docs/admin.md), so two moves
 * (or a move and a booking) to the last place give one success; the other gets NotFound('Time not available').
 * `reasonId` (the office only): another reason of the schedule, whose duration and rules the new time is
 * checked with; the booking's reason changes in the same transaction. The customer gets the updated .ics
 * (SEQUENCE raised), the office a notice of the customer's move, webhooks `booking.rescheduled`. `by`: the
 * manage link applies the schedule's cut-off; the admin area may move at any time before the start.
 * 'unchanged' when the booking already is at that time with that reason (a second submission).
 */
export async function rescheduleBooking(
  db: Db,
  snapshot: Snapshot,
  bookingId: number,
  slotText: string,
  now: number,
  by: 'customer' | 'office',
  reasonId?: number,
  /** who moves it, for the audit trail; default: the customer when `by` is 'customer', else the system */
  actor: Actor = by === 'customer' ? CUSTOMER_ACTOR : { kind: 'system' },
): Promise<RescheduleOutcome> {
  const before = await findBookingDetails(db.kysely, { id: bookingId });
  if (!before || before.status !== 'booked') throw new NotFound('Booking not found');
  if (by === 'customer' && reasonId !== undefined && reasonId !== before.reasonId)
    throw new NotFound('This appointment cannot be moved here');
  const { schedule, reason, ctx } = moveRules(snapshot, before, now, reasonId);
  return db.write(async (trx) => {
    // the new time lands on the schedule like a booking: not once it is retired
    const changedIn = await bumpBookingsVersion(trx, schedule.id, { inService: true });
    const current = await findBookingDetails(trx, { id: bookingId });
    if (!current || current.status !== 'booked' || changedIn === null) throw new NotFound('Booking not found');
    if (by === 'customer') {
      const cutoff = await findCancelCutoffMinutes(trx, current.scheduleId);
      if (now >= current.start - cutoff * MINUTE_MS) throw new InsideCutoff();
    }
    const slot = await freeSlotAt(trx, schedule, ctx, slotText, current.id);
    if (slot.start === current.start && reason.id === current.reasonId) return 'unchanged';
    const end = slot.start + reason.durationMinutes * MINUTE_MS;
    const reasonChanged = reason.id !== current.reasonId;
    const moved = await moveBookingTo(
      trx,
      current.id,
      { start: current.start, end: current.end },
      { start: slot.start, end, ...(reasonChanged ? { reasonId: reason.id } : {}) },
      changedIn,
    );
    // the snapshot may predate the reason's retirement, committed while this waited for the lock
    if (!moved) throw new NotFound('This appointment cannot be moved here: the reason is retired');
    // A cached /days answer is brought up to date from the rows changed since it (bookings.changed_in), and a
    // moved row tells only its new time (and the last time it left): the days it left could be missed. A
    // move is rare, so it renews every answer instead: the config version (app/answer-cache.ts).
    await bumpConfigVersion(trx);
    const zoneName = snapshot.settings.timezone;
    const moveText = `from ${auditTime(zoneName, current.start)} to ${auditTime(zoneName, slot.start)}${reasonChanged ? `, now ${reason.name}` : ''}`;
    await recordAudit(trx, actor, 'booking.rescheduled', current.id, moveText, now);
    // reminders still waiting were due before the old time: they are due again before the new one
    await skipWaitingOfBooking(trx, current.id, 'the booking was moved: reminders are due before its new time', now, ['booking_reminder']);
    const messages: { kind: MessageKind; recipient: string; notBefore?: number }[] = [];
    const customer = mailRecipient(current.customerEmail);
    const office = mailRecipient(snapshot.settings.notifyEmail);
    if (customer) {
      messages.push({ kind: 'booking_moved', recipient: customer });
      for (const due of reminderDueTimes(slot.start, schedule.reminderMinutesBefore, now))
        messages.push({ kind: 'booking_reminder', recipient: customer, notBefore: due });
    }
    if (office && by === 'customer') messages.push({ kind: 'customer_moved_notice', recipient: office });
    await enqueueMessages(trx, current.id, messages, now);
    const subscribers = snapshot.webhooks.get('booking.rescheduled') ?? [];
    if (subscribers.length > 0) {
      const moved: BookingDetails = {
        ...current,
        reasonId: reason.id,
        reasonName: reason.name,
        reasonDurationMinutes: reason.durationMinutes,
        start: slot.start,
        end,
        sequence: current.sequence + 1,
        movedFrom: { start: current.start, end: current.end },
        overrides: [],
      };
      await queueBookingEvent(trx, 'booking.rescheduled', moved, snapshot.settings.timezone, subscribers, now);
    }
    return 'moved';
  });
}
