import type { Kysely } from 'kysely';
import type { DialectName } from '../connect.js';
import { columnTypes } from './columns.js';

// Failed admin sign-ins, one row per failure and key, so that every instance on this database counts the
// same failures (a throttle kept in process memory gave N instances N times the attempts). Rows older than
// the throttle's window are deleted by the throttle itself, so the table stays small.
export function signInFailures(dialect: DialectName) {
  const { id, instant, idColumn } = columnTypes(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('sign_in_failures')
        .addColumn('id', id, idColumn)
        // 'email:' or 'ip:' and the SHA-256 of the lower-cased e-mail or the client address (never a password)
        .addColumn('key', 'varchar(64)', (c) => c.notNull())
        .addColumn('failed_at', instant, (c) => c.notNull())
        .execute();
      // the check reads one key's recent failures; the expiry deletes by age
      await db.schema.createIndex('sign_in_failures_key').on('sign_in_failures').columns(['key', 'failed_at']).execute();
      await db.schema.createIndex('sign_in_failures_age').on('sign_in_failures').column('failed_at').execute();
    },
  };
}
