// The manage link (docs/manage-link.md): a customer cancels or moves their own appointment from a link in
// their mail, without an account. The link is `<PUBLIC_URL>/manage/<details id>.<signature>`: the signature is
// an HMAC-SHA256 under a server secret (stored once in the settings table, shared by every instance), so a
// link can be recomputed when a mail is rendered (the outbox renders late) and cannot be forged from a
// reference a customer read out on the phone. It works while the booking stands and has not started.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/connect.js';
import {
  bumpBookingsVersion,
  findBookingDetails,
  findCancelCutoffMinutes,
  markBookingCancelled,
  type BookingDetails,
} from '../db/repos/booking.repository.js';
import { findOrCreateSetting } from '../db/repos/installation.repository.js';
import { InsideCutoff } from './reschedule.js';
import { enqueueMessages } from '../db/repos/outbox.repository.js';
import { mailRecipient, type MessageKind } from '../core/messages.js';
import { InvalidInput } from '../core/errors.js';
import { MINUTE_MS } from '../core/time/calendar.js';
import type { Snapshot } from './snapshot.js';
import { queueBookingEvent } from './webhooks.js';
import { CUSTOMER_ACTOR, auditTime, recordAudit } from './audit.js';
import { MemoryRateLimitStore, checkRate, type RateDecision, type RateLimitStore } from '../rate-limit/rate-limiter.js';

const SECRET_KEY = 'manage.link_secret';
/** 32 base64url characters: 192 bits of the HMAC */
const SIGNATURE_LENGTH = 32;
/** the longest reason a customer may give when cancelling */
export const MAX_CANCEL_REASON = 1000;

const secrets = new WeakMap<Db, Promise<Buffer>>();

/** The installation's signing secret for manage links: made by the first instance that needs it, then shared. */
function linkSecret(db: Db): Promise<Buffer> {
  let found = secrets.get(db);
  if (!found) {
    found = findOrCreateSetting(db.kysely, SECRET_KEY, randomBytes(32).toString('base64url')).then((v) =>
      Buffer.from(String(v), 'base64url'),
    );
    found.catch(() => secrets.delete(db));
    secrets.set(db, found);
  }
  return found;
}

const sign = (secret: Buffer, purpose: string, detailsId: string) =>
  createHmac('sha256', secret).update(`${purpose}\0${detailsId}`).digest('base64url').slice(0, SIGNATURE_LENGTH);

const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** Makes manage links; null when the installation has no public address (PUBLIC_URL), so mails carry none. */
export interface ManageLinks {
  urlFor(detailsId: string): string;
}

export async function manageLinks(db: Db, publicUrl: string | null): Promise<ManageLinks | null> {
  if (!publicUrl) return null;
  const secret = await linkSecret(db);
  const base = publicUrl.replace(/\/+$/, '');
  return { urlFor: (detailsId) => `${base}/manage/${detailsId}.${sign(secret, 'manage-link', detailsId)}` };
}

/** The token part of a booking's link (tests and the admin area). */
export async function manageToken(db: Db, detailsId: string): Promise<string> {
  return `${detailsId}.${sign(await linkSecret(db), 'manage-link', detailsId)}`;
}

/** A manage page, as the customer may see it: only their booking's facts. */
export interface ManageView {
  token: string;
  booking: BookingDetails;
  /** the customer may still cancel or move by themselves (outside the schedule's cut-off) */
  canChange: boolean;
  cutoffMinutes: number;
  /** the form token of this page's forms (CSRF), bound to the booking */
  formToken: string;
}

/**
 * The booking a token names, while the link works; null for everything else alike (malformed, forged,
 * unknown, cancelled, started), so the page cannot tell anyone more than "not valid".
 */
