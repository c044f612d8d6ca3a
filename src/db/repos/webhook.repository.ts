// Webhook endpoints and their deliveries (docs/webhooks.md). Deliveries are an outbox like the mail's: rows
// written in the transaction of the change, claimed by a worker in any process with a short claim, and
// recorded. What differs: a delivery is only claimable while no earlier delivery of the same booking to the
// same endpoint is still open, so a receiver sees a booking's events in the order they happened.
import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from '../connect.js';
import type { Database, WebhookDeliveriesTable, WebhookEndpointsTable } from '../schema.js';
import type { DeliveryState, WebhookEvent } from '../../core/webhooks.js';

type Q = Kysely<Database>;

/** States in which a delivery still has to reach its endpoint. */
const OPEN_STATES: readonly DeliveryState[] = ['queued', 'retrying', 'sending'];

export interface WebhookEndpoint {
  id: number;
  url: string;
  events: WebhookEvent[];
  enabled: boolean;
  createdAt: number;
}

const endpointOf = (r: Omit<Selectable<WebhookEndpointsTable>, 'secret' | 'secret_shown'>): WebhookEndpoint => ({
  id: r.id,
  url: r.url,
  events: JSON.parse(r.events) as WebhookEvent[],
  enabled: r.enabled === 1,
  createdAt: Number(r.created_at),
});

const ENDPOINT_COLUMNS = ['id', 'url', 'events', 'enabled', 'created_at'] as const;

