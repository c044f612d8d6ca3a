// The outbox: notification e-mails as rows, written in the booking's own transaction (so a message exists
// exactly when its booking does) and delivered later by the outbox worker (src/app/outbox-delivery.ts).
//
// A row is due when its state is queued, retrying or sending and next_attempt_at has passed. Claiming a
// row sets state 'sending' and moves next_attempt_at (and claimed_until) to the end of the claim, so a
// claim whose worker died (killed between claim and send) simply becomes due again, on the same index
// (outbox_due: state, next_attempt_at).
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Db } from '../connect.js';
import type { Database, OutboxTable } from '../schema.js';
import {
  DISCARDABLE_STATES,
  DISCARDED_REASON,
  mailRecipient,
  MESSAGE_STATES,
  type MessageKind,
  type MessageState,
} from '../../core/messages.js';
import type { InstallationSettings } from '../../core/settings.js';
import { findBookingDetailsByIds, type BookingDetails } from './booking.repository.js';
import { loadSettings } from './installation.repository.js';

type Q = Kysely<Database>;

export type OutboxRow = Selectable<OutboxTable>;
const DUE_STATES: readonly MessageState[] = ['queued', 'retrying', 'sending'];

/** Callers pass only checked addresses (mailRecipient); anything else is a bug, not a customer error. */
export function checkRecipients(messages: readonly { kind: MessageKind; recipient: string }[]): void {
  for (const m of messages)
    if (mailRecipient(m.recipient) !== m.recipient) throw new Error(`refusing to queue mail to an invalid address (${m.kind})`);
}

/** Queues messages in the caller's transaction, so they exist exactly when the booking does; each is due at once or at its `notBefore`. */
export async function enqueueMessages(
  trx: Q,
  bookingId: number,
  messages: readonly { kind: MessageKind; recipient: string; notBefore?: number }[],
  now: number,
): Promise<void> {
  if (messages.length === 0) return;
  checkRecipients(messages);
  await trx
    .insertInto('outbox')
    .values(
      messages.map((m) => ({
        booking_id: bookingId,
        kind: m.kind,
        recipient: m.recipient,
        state: 'queued',
        attempts: 0,
        // a reminder waits for its moment: the claim takes only rows whose next_attempt_at has passed
        next_attempt_at: m.notBefore ?? now,
        created_at: now,
      })),
    )
    .execute();
}

const numeric = (row: OutboxRow): OutboxRow => ({
  ...row,
  next_attempt_at: Number(row.next_attempt_at),
  claimed_until: row.claimed_until === null ? null : Number(row.claimed_until),
  created_at: Number(row.created_at),
  sent_at: row.sent_at === null ? null : Number(row.sent_at),
});

/** A message this worker holds until `claimed_until`. */
export type ClaimedMessage = OutboxRow & { claimed_until: number };

/**
 * Claims up to `limit` due messages until `claimedUntil`. PostgreSQL: the due rows are locked with
 * FOR UPDATE SKIP LOCKED, so concurrent workers each take different rows without waiting; SQLite: the
 * write transaction (BEGIN IMMEDIATE) already admits one claimer at a time.
 */
export async function claimDueMessages(db: Db, now: number, claimedUntil: number, limit: number): Promise<ClaimedMessage[]> {
  return db.write(async (trx) => {
    let due = trx
      .selectFrom('outbox')
      .select('id')
      .where('state', 'in', DUE_STATES)
      .where('next_attempt_at', '<=', now)
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(limit);
    if (db.dialect === 'postgres') due = due.forUpdate().skipLocked();
    const rows = await trx
      .updateTable('outbox')
      .set({ state: 'sending', claimed_until: claimedUntil, next_attempt_at: claimedUntil })
      .where('id', 'in', due)
      .returningAll()
      .execute();
    return rows.map((row) => ({ ...numeric(row), claimed_until: claimedUntil })).sort((a, b) => a.id - b.id);
  });
}

/**
 * Records the SMTP server's acknowledgement of each message, in one statement (the worker gathers the
 * acceptances that arrive while the previous record is being written). Not guarded by the claim: the
 * server did accept the message, so it is sent whoever holds the row now (a claim that expired while the
 * database was away and was taken again must not lead to a second send). Only a row already recorded as
 * sent is left as it is. Returns the ids recorded now; an id missing from it was recorded before (or its
 * row is gone).
 */
export async function markSent(db: Q, sent: readonly { id: number; sentAt: number }[]): Promise<Set<number>> {
  if (sent.length === 0) return new Set();
  // each row keeps its own acceptance time; the cast gives PostgreSQL the parameter's type
  const sentAt = sql<number>`case ${sql.join(
    sent.map((s) => sql`when id = ${s.id} then cast(${s.sentAt} as bigint)`),
    sql` `,
  )} end`;
  const rows = await db
    .updateTable('outbox')
    .set({ state: 'sent', sent_at: sentAt, claimed_until: null, last_error: null, attempts: sql`attempts + 1` })
    .where(
      'id',
      'in',
      sent.map((s) => s.id),
    )
    .where('state', '<>', 'sent')
    .returning('id')
    .execute();
  return new Set(rows.map((r) => r.id));
}

