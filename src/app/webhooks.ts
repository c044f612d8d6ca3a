// Webhooks as the operator manages them (CLI and admin area), and the events a booking's change queues in its
// own transaction (docs/webhooks.md). Delivery is src/app/webhook-delivery.ts.
import type { Db } from '../db/connect.js';
import type { OnCreated } from './form-tokens.js';
import { findBookingDetails, type BookingDetails } from '../db/repos/booking.repository.js';
import { bumpConfigVersion, loadSettings } from '../db/repos/installation.repository.js';
import {
  deleteEndpoint,
  enqueueDeliveries,
  findDelivery,
  findEndpoint,
  insertEndpoint,
  listDeliveries,
  listEndpoints,
  resendDelivery,
  setEndpointEnabled,
  subscribedEndpointIds,
  takeSecretToShow,
  type DeliveryRow,
  type WebhookEndpoint,
} from '../db/repos/webhook.repository.js';
import { NotFound } from '../core/errors.js';
import { formatLocalDateTime } from '../core/time/calendar.js';
import { TimeZone } from '../core/time/zone.js';
import { newWebhookEventId, newWebhookSecret, parseWebhookUrl, type WebhookEvent } from '../core/webhooks.js';

export type { WebhookEndpoint } from '../db/repos/webhook.repository.js';

export interface NewWebhookEndpoint extends WebhookEndpoint {
  /** shown once: the CLI prints it, the admin area shows it on the page after adding */
  secret: string;
}

/**
 * Adds an endpoint with a fresh secret. `secretShown`: the caller shows the secret now (the CLI); otherwise
 * the admin area shows it once on the page it redirects to (takeWebhookSecret).
 */
export async function addWebhookEndpoint(
  db: Db,
  input: { url: string; events: readonly WebhookEvent[] },
  now: number,
  secretShown: boolean,
  onCreated?: OnCreated<number>,
): Promise<NewWebhookEndpoint> {
  const url = parseWebhookUrl(input.url);
  const secret = newWebhookSecret();
  const id = await db.write(async (trx) => {
    // the per-process snapshots hold the subscriptions: the very next booking in every process sees the endpoint
    await bumpConfigVersion(trx);
    const created = await insertEndpoint(trx, { url, events: input.events, secret, secretShown, createdAt: now });
    await onCreated?.(trx, created);
    return created;
  });
  return { id, url, events: [...input.events], enabled: true, createdAt: now, secret };
}

export const listWebhookEndpoints = (db: Db) => listEndpoints(db.kysely);

export async function findWebhookEndpoint(db: Db, id: number): Promise<WebhookEndpoint> {
  const endpoint = await findEndpoint(db.kysely, id);
  if (!endpoint) throw new NotFound(`No webhook endpoint ${id}`);
  return endpoint;
}

/** Applies `change` (false: no such endpoint) and bumps the config version with it, as adding does. */
async function changeEndpoint(db: Db, id: number, change: (trx: Db['kysely']) => Promise<boolean>): Promise<void> {
  const changed = await db.write(async (trx) => {
    if (!(await change(trx))) return false;
    await bumpConfigVersion(trx);
    return true;
  });
  if (!changed) throw new NotFound(`No webhook endpoint ${id}`);
}

/** Removes the endpoint and its deliveries (those still waiting are dropped). */
export async function removeWebhookEndpoint(db: Db, id: number): Promise<void> {
  await changeEndpoint(db, id, (trx) => deleteEndpoint(trx, id));
}

/** A disabled endpoint gets no new events; what was queued for it waits until it is enabled again. */
export async function setWebhookEnabled(db: Db, id: number, enabled: boolean): Promise<void> {
  await changeEndpoint(db, id, (trx) => setEndpointEnabled(trx, id, enabled));
}

/** The secret of an endpoint just added in the admin area, the first time only; null after that. */
export const takeWebhookSecret = (db: Db, id: number) => db.write((trx) => takeSecretToShow(trx, id));

export const webhookDeliveries = (db: Db, endpointId: number, limit = 50): Promise<DeliveryRow[]> =>
  listDeliveries(db.kysely, endpointId, limit);

/** Sends a delivery again with the same event id and body; NotFound when there is none (or a worker holds it now). */
export async function resendWebhookDelivery(db: Db, id: number, now: number): Promise<DeliveryRow> {
  const delivery = await findDelivery(db.kysely, id);
  if (!delivery || !(await db.write((trx) => resendDelivery(trx, id, now))))
    throw new NotFound('No such delivery, or it is being sent right now');
  return delivery;
}

/** The booking as every event carries it (docs/webhooks.md, "Payload"). */
export function bookingPayload(b: BookingDetails, timezone: string): Record<string, unknown> {
  const zone = TimeZone.find(timezone);
  const local = (instant: number) => (zone ? formatLocalDateTime(zone.localDayOf(instant), zone.localMinuteOf(instant)) : null);
  const iso = (instant: number | null) => (instant === null ? null : new Date(instant).toISOString());
  return {
    booking_id: b.id,
    booking_details_id: b.detailsId,
    status: b.status,
    source: b.source,
    schedule: { id: b.scheduleId, name: b.scheduleName },
    reason: { id: b.reasonId, name: b.reasonName, duration_minutes: b.reasonDurationMinutes },
    start: iso(b.start),
    end: iso(b.end),
    timezone,
    start_local: local(b.start),
    end_local: local(b.end),
    customer: {
      id: b.customerId,
      first_name: b.customerFirstName,
      last_name: b.customerLastName,
      email: b.customerEmail,
      phone: b.customerPhone,
    },
    submission: b.answers,
    created_at: iso(b.createdAt),
    cancelled_at: iso(b.cancelledAt),
  };
}

/**
 * Queues `type` for the booking to `endpointIds` (those subscribed to it; from the snapshot, or
 * subscribedWebhookEndpoints read before the schedule's lock), in the caller's transaction (the outbox): the
 * deliveries exist exactly when the change does, and the booking waits for nothing but one insert. The
 * payload is built from `booking` as the change left it, so nothing is read under the lock. Without
 * endpoints it does nothing.
 */
export async function queueBookingEvent(
  trx: Db['kysely'],
  type: WebhookEvent,
  booking: BookingDetails,
  timezone: string,
  endpointIds: readonly number[],
  now: number,
): Promise<void> {
  if (endpointIds.length === 0) return;
  const id = newWebhookEventId();
  const body = JSON.stringify({
    id,
    type,
    created_at: new Date(now).toISOString(),
    data: { booking: bookingPayload(booking, timezone) },
  });
  await enqueueDeliveries(trx, { id, type, bookingId: booking.id, body }, endpointIds, now);
}

/** The endpoints subscribed to `type` now, for a change made without a snapshot at hand (read it before the schedule's lock). */
export const subscribedWebhookEndpoints = (trx: Db['kysely'], type: WebhookEvent) => subscribedEndpointIds(trx, type);

/**
 * For a change whose booking is easier read than built (a cancellation, a move): the booking as stored and
 * the installation's zone, read before the schedule's lock; the caller applies its change to it.
 */
export async function bookingForEvent(trx: Db['kysely'], bookingId: number): Promise<{ booking: BookingDetails; timezone: string }> {
  const [booking, settings] = await Promise.all([findBookingDetails(trx, { id: bookingId }), loadSettings(trx)]);
  if (!booking) throw new Error(`booking ${bookingId} vanished inside its own transaction`);
  return { booking, timezone: settings.timezone };
}