export async function insertEndpoint(
  trx: Q,
  e: { url: string; events: readonly WebhookEvent[]; secret: string; secretShown: boolean; createdAt: number },
): Promise<number> {
  const row = await trx
    .insertInto('webhook_endpoints')
    .values({
      url: e.url,
      events: JSON.stringify(e.events),
      secret: e.secret,
      secret_shown: e.secretShown ? 1 : 0,
      enabled: 1,
      created_at: e.createdAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function listEndpoints(db: Q): Promise<WebhookEndpoint[]> {
  return (await db.selectFrom('webhook_endpoints').select(ENDPOINT_COLUMNS).orderBy('id').execute()).map(endpointOf);
}

export async function findEndpoint(db: Q, id: number): Promise<WebhookEndpoint | null> {
  const row = await db.selectFrom('webhook_endpoints').select(ENDPOINT_COLUMNS).where('id', '=', id).executeTakeFirst();
  return row ? endpointOf(row) : null;
}

/** Deletes the endpoint and (cascade) its deliveries; false when there was none. */
export async function deleteEndpoint(db: Q, id: number): Promise<boolean> {
  const result = await db.deleteFrom('webhook_endpoints').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export async function setEndpointEnabled(db: Q, id: number, enabled: boolean): Promise<boolean> {
  const result = await db
    .updateTable('webhook_endpoints')
    .set({ enabled: enabled ? 1 : 0 })
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The secret, the first time it is asked for; null ever after (one statement, so two pages cannot both get it). */
export async function takeSecretToShow(db: Q, id: number): Promise<string | null> {
  const row = await db
    .updateTable('webhook_endpoints')
    .set({ secret_shown: 1 })
    .where('id', '=', id)
    .where('secret_shown', '=', 0)
    .returning('secret')
    .executeTakeFirst();
  return row?.secret ?? null;
}

/** The enabled endpoints by event they are subscribed to (the per-process snapshot keeps this). */
export async function loadSubscriptions(db: Q): Promise<Map<WebhookEvent, number[]>> {
  const rows = await db.selectFrom('webhook_endpoints').select(['id', 'events']).where('enabled', '=', 1).orderBy('id').execute();
  const byEvent = new Map<WebhookEvent, number[]>();
  for (const r of rows)
    for (const event of JSON.parse(r.events) as WebhookEvent[]) {
      const ids = byEvent.get(event) ?? [];
      ids.push(r.id);
      byEvent.set(event, ids);
    }
  return byEvent;
}

/** The enabled endpoints subscribed to `event` now, in the caller's transaction. */
export async function subscribedEndpointIds(trx: Q, event: WebhookEvent): Promise<number[]> {
  return (await loadSubscriptions(trx)).get(event) ?? [];
}

/**
 * One queued delivery per endpoint, in the caller's transaction (the outbox). One statement: the ids come
 * from a snapshot of the configuration, so only those still there and enabled get one (an endpoint removed
 * meanwhile must not fail the booking on its foreign key).
 */
export async function enqueueDeliveries(
  trx: Q,
  event: { id: string; type: WebhookEvent; bookingId: number | null; body: string },
  endpointIds: readonly number[],
  now: number,
): Promise<void> {
  if (endpointIds.length === 0) return;
  await trx
    .insertInto('webhook_deliveries')
    .columns([
      'endpoint_id',
      'event_id',
      'event_type',
      'booking_id',
      'body',
      'state',
      'attempts',
      'next_attempt_at',
      'created_at',
      'queued_at',
    ])
    .expression((eb) =>
      eb
        .selectFrom('webhook_endpoints')
        .select([
          'id',
          sql<string>`cast(${event.id} as text)`.as('event_id'),
          sql<string>`cast(${event.type} as text)`.as('event_type'),
          sql<number | null>`cast(${event.bookingId} as bigint)`.as('booking_id'),
          sql<string>`cast(${event.body} as text)`.as('body'),
          sql<string>`'queued'`.as('state'),
          sql<number>`0`.as('attempts'),
          sql<number>`cast(${now} as bigint)`.as('next_attempt_at'),
          sql<number>`cast(${now} as bigint)`.as('created_at'),
          sql<number>`cast(${now} as bigint)`.as('queued_at'),
        ])
        .where('id', 'in', endpointIds)
        .where('enabled', '=', 1)
        .orderBy('id'),
    )
    .execute();
}

export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

const numeric = (r: DeliveryRow): DeliveryRow => ({
  ...r,
  next_attempt_at: Number(r.next_attempt_at),
  claimed_until: r.claimed_until === null ? null : Number(r.claimed_until),
  created_at: Number(r.created_at),
  queued_at: Number(r.queued_at),
  delivered_at: r.delivered_at === null ? null : Number(r.delivered_at),
});

/** A claimed delivery with what the worker needs to send it. */
export type ClaimedDelivery = DeliveryRow & { claimed_until: number; url: string; secret: string };

/**
 * Writes `outcomes` (recordOutcomes: the worker's attempts that ended since its last write) and then claims
 * due deliveries, in one transaction, so a worker with a backlog pays one write per round of its lanes.
 * Claims until `claimedUntil`: open, due, of an enabled endpoint, and first in line (no earlier
 * open delivery of the same booking to the same endpoint), at most `room(endpointId)` per endpoint and
 * `total` in all, so that one slow endpoint cannot take every lane of a worker. PostgreSQL: FOR UPDATE SKIP
 * LOCKED, so concurrent workers take different rows without waiting; an earlier delivery another worker is
 * claiming right now still counts as open (the subquery reads committed rows), so its successor is not taken.
 * SQLite: the write transaction (BEGIN IMMEDIATE) admits one claimer at a time.
 */
export async function claimDueDeliveries(
  db: Db,
  now: number,
  claimedUntil: number,
  slots: { total: number; room: (endpointId: number) => number },
  outcomes: readonly DeliveryOutcome[] = [],
): Promise<{ claimed: ClaimedDelivery[]; recorded: Set<number> }> {
  return db.write(async (trx) => {
    // first: a delivery recorded here no longer holds back the next one of its booking
    const recorded = await recordOutcomes(trx, outcomes);
    const endpoints = await trx
      .selectFrom('webhook_endpoints')
      .select(['id', 'url', 'secret'])
      .where('enabled', '=', 1)
      .orderBy('id')
      .execute();
    const claimed: ClaimedDelivery[] = [];
    // one endpoint after another (an installation has a handful): each gets at most its room
    for (const endpoint of endpoints) {
      const limit = Math.min(slots.room(endpoint.id), slots.total - claimed.length);
      if (limit <= 0) continue;
      let due = trx
        .selectFrom('webhook_deliveries as d')
        .select('d.id')
        .where('d.endpoint_id', '=', endpoint.id)
        .where('d.state', 'in', OPEN_STATES)
        .where('d.next_attempt_at', '<=', now)
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('webhook_deliveries as p')
                .select(sql`1`.as('one'))
                .whereRef('p.booking_id', '=', 'd.booking_id')
                .whereRef('p.endpoint_id', '=', 'd.endpoint_id')
                .whereRef('p.id', '<', 'd.id')
                .where('p.state', 'in', OPEN_STATES),
            ),
          ),
        )
        .orderBy('d.next_attempt_at')
        .orderBy('d.id')
        .limit(limit);
      if (db.dialect === 'postgres') due = due.forUpdate().skipLocked();
      const rows = await trx
        .updateTable('webhook_deliveries')
        .set({ state: 'sending', claimed_until: claimedUntil, next_attempt_at: claimedUntil })
        .where('id', 'in', due)
        .returningAll()
        .execute();
      for (const r of rows) claimed.push({ ...numeric(r), claimed_until: claimedUntil, url: endpoint.url, secret: endpoint.secret });
    }
    return { claimed: claimed.sort((a, b) => a.id - b.id), recorded };
  });
}

/**
 * The outcome of one attempt: a 2xx (`error` null) is delivered; otherwise the attempt failed and is retried
 * at `retryAt`, or 'failed' when that is null.
 */
export interface DeliveryOutcome {
  id: number;
  /** the claim the attempt was made under */
  claimedUntil: number;
  status: number | null;
  error: string | null;
  retryAt: number | null;
  /** when the answer (or the failure) came */
  at: number;
}

/**
 * Records several attempts' outcomes in one statement (a group commit: outcomes arriving together cost one
 * write), each row with its own values. A delivered one is not guarded by the claim (the receiver did get
 * it, whoever holds the row now) but is not recorded twice; a failed one only while its claim holds.
 * Returns the ids recorded.
 */
export async function recordOutcomes(db: Q, outcomes: readonly DeliveryOutcome[]): Promise<Set<number>> {
  if (outcomes.length === 0) return new Set();
  // per row: CASE id WHEN … THEN …; the casts give PostgreSQL each parameter's type
  const perRow = (then: (o: DeliveryOutcome) => RawBuilder<unknown>) =>
    sql<never>`case id ${sql.join(
      outcomes.map((o) => sql`when ${o.id} then ${then(o)}`),
      sql` `,
    )} end`;
  const typed = (value: unknown, type: 'bigint' | 'integer' | 'text') => sql`cast(${value} as ${sql.raw(type)})`;
  const delivered = (o: DeliveryOutcome) => o.error === null;
  const rows = await db
    .updateTable('webhook_deliveries')
    .set({
      state: perRow((o) => typed(delivered(o) ? 'delivered' : o.retryAt === null ? 'failed' : 'retrying', 'text')),
      // a delivered row keeps its own (it is never due again); a failed one is due at its retry
      next_attempt_at: perRow((o) => (delivered(o) ? sql.ref('next_attempt_at') : typed(o.retryAt ?? o.claimedUntil, 'bigint'))),
      delivered_at: perRow((o) => (delivered(o) ? typed(o.at, 'bigint') : sql.ref('delivered_at'))),
      claimed_until: null,
      last_status: perRow((o) => typed(o.status, 'integer')),
      last_error: perRow((o) => typed(o.error?.slice(0, 2000) ?? null, 'text')),
      attempts: sql`attempts + 1`,
    })
    .where((eb) =>
      eb.or(
        outcomes.map((o) =>
          delivered(o)
            ? eb.and([eb('id', '=', o.id), eb('state', '<>', 'delivered')])
            : eb.and([eb('id', '=', o.id), eb('state', '=', 'sending'), eb('claimed_until', '=', o.claimedUntil)]),
        ),
      ),
    )
    .returning('id')
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** Gives back a claimed delivery whose attempt was aborted by a stopping worker: due at once, not counted. */
export async function releaseDelivery(db: Q, id: number, claimedUntil: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ state: sql`case when attempts = 0 then 'queued' else 'retrying' end`, next_attempt_at: now, claimed_until: null })
    .where('id', '=', id)
    .where('state', '=', 'sending')
    .where('claimed_until', '=', claimedUntil)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** An endpoint's most recent deliveries, newest first. */
export async function listDeliveries(db: Q, endpointId: number, limit = 50): Promise<DeliveryRow[]> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('endpoint_id', '=', endpointId)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map(numeric);
}

export async function findDelivery(db: Q, id: number): Promise<DeliveryRow | null> {
  const row = await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? numeric(row) : null;
}

/**
 * Makes a delivery due now, with the same event id and body, and a fresh retry period: after a success too
 * (the operator asks for it again), but not while a worker holds it (its claim has not expired).
 */
export async function resendDelivery(db: Q, id: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ state: 'queued', next_attempt_at: now, claimed_until: null, queued_at: now })
    .where('id', '=', id)
    .where((eb) =>
      eb.or([
        eb('state', 'in', ['queued', 'retrying', 'failed', 'delivered']),
        eb.and([eb('state', '=', 'sending'), eb('claimed_until', '<=', now)]),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Erasure: the bodies of the deliveries about the customer's bookings are replaced by a note (event and id
 * stay, for the log); those still waiting are given up, since a receiver would get no booking in them.
 */
export async function scrubCustomerDeliveries(trx: Q, customerId: number): Promise<number> {
  const ofCustomer = trx.selectFrom('bookings').select('bookings.id').where('bookings.customer_id', '=', customerId);
  const body = JSON.stringify({ erased: 'the personal data of this delivery was erased on request' });
  await trx
    .updateTable('webhook_deliveries')
    .set({ state: 'failed', claimed_until: null, last_error: 'personal data erased on request' })
    .where('booking_id', 'in', ofCustomer)
    .where('state', 'in', ['queued', 'retrying', 'sending'])
    .execute();
  const result = await trx.updateTable('webhook_deliveries').set({ body }).where('booking_id', 'in', ofCustomer).executeTakeFirst();
  return Number(result.numUpdatedRows);
}
