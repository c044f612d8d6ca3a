// Webhooks (docs/webhooks.md): the events, an endpoint's URL and event list as an operator gives them, the
// signing secret's format and the signature itself. Signing follows the Standard Webhooks specification
// (webhook-id / webhook-timestamp / webhook-signature: "v1,<base64 HMAC-SHA256>"), so receivers can verify
// with its libraries or with the few lines of docs/webhooks.md.
import { createHmac, randomBytes } from 'node:crypto';
import { InvalidInput } from './errors.js';
import { controlCharacterProblem } from './text.js';

/**
 * Every event a delivery can carry (docs/webhooks.md, "Events"). `booking.restored`: the office undid a
 * cancellation, the same booking stands again (not `booking.created`: a receiver keyed by booking id would see
 * a second creation of one booking).
 */
export const WEBHOOK_EVENTS = ['booking.created', 'booking.cancelled', 'booking.rescheduled', 'booking.restored'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export const isWebhookEvent = (value: string): value is WebhookEvent => (WEBHOOK_EVENTS as readonly string[]).includes(value);

/** Where a delivery is in its life. `sending`: claimed by a worker until claimed_until. */
export const DELIVERY_STATES = ['queued', 'sending', 'retrying', 'delivered', 'failed'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

export const WEBHOOK_URL_MAX_LENGTH = 2000;

/**
 * An endpoint URL: http or https, a host, no user name or password (they would be sent to the receiver and
 * shown in the admin area), no fragment (never sent), no control characters or spaces. Private and loopback
 * addresses are allowed on purpose: operators run receivers on their own network (docs/security.md).
 */
export function parseWebhookUrl(text: string, field = 'url'): string {
  const value = text.trim();
  if (value === '') throw new InvalidInput('the URL is required', field);
  if (value.length > WEBHOOK_URL_MAX_LENGTH) throw new InvalidInput(`the URL is longer than ${WEBHOOK_URL_MAX_LENGTH} characters`, field);
  if (controlCharacterProblem(text) !== null || /\s/.test(value))
    throw new InvalidInput('the URL must not contain spaces or control characters', field);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidInput('not a URL (expected https://host/path)', field);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new InvalidInput('the URL must start with https:// or http://', field);
  if (url.hostname === '') throw new InvalidInput('the URL has no host', field);
  if (url.username !== '' || url.password !== '') throw new InvalidInput('the URL must not contain a user name or password', field);
  if (url.hash !== '' || value.includes('#')) throw new InvalidInput('the URL must not contain a fragment (#…)', field);
  return url.href;
}

/** A comma-separated event list (the CLI's --events); undefined or empty means every event. Duplicates collapse. */
export function parseWebhookEvents(text: string | undefined, field = 'events'): WebhookEvent[] {
  if (text === undefined) return [...WEBHOOK_EVENTS];
  return webhookEventList(
    text
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
    field,
  );
}

/** The events of a list, in the canonical order; refuses unknown names and an empty list. */
export function webhookEventList(names: readonly string[], field = 'events'): WebhookEvent[] {
  const unknown = names.find((n) => !isWebhookEvent(n));
  if (unknown !== undefined)
    throw new InvalidInput(`unknown event ${JSON.stringify(unknown.slice(0, 60))} (known: ${WEBHOOK_EVENTS.join(', ')})`, field);
  if (names.length === 0) throw new InvalidInput(`choose at least one event (${WEBHOOK_EVENTS.join(', ')})`, field);
  return WEBHOOK_EVENTS.filter((e) => names.includes(e));
}

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** A new signing secret: "whsec_" and 32 random bytes in base64, the Standard Webhooks format. */
export const newWebhookSecret = () => `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;

/** A new event id: stable across retries and endpoints, the receiver's key for ignoring duplicates. */
export const newWebhookEventId = () => `evt_${randomBytes(16).toString('base64url')}`;

/**
 * The headers of one delivery attempt: HMAC-SHA256 with the secret's decoded bytes over
 * "<id>.<unix seconds>.<body>", base64, versioned "v1," (Standard Webhooks).
 */
export function webhookHeaders(secret: string, eventId: string, timestampSeconds: number, body: string): Record<string, string> {
  const key = Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64');
  const signature = createHmac('sha256', key).update(`${eventId}.${timestampSeconds}.${body}`).digest('base64');
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${signature}`,
  };
}
