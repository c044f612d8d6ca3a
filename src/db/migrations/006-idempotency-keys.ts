import type { Kysely } from 'kysely';
import type { DialectName } from '../connect.js';
import { columnTypes } from './columns.js';

// Idempotency keys of POST /bookings (docs/api-integration.md): one row per key the installation's clients
// sent, claimed before the booking is tried (the primary key makes one request its owner, across processes
// and instances) and completed with the answer, which retries replay. `status` null: still in progress.
export function idempotencyKeys(dialect: DialectName) {
  const { instant } = columnTypes(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('idempotency_keys')
        .addColumn('key', 'varchar(255)', (c) => c.primaryKey())
        .addColumn('request_hash', 'varchar(64)', (c) => c.notNull())
        // a random id of the request that holds the claim: only it completes or releases the row
        .addColumn('claim', 'varchar(32)', (c) => c.notNull())
        .addColumn('status', 'integer')
        .addColumn('body', 'text')
        .addColumn('started_at', instant, (c) => c.notNull())
        .addColumn('expires_at', instant, (c) => c.notNull())
        .execute();
      // the opportunistic purge of expired keys
      await db.schema.createIndex('idempotency_keys_expiry').on('idempotency_keys').column('expires_at').execute();
    },
  };
}
