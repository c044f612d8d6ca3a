import type { Kysely } from 'kysely';
import type { DialectName } from '../connect.js';
import { columnTypes } from './columns.js';

// Webhooks (docs/webhooks.md). `webhook_endpoints`: where events go, with the signing secret kept as it is,
// because an HMAC is computed with the secret itself (docs/security.md, "Webhooks"). `webhook_deliveries`:
// the outbox of events, one row per (event, endpoint), written in the transaction of the change. The body is
// stored as sent, so every retry and a resend carry the same bytes and the same event id. booking_id is not a
// foreign key: a delivery is history and outlives a booking deleted with its schedule.
export function webhooks(dialect: DialectName) {
  const { id, instant, idColumn } = columnTypes(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('webhook_endpoints')
        .addColumn('id', id, idColumn)
        .addColumn('url', 'varchar(2000)', (c) => c.notNull())
        .addColumn('events', 'text', (c) => c.notNull())
        .addColumn('secret', 'varchar(100)', (c) => c.notNull())
        .addColumn('secret_shown', 'integer', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('created_at', instant, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', id, idColumn)
        .addColumn('endpoint_id', 'integer', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
        .addColumn('event_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('event_type', 'varchar(64)', (c) => c.notNull())
        .addColumn('booking_id', 'integer')
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('state', 'varchar(16)', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('next_attempt_at', instant, (c) => c.notNull())
        .addColumn('claimed_until', instant)
        .addColumn('last_status', 'integer')
        .addColumn('last_error', 'text')
        .addColumn('created_at', instant, (c) => c.notNull())
        .addColumn('queued_at', instant, (c) => c.notNull())
        .addColumn('delivered_at', instant)
        .execute();
      // the worker's poll
      await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['state', 'next_attempt_at']).execute();
      // the order per booking and endpoint (an earlier delivery still open holds back the later ones)
      await db.schema
        .createIndex('webhook_deliveries_chain')
        .on('webhook_deliveries')
        .columns(['booking_id', 'endpoint_id', 'id'])
        .execute();
      // an endpoint's recent deliveries in the admin area
      await db.schema.createIndex('webhook_deliveries_endpoint').on('webhook_deliveries').columns(['endpoint_id', 'id']).execute();
    },
  };
}
