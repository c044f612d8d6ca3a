// The notification e-mails a booking sends (queued in the outbox with the booking, rendered and sent later).
import { isEmailAddress } from './forms/form-fields.js';

export type MessageKind = 'booking_confirmation' | 'booking_notification' | 'booking_cancellation';

/** Where a message is in its delivery: due (queued, retrying), claimed by a worker (sending), or done (sent, failed: given up). */
export type MessageState = 'queued' | 'sending' | 'retrying' | 'sent' | 'failed';
export const MESSAGE_STATES: readonly MessageState[] = ['queued', 'sending', 'retrying', 'sent', 'failed'];

/** The address to queue a message to, or null when there is none we could deliver to. */
export function mailRecipient(value: string | null | undefined): string | null {
  if (typeof value !== 'string') return null;
  const address = value.trim();
  return isEmailAddress(address) ? address : null;
}