export async function openManageLink(db: Db, token: string, now: number): Promise<ManageView | null> {
  const dot = token.lastIndexOf('.');
  if (dot <= 0 || token.length > 200) return null;
  const detailsId = token.slice(0, dot);
  const secret = await linkSecret(db);
  if (!sameText(token.slice(dot + 1), sign(secret, 'manage-link', detailsId))) return null;
  const booking = await findBookingDetails(db.kysely, { detailsId });
  if (!booking || booking.status !== 'booked' || booking.start <= now) return null;
  const cutoffMinutes = await findCancelCutoffMinutes(db.kysely, booking.scheduleId);
  return {
    token,
    booking,
    cutoffMinutes,
    canChange: now < booking.start - cutoffMinutes * MINUTE_MS,
    formToken: sign(secret, 'manage-form', detailsId),
  };
}

/** Whether a submitted form token is this page's (constant time). */
export function isFormToken(view: ManageView, submitted: unknown): boolean {
  return typeof submitted === 'string' && sameText(submitted, view.formToken);
}

// a move serves the manage link and the admin area alike: it lives in reschedule.ts, re-exported for the manage page
export { InsideCutoff, freeDaysToMove, freeTimesToMove, rescheduleBooking, type RescheduleOutcome } from './reschedule.js';

/**
 * The customer cancels through the link: the booking is cancelled with their reason, the time is free on the
 * next request, the customer gets METHOD:CANCEL, the office a notice, webhooks `booking.cancelled`; all in one
 * transaction under the schedule's lock. False when it was not booked any more (a second submission): harmless.
 */
export async function cancelByCustomer(db: Db, snapshot: Snapshot, view: ManageView, reasonText: string, now: number): Promise<boolean> {
  const reason = reasonText.trim();
  if (reason.length > MAX_CANCEL_REASON) throw new InvalidInput(`the reason must have at most ${MAX_CANCEL_REASON} characters`, 'reason');
  return db.write(async (trx) => {
    const changedIn = await bumpBookingsVersion(trx, view.booking.scheduleId);
    const current = await findBookingDetails(trx, { id: view.booking.id });
    if (!current || current.status !== 'booked' || changedIn === null) return false;
    const cutoff = await findCancelCutoffMinutes(trx, current.scheduleId);
    if (now >= current.start - cutoff * MINUTE_MS) throw new InsideCutoff();
    await markBookingCancelled(trx, current.id, now, changedIn, { who: 'customer', reason: reason || null });
    // the customer's reason stays on the booking (erased with their data), not in the trail
    const when = `the appointment of ${auditTime(snapshot.settings.timezone, current.start)}`;
    await recordAudit(trx, CUSTOMER_ACTOR, 'booking.cancelled', current.id, when, now);
    const messages: { kind: MessageKind; recipient: string }[] = [];
    const customer = mailRecipient(current.customerEmail);
    const office = mailRecipient(snapshot.settings.notifyEmail);
    if (customer) messages.push({ kind: 'booking_cancellation', recipient: customer });
    if (office) messages.push({ kind: 'customer_cancelled_notice', recipient: office });
    await enqueueMessages(trx, current.id, messages, now);
    const subscribers = snapshot.webhooks.get('booking.cancelled') ?? [];
    if (subscribers.length > 0) {
      const cancelled = {
        ...current,
        status: 'cancelled' as const,
        cancelledAt: now,
        cancelReason: reason || null,
        cancelledBy: 'customer' as const,
      };
      await queueBookingEvent(trx, 'booking.cancelled', cancelled, snapshot.settings.timezone, subscribers, now);
    }
    return true;
  });
}

/** The wall-clock texts the page shows, as the mails show them. */
export { localTimes } from '../mail/templates.js';

/**
 * The manage page's limit per client address: in the API's store when it is shared (Redis, across
 * instances), else in this process. Its keys have their own prefix, so they never count against a token.
 */
export function manageRateLimit(
  store: RateLimitStore | undefined,
  perMinute: number,
): (address: string, now: number) => Promise<RateDecision> {
  const counts = store ?? new MemoryRateLimitStore();
  return (address, now) => checkRate(counts, `manage:${address}`, perMinute, now);
}
