// A receiver's check of a webhook from the booking server (Standard Webhooks signature, docs/webhooks.md).
// This file is quoted whole in docs/webhooks.md, and the webhook tests verify every delivery with it.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** How far the webhook-timestamp may be from the receiver's clock: older requests are replays. */
const TOLERANCE_SECONDS = 5 * 60;

export interface BookingEvent {
  id: string;
  type: 'booking.created' | 'booking.cancelled' | 'booking.rescheduled' | 'booking.restored';
  created_at: string;
  data: { booking: Record<string, unknown> };
}

/**
 * Returns the event when the request is genuine and fresh; throws otherwise. `rawBody` must be the body's
 * exact bytes as received (before any JSON parsing), `headers` with lower-case names (as node:http gives them).
 */
export function verifyWebhook(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  rawBody: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): BookingEvent {
  const header = (name: string): string => {
    const value = headers[name];
    if (typeof value !== 'string' || value === '') throw new Error(`missing ${name} header`);
    return value;
  };
  const id = header('webhook-id');
  const timestamp = header('webhook-timestamp');
  const signatures = header('webhook-signature');
  if (!/^[0-9]{1,12}$/.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > TOLERANCE_SECONDS)
    throw new Error('timestamp outside the tolerance: a replay, or a wrong clock');
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${rawBody}`).digest();
  // the header may carry several space-separated signatures (e.g. while a secret is rotated)
  const valid = signatures.split(' ').some((entry) => {
    const [version, value] = entry.split(',');
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!valid) throw new Error('invalid signature');
  const event = JSON.parse(rawBody) as BookingEvent;
  if (event.id !== id) throw new Error('webhook-id does not match the event');
  return event;
}