/**
 * Gives a claimed message back unsent: its worker is stopping and aborted the send before the SMTP server
 * acknowledged it. It is due at once for any worker (no need to wait for the claim to expire) and the
 * aborted try is not counted as an attempt. Guarded by the claim like markSent.
 */
export async function releaseClaim(db: Q, id: number, claimedUntil: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('outbox')
    .set({ state: sql`case when attempts = 0 then 'queued' else 'retrying' end`, next_attempt_at: now, claimed_until: null })
    .where('id', '=', id)
    .where('state', '=', 'sending')
    .where('claimed_until', '=', claimedUntil)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A claimed message not sent on purpose (core/messages.ts staleMessageReason): done, with why. Guarded by the claim. */
export async function markSkipped(db: Q, id: number, claimedUntil: number, reason: string): Promise<boolean> {
  const result = await db
    .updateTable('outbox')
    .set({ state: 'skipped', skip_reason: reason, claimed_until: null })
    .where('id', '=', id)
    .where('state', '=', 'sending')
    .where('claimed_until', '=', claimedUntil)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * The operator discards waiting messages (one, or with `id` null all of them): they end 'skipped', never sent.
 * A message a worker holds right now is left alone (its claim has not expired). Returns how many.
 */
export async function discardWaiting(db: Q, id: number | null, now: number): Promise<number> {
  let query = db
    .updateTable('outbox')
    .set({ state: 'skipped', skip_reason: DISCARDED_REASON, claimed_until: null })
    .where((eb) => eb.or([eb('state', 'in', DISCARDABLE_STATES), eb.and([eb('state', '=', 'sending'), eb('claimed_until', '<=', now)])]));
  if (id !== null) query = query.where('id', '=', id);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * A booking's messages still waiting to go out (not one a worker holds right now), skipped with `reason`: what
 * the cancellation of a booking queued, once the cancellation is undone (app/booking-status.ts); with `kinds`,
 * only those (a move's old reminders, app/reschedule.ts). Returns how many.
 */
export async function skipWaitingOfBooking(
  trx: Q,
  bookingId: number,
  reason: string,
  now: number,
  kinds?: readonly MessageKind[],
): Promise<number> {
  const result = await trx
    .updateTable('outbox')
    .set({ state: 'skipped', skip_reason: reason, claimed_until: null })
    .where('booking_id', '=', bookingId)
    .$if(kinds !== undefined, (q) => q.where('kind', 'in', kinds!))
    .where((eb) =>
      eb.or([eb('state', 'in', ['queued', 'retrying']), eb.and([eb('state', '=', 'sending'), eb('claimed_until', '<=', now)])]),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function markAttemptFailed(
  db: Q,
  id: number,
  claimedUntil: number,
  failure: { error: string; retryAt: number | null },
): Promise<boolean> {
  const result = await db
    .updateTable('outbox')
    .set({
      state: failure.retryAt === null ? 'failed' : 'retrying',
      next_attempt_at: failure.retryAt ?? claimedUntil,
      claimed_until: null,
      last_error: failure.error.slice(0, 2000),
      attempts: sql`attempts + 1`,
    })
    .where('id', '=', id)
    .where('state', '=', 'sending')
    .where('claimed_until', '=', claimedUntil)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** What a message is rendered from, as stored now. */
export interface MessageRecord {
  kind: MessageKind;
  settings: InstallationSettings;
  booking: BookingDetails;
  /** the booking's schedule's form, in the operator's order */
  form: { name: string; label: string }[];
}

/**
 * What each message is rendered from, read as it is now, for several messages at once: a booking's two
 * messages (the customer's and the operator's) read it once, and the settings and each schedule's form
 * are read once for all. Outbox id -> record; a message whose booking is gone has none.
 */
export async function loadMessageRecords(
  db: Q,
  rows: readonly Pick<OutboxRow, 'id' | 'booking_id' | 'kind'>[],
): Promise<Map<number, MessageRecord>> {
  const bookingIds = [...new Set(rows.flatMap((r) => (r.booking_id === null ? [] : [r.booking_id])))];
  const bookings = new Map((await findBookingDetailsByIds(db, bookingIds)).map((b) => [b.id, b]));
  const records = new Map<number, MessageRecord>();
  if (bookings.size === 0) return records;
  const scheduleIds = [...new Set([...bookings.values()].map((b) => b.scheduleId))];
  const [settings, fields] = await Promise.all([
    loadSettings(db),
    db
      .selectFrom('form_fields')
      .select(['schedule_id', 'name', 'label'])
      .where('schedule_id', 'in', scheduleIds)
      .orderBy('schedule_id')
      .orderBy('position')
      .execute(),
  ]);
  const forms = new Map<number, { name: string; label: string }[]>(scheduleIds.map((id) => [id, []]));
  for (const f of fields) forms.get(f.schedule_id)!.push({ name: f.name, label: f.label });
  for (const row of rows) {
    const booking = row.booking_id === null ? undefined : bookings.get(row.booking_id);
    if (booking) records.set(row.id, { kind: row.kind, settings, booking, form: forms.get(booking.scheduleId)! });
  }
  return records;
}

/** Everything a message is rendered from, read as it is now; null when the booking is gone. */
export async function loadMessageRecord(db: Q, row: Pick<OutboxRow, 'id' | 'booking_id' | 'kind'>): Promise<MessageRecord | null> {
  return (await loadMessageRecords(db, [row])).get(row.id) ?? null;
}

export interface MessageFilter {
  state?: MessageState;
  bookingId?: number;
  /** newest first; page with beforeId = the last id seen */
  beforeId?: number;
  limit?: number;
}

export interface MessageListItem extends OutboxRow {
  /** the booking's details_id, or null when the message has no booking */
  details_id: string | null;
}

export async function listMessages(db: Q, filter: MessageFilter = {}): Promise<MessageListItem[]> {
  let query = db
    .selectFrom('outbox')
    .leftJoin('bookings', 'bookings.id', 'outbox.booking_id')
    .selectAll('outbox')
    .select('bookings.details_id')
    .orderBy('outbox.id', 'desc')
    .limit(Math.min(Math.max(filter.limit ?? 50, 1), 500));
  if (filter.state) query = query.where('outbox.state', '=', filter.state);
  if (filter.bookingId !== undefined) query = query.where('outbox.booking_id', '=', filter.bookingId);
  if (filter.beforeId !== undefined) query = query.where('outbox.id', '<', filter.beforeId);
  const rows = await query.execute();
  return rows.map((r) => ({ ...numeric(r), details_id: r.details_id }));
}

export async function findMessage(db: Q, id: number): Promise<OutboxRow | null> {
  const row = await db.selectFrom('outbox').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? numeric(row) : null;
}

export async function countMessagesByState(db: Q): Promise<Record<MessageState, number>> {
  const rows = await db
    .selectFrom('outbox')
    .select(['state', sql<number>`count(*)`.as('n')])
    .groupBy('state')
    .execute();
  const counts = Object.fromEntries(MESSAGE_STATES.map((s) => [s, 0])) as Record<MessageState, number>;
  for (const r of rows) counts[r.state] = Number(r.n);
  return counts;
}

/**
 * Makes a message due now. Not for a sent message (it must never go twice) nor one a worker holds right
 * now (its claim has not expired). Returns false when the message is not in a state that can be retried.
 */
export async function retryMessageNow(trx: Q, id: number, now: number): Promise<boolean> {
  const result = await trx
    .updateTable('outbox')
    .set({ state: sql`case when attempts = 0 then 'queued' else 'retrying' end`, next_attempt_at: now, claimed_until: null })
    .where('id', '=', id)
    .where((eb) =>
      eb.or([eb('state', 'in', ['queued', 'retrying', 'failed']), eb.and([eb('state', '=', 'sending'), eb('claimed_until', '<=', now)])]),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Messages addressed to a customer: to one of their addresses, or to anyone but the office about their bookings. */
function customerMessages(db: Q, customerId: number, emailKey: string | null) {
  return db
    .selectFrom('outbox')
    .where((eb) =>
      eb.or([
        ...(emailKey === null ? [] : [eb(eb.fn('lower', ['recipient']), '=', emailKey)]),
        eb.and([
          eb('kind', '<>', 'booking_notification'),
          eb('booking_id', 'in', eb.selectFrom('bookings').select('bookings.id').where('bookings.customer_id', '=', customerId)),
        ]),
      ]),
    );
}

/** What a customer's data export lists of the mail sent or queued to them (no bodies: they are rendered when sent). */
export async function listCustomerMessages(db: Q, customerId: number, emailKey: string | null) {
  const rows = await customerMessages(db, customerId, emailKey)
    .select(['id', 'booking_id', 'kind', 'recipient', 'state', 'created_at', 'sent_at'])
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ ...r, created_at: Number(r.created_at), sent_at: r.sent_at === null ? null : Number(r.sent_at) }));
}

/** Erasure: the messages addressed to the customer go, sent or not. Returns how many. */
export async function deleteCustomerMessages(trx: Q, customerId: number, emailKey: string | null): Promise<number> {
  const ids = (await customerMessages(trx, customerId, emailKey).select('id').execute()).map((r) => r.id);
  if (ids.length === 0) return 0;
  const result = await trx.deleteFrom('outbox').where('id', 'in', ids).executeTakeFirst();
  return Number(result.numDeletedRows);
}
