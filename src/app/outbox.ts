// What the admin area does with the outbox: list the messages (all, by state, or one booking's), show a
// message as it would be sent, and make a waiting or given-up message due at once ("retry now").
import type { Db } from '../db/connect.js';
import { NotFound } from '../core/errors.js';
import { mailRecipient, type MessageKind, type MessageState } from '../core/messages.js';
import { findBookingId } from '../db/repos/booking.repository.js';
import {
  countMessagesByState,
  findMessage,
  listMessages as listRows,
  loadMessageRecord,
  loadMessageRecords,
  retryMessageNow,
  discardWaiting,
  type MessageFilter,
  type MessageListItem,
  type MessageRecord,
  type OutboxRow,
} from '../db/repos/outbox.repository.js';
import { manageLinks, type ManageLinks } from './manage-link.js';
import { renderMessage, type MessageSource, type RenderedMessage } from '../mail/templates.js';

export interface OutboxMessage {
  id: number;
  bookingId: number | null;
  /** the booking's details_id (its id in the admin area), or null */
  detailsId: string | null;
  kind: MessageKind;
  recipient: string;
  state: MessageState;
  /** delivery attempts made so far */
  attempts: number;
  /** when the worker will try next (queued/retrying), or when a claim ends (sending) */
  nextAttemptAt: number;
  claimedUntil: number | null;
  lastError: string | null;
  /** why a skipped message was not sent */
  skipReason: string | null;
  createdAt: number;
  sentAt: number | null;
}

const view = (r: MessageListItem): OutboxMessage => ({
  id: r.id,
  bookingId: r.booking_id,
  detailsId: r.details_id,
  kind: r.kind,
  recipient: r.recipient,
  state: r.state,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  claimedUntil: r.claimed_until,
  lastError: r.last_error,
  skipReason: r.skip_reason,
  createdAt: r.created_at,
  sentAt: r.sent_at,
});

export interface MessageQuery {
  state?: MessageState;
  /** a booking's details_id: only its messages */
  detailsId?: string;
  /** newest first; the next page starts below the last id seen */
  beforeId?: number;
  /** 1..500, default 50 */
  limit?: number;
}

/** Messages, newest first. An unknown detailsId gives an empty list. */
export async function listMessages(db: Db, query: MessageQuery = {}): Promise<OutboxMessage[]> {
  const filter: MessageFilter = { state: query.state, beforeId: query.beforeId, limit: query.limit };
  if (query.detailsId !== undefined) {
    const bookingId = await findBookingId(db.kysely, query.detailsId);
    if (bookingId === null) return [];
    filter.bookingId = bookingId;
  }
  return (await listRows(db.kysely, filter)).map(view);
}

export function countMessages(db: Db): Promise<Record<MessageState, number>> {
  return countMessagesByState(db.kysely);
}

function messageSource({ kind, settings, booking, form }: MessageRecord, links: ManageLinks | null): MessageSource {
  const { answers } = booking;
  // the names this booking was made with; the customer record may have changed since
  const answered = (name: string, fallback: string) => {
    const answer = answers[name];
    return typeof answer === 'string' && answer !== '' ? answer : fallback;
  };
  return {
    kind,
    installation: { name: settings.name, timezone: settings.timezone, notifyEmail: mailRecipient(settings.notifyEmail) ?? '' },
    booking: {
      detailsId: booking.detailsId,
      start: booking.start,
      end: booking.end,
      createdAt: booking.createdAt,
      cancelledAt: booking.cancelledAt,
      answers,
      sequence: booking.sequence,
      movedFrom: booking.movedFrom,
      cancelReason: booking.cancelReason,
    },
    manageUrl: links && booking.status === 'booked' ? links.urlFor(booking.detailsId) : null,
    scheduleName: booking.scheduleName,
    reason: { name: booking.reasonName, durationMinutes: booking.reasonDurationMinutes },
    form,
    customer: {
      firstName: answered('first_name', booking.customerFirstName),
      lastName: answered('last_name', booking.customerLastName),
      email: mailRecipient(booking.customerEmail),
    },
    contact: { phone: settings.phone, address: settings.address, website: settings.website },
  };
}

