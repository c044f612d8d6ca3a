// The notification e-mails a booking sends (queued in the outbox with the booking, rendered and sent later).
import { isEmailAddress } from './forms/form-fields.js';

export type MessageKind =
  | 'booking_confirmation'
  | 'booking_notification'
  | 'booking_cancellation'
  /** to the office: a cancellation by the office or through the API's operator (admin area) */
  | 'booking_cancellation_notification'
  /** to the customer, due some minutes before the start (docs/reminders.md) */
  | 'booking_reminder'
  /** to the customer: their move through the manage link, with the updated .ics */
  | 'booking_moved'
  /** to the office: the customer cancelled through the manage link */
  | 'customer_cancelled_notice'
  /** to the office: the customer moved the appointment through the manage link */
  | 'customer_moved_notice';

/**
 * Where a message is in its delivery: due (queued, retrying), claimed by a worker (sending), or done (sent;
 * failed: given up; skipped: not sent on purpose, its moment had passed or the operator discarded it).
 */
export type MessageState = 'queued' | 'sending' | 'retrying' | 'sent' | 'failed' | 'skipped';
export const MESSAGE_STATES: readonly MessageState[] = ['queued', 'sending', 'retrying', 'sent', 'failed', 'skipped'];

/** The states a waiting message is in: the operator may discard it. */
export const DISCARDABLE_STATES: readonly MessageState[] = ['queued', 'retrying', 'failed'];

export const DISCARDED_REASON = 'discarded by the operator';

/** The booking a message is about, as it is when the message is about to go out. */
export interface BookingMoment {
  readonly cancelled: boolean;
  /** instants (ms) of the appointment */
  readonly start: number;
  readonly end: number;
}

/**
 * Whether a message still makes sense to send now, or why not (docs/mail.md "Stale messages"). A message
 * can wait long (no SMTP server set, a server failing for hours); sent late, a confirmation of an
 * appointment already cancelled or begun, or a cancellation of one already past, only confuses the customer.
 * - confirmation (to the customer): only while the booking stands and has not started;
 * - cancellation (to the customer): only while the booking is cancelled (the office may undo a cancellation:
 *   then the customer gets a new confirmation instead) and the appointment's start is still ahead;
 * - notification (to the office): only while the booking stands and the appointment has not ended (the
 *   office's own record; the booking list keeps every booking anyway);
 * - cancellation notice (to the office): only while the booking is cancelled and the appointment has not
 *   ended (after that the freed time is of no use to the office).
 * - reminder (to the customer, due some minutes before the start): only while the booking stands and has
 *   not started; one that could not go out before the start (the worker was down) is dropped.
 * - moved (to the customer): as a confirmation: a later move or a cancellation sends its own message;
 * - the office's notices of the customer's cancellation or move: while the appointment (as it is now) has
 *   not ended, as the notification (the moved notice only while the booking stands, the cancelled notice
 *   only while it is cancelled).
 */
export function staleMessageReason(kind: MessageKind, booking: BookingMoment, now: number): string | null {
  switch (kind) {
    case 'booking_confirmation':
      if (booking.cancelled) return 'the booking was cancelled before the confirmation went out';
      if (booking.start <= now) return 'the appointment had begun before the confirmation went out';
      return null;
    case 'booking_cancellation':
      if (!booking.cancelled) return 'the cancellation was undone before it went out';
      if (booking.start <= now) return "the appointment's time had passed before the cancellation went out";
      return null;
    case 'booking_notification':
      if (booking.cancelled) return 'the booking was cancelled before the notification went out';
      if (booking.end <= now) return 'the appointment was over before the notification went out';
      return null;
    case 'booking_cancellation_notification':
      if (!booking.cancelled) return 'the cancellation was undone before the notice went out';
      if (booking.end <= now) return 'the appointment was over before the cancellation notice went out';
      return null;
    case 'booking_reminder':
      if (booking.cancelled) return 'the booking was cancelled before the reminder was due';
      if (booking.start <= now) return 'the appointment had begun before the reminder went out';
      return null;
    case 'booking_moved':
      if (booking.cancelled) return 'the booking was cancelled before the confirmation of its move went out';
      if (booking.start <= now) return 'the appointment had begun before the confirmation of its move went out';
      return null;
    case 'customer_cancelled_notice':
      if (!booking.cancelled) return 'the cancellation was undone before the notice went out';
      if (booking.end <= now) return "the appointment's time was over before the notice went out";
      return null;
    case 'customer_moved_notice':
      if (booking.cancelled) return 'the booking was cancelled before the notice of its move went out';
      if (booking.end <= now) return 'the appointment was over before the notice went out';
      return null;
  }
}

/**
 * The reminders to queue for a booking made at `now`: one per configured lead time whose due moment is still
 * ahead. A reminder due before the booking was made (booked an hour ahead: no 24-hour reminder) is not
 * queued at all. Due moments are instants, so a DST change between the reminder and the appointment does
 * not move it.
 */
export function reminderDueTimes(start: number, minutesBefore: readonly number[], now: number): number[] {
  return minutesBefore.map((minutes) => start - minutes * 60_000).filter((due) => due > now);
}

/** The address to queue a message to, or null when there is none we could deliver to. */
export function mailRecipient(value: string | null | undefined): string | null {
  if (typeof value !== 'string') return null;
  const address = value.trim();
  return isEmailAddress(address) ? address : null;
}
