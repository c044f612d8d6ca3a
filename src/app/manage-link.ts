// The manage link (docs/manage-link.md): a customer cancels or moves their own appointment from a link in
// their mail, without an account. The link is `<PUBLIC_URL>/manage/<details id>.<signature>`: the signature is
// an HMAC-SHA256 under a server secret (stored once in the settings table, shared by every instance), so a
// link can be recomputed when a mail is rendered (the outbox renders late) and cannot be forged from a
// reference a customer read out on the phone. It works while the booking stands and has not started.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/connect.js';
import {
  bookedTimes,
  bumpBookingsVersion,
  findBookingDetails,
  findCancelCutoffMinutes,
  markBookingCancelled,
  moveBookingTo,
  type BookingDetails,
} from '../db/repos/booking.repository.js';
import { bumpConfigVersion, findOrCreateSetting } from '../db/repos/installation.repository.js';
import { enqueueMessages } from '../db/repos/outbox.repository.js';
import { mailRecipient, type MessageKind } from '../core/messages.js';
import { InvalidInput, NotFound } from '../core/errors.js';
import { bookingWindow, firstFreeStarts, freeDaysOf, freeSlotsOn, relevantBookingStarts } from '../core/availability/free-slots.js';
import { MINUTE_MS, formatDate, formatLocalDateTime, parseDate } from '../core/time/calendar.js';
import type { Snapshot } from './snapshot.js';
import { availabilityContext, freeSlotAt } from './availability.js';
import { queueBookingEvent } from './webhooks.js';
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

/** Thrown when the cut-off has passed between showing the page and submitting it. */
export class InsideCutoff extends Error {}

function officeRecipient(snapshot: Snapshot): string | null {
  return mailRecipient(snapshot.settings.notifyEmail);
}

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
    const messages: { kind: MessageKind; recipient: string }[] = [];
    const customer = mailRecipient(current.customerEmail);
    const office = officeRecipient(snapshot);
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

export interface FreeTimes {
  /** 'YYYY-MM-DD' of the days with a free time for this booking's schedule and reason */
  days: string[];
}

/** The schedule and reason of a booking, as the engine needs them; NotFound when either was retired. */
function bookingRules(snapshot: Snapshot, booking: BookingDetails, now: number) {
  const schedule = snapshot.schedules.get(booking.scheduleId);
  const reason = schedule?.reasons.get(booking.reasonId);
  if (!schedule || !reason) throw new NotFound('This appointment cannot be moved here');
  return { schedule, reason, ctx: availabilityContext(snapshot, schedule, reason, now) };
}

/**
 * The days with a free time to move this booking to: the engine and rules of /days (notice, horizon,
 * capacity, buffers), against the schedule's other bookings: the booking's own span does not block its
 * move (moving by 15 minutes within it works). Uncached: a page view, not the API's hot path.
 */
export async function freeDaysToMove(db: Db, snapshot: Snapshot, booking: BookingDetails, now: number): Promise<string[]> {
  const { schedule, ctx } = bookingRules(snapshot, booking, now);
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
): Promise<{ slot: string; start: number }[] | null> {
  const day = parseDate(dayText);
  if (day === null) return null;
  const { schedule, ctx } = bookingRules(snapshot, booking, now);
  const { from, to } = relevantBookingStarts(ctx, day, day);
  const others = await bookedTimes(db.kysely, schedule.id, from, to, booking.id);
  const slots = freeSlotsOn(ctx, day, others);
  return slots && slots.map((s) => ({ slot: formatLocalDateTime(s.day, s.minute), start: s.start }));
}

export type RescheduleOutcome = 'moved' | 'unchanged';

/**
 * Moves a booked appointment to another free time of the same schedule and reason, in one transaction that
 * locks the schedule like POST /bookings (the bookings version bump) and re-checks the new time against the
 * other bookings there, so two moves (or a move and a booking) to the last place give one success; the other
 * gets NotFound('Time not available'). The customer gets the updated .ics (SEQUENCE raised), the office a
 * notice, webhooks `booking.rescheduled`. `by`: the manage link applies the schedule's cut-off; the admin
 * area may move at any time. 'unchanged' when the booking already is at that time (a second submission).
 */
export async function rescheduleBooking(
  db: Db,
  snapshot: Snapshot,
  bookingId: number,
  slotText: string,
  now: number,
  by: 'customer' | 'office',
): Promise<RescheduleOutcome> {
  const before = await findBookingDetails(db.kysely, { id: bookingId });
  if (!before || before.status !== 'booked') throw new NotFound('Booking not found');
  const { schedule, reason, ctx } = bookingRules(snapshot, before, now);
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
    if (slot.start === current.start) return 'unchanged';
    const end = slot.start + reason.durationMinutes * MINUTE_MS;
    await moveBookingTo(trx, current.id, { start: current.start, end: current.end }, { start: slot.start, end }, changedIn);
    // A cached /days answer is brought up to date from the rows changed since it (bookings.changed_in), and a
    // moved row tells only its new time (and the last time it left): the days it left could be missed. A
    // move is rare, so it renews every answer instead: the config version (app/answer-cache.ts).
    await bumpConfigVersion(trx);
    const messages: { kind: MessageKind; recipient: string }[] = [];
    const customer = mailRecipient(current.customerEmail);
    const office = officeRecipient(snapshot);
    if (customer) messages.push({ kind: 'booking_moved', recipient: customer });
    if (office && by === 'customer') messages.push({ kind: 'customer_moved_notice', recipient: office });
    await enqueueMessages(trx, current.id, messages, now);
    const subscribers = snapshot.webhooks.get('booking.rescheduled') ?? [];
    if (subscribers.length > 0) {
      const moved = {
        ...current,
        start: slot.start,
        end,
        sequence: current.sequence + 1,
        movedFrom: { start: current.start, end: current.end },
      };
      await queueBookingEvent(trx, 'booking.rescheduled', moved, snapshot.settings.timezone, subscribers, now);
    }
    return 'moved';
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
