import type { Kysely } from 'kysely';
import type { DialectName } from '../connect.js';
import { columnTypes } from './columns.js';

// Server-side admin sessions (docs/security.md, "The admin area"): one row per signed-in browser, keyed by the SHA-256
// of the random session id its cookie carries. Sign-out deletes the row; a password change and
// `booking admin reset-password` delete all of the admin's rows. Every instance on the database sees the same rows.
export function adminSessions(dialect: DialectName) {
  const { instant } = columnTypes(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('admin_sessions')
        .addColumn('id_hash', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('admin_id', 'integer', (c) => c.notNull().references('admins.id').onDelete('cascade'))
        .addColumn('created_at', instant, (c) => c.notNull())
        .addColumn('last_seen_at', instant, (c) => c.notNull())
        .addColumn('expires_at', instant, (c) => c.notNull())
        .execute();
      // ending all of an admin's sessions, and the sweep of expired ones
      await db.schema.createIndex('admin_sessions_admin').on('admin_sessions').column('admin_id').execute();
      await db.schema.createIndex('admin_sessions_expiry').on('admin_sessions').column('expires_at').execute();
    },
  };
}