/** Everything the message is rendered from, read as it is now; null when its booking is gone. */
export async function loadMessageSource(
  db: Db,
  row: Pick<OutboxRow, 'id' | 'booking_id' | 'kind'>,
  publicUrl: string | null = null,
): Promise<MessageSource | null> {
  const record = await loadMessageRecord(db.kysely, row);
  return record ? messageSource(record, await manageLinks(db, publicUrl)) : null;
}

/** The same for several messages, read together (a booking's messages share one read): outbox id -> source. */
export async function loadMessageSources(
  db: Db,
  rows: readonly Pick<OutboxRow, 'id' | 'booking_id' | 'kind'>[],
  publicUrl: string | null = null,
): Promise<Map<number, MessageSource>> {
  const records = await loadMessageRecords(db.kysely, rows);
  const links = await manageLinks(db, publicUrl);
  return new Map([...records].map(([id, record]) => [id, messageSource(record, links)]));
}

/** A stored message as it would be sent; its `html` is a whole escaped document: the admin area serves it as a document of its own, with its own CSP, in a sandboxed iframe. */
export interface MessagePreview extends RenderedMessage {
  message: OutboxMessage;
}

/**
 * The message rendered from its booking as it is now, exactly as the worker would send it.
 * Throws NotFound for an unknown id; a message whose booking is gone has no preview (NotFound too).
 */
export async function previewMessage(db: Db, id: number, publicUrl: string | null = null): Promise<MessagePreview> {
  const row = await findMessage(db.kysely, id);
  if (!row) throw new NotFound('Message not found');
  const source = await loadMessageSource(db, row, publicUrl);
  if (!source) throw new NotFound('The booking of this message no longer exists');
  const rendered = renderMessage(source);
  return { message: view({ ...row, details_id: source.booking.detailsId }), ...rendered };
}

/**
 * "Retry now": the message becomes due at once (state back to queued, or retrying when it was tried
 * before). Returns false for a message that was sent (never sent twice) or that a worker is sending right
 * now; throws NotFound for an unknown id. A given-up message gets one more attempt; failing again, it
 * stays given up.
 */
export async function retryMessage(db: Db, id: number, now: number): Promise<boolean> {
  const retried = await retryMessageNow(db.kysely, id, now);
  if (!retried && !(await findMessage(db.kysely, id))) throw new NotFound('Message not found');
  return retried;
}

/** The operator discards a waiting message: it ends 'skipped', never sent. False when it is not waiting (sent, skipped, being sent). */
export async function discardMessage(db: Db, id: number, now: number): Promise<boolean> {
  const discarded = (await discardWaiting(db.kysely, id, now)) === 1;
  if (!discarded && !(await findMessage(db.kysely, id))) throw new NotFound('Message not found');
  return discarded;
}

/** Every waiting message (queued, retrying, given up) discarded at once; returns how many. */
export function discardAllWaiting(db: Db, now: number): Promise<number> {
  return discardWaiting(db.kysely, null, now);
}

/** Whether mail goes out now, for the banner of the Bookings page. */
export interface MailHealth {
  /** no SMTP server in SMTP_URL nor saved in the admin area */
  noServer: boolean;
  /** messages waiting to go out (queued, retrying) */
  waiting: number;
  /** messages that failed at least once and wait for a retry, or were given up */
  failing: number;
  lastError: string | null;
}

export async function mailHealth(db: Db, serverConfigured: boolean): Promise<MailHealth> {
  const counts = await countMessagesByState(db.kysely);
  const failing = counts.retrying + counts.failed;
  const lastError =
    failing > 0
      ? ((await listRows(db.kysely, { state: counts.retrying > 0 ? 'retrying' : 'failed', limit: 1 }))[0]?.last_error ?? null)
      : null;
  return { noServer: !serverConfigured, waiting: counts.queued + counts.retrying, failing, lastError };
}
