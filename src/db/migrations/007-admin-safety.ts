import type { Kysely } from 'kysely';
import type { DialectName } from '../connect.js';
import { columnTypes } from './columns.js';

// The admin area's safety nets (issue 11, docs/admin.md):
// - retired schedules and reasons: hidden from the API and from new bookings, their bookings kept;
// - used one-time form tokens, so a form submitted twice creates nothing twice, on every instance;
// - a new API token held on the session row until the page that shows it once is opened;
// - why a message was not sent (state 'skipped': its moment had passed, or the operator discarded it).
export function adminSafety(dialect: DialectName) {
  const { instant } = columnTypes(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('schedules').addColumn('retired_at', instant).execute();
      await db.schema.alterTable('reasons').addColumn('retired_at', instant).execute();
      await db.schema
        .createTable('used_form_tokens')
        .addColumn('token', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('used_at', instant, (c) => c.notNull())
        .addColumn('outcome', 'varchar(300)')
        .execute();
      await db.schema.createIndex('used_form_tokens_used_at').on('used_form_tokens').column('used_at').execute();
      await db.schema.alterTable('admin_sessions').addColumn('unshown_api_token', 'varchar(200)').execute();
      await db.schema.alterTable('outbox').addColumn('skip_reason', 'text').execute();
    },
  };
}
