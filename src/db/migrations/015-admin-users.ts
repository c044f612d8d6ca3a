import type { Kysely } from 'kysely';
import type { DialectName } from '../connect.js';
import { columnTypes } from './columns.js';

// Several admin users (issue 11, docs/admin.md "Users"):
// - a role per admin: 'administrator' (everything) or 'staff' (bookings and customers of their schedules);
//   every admin existing before this migration is an administrator;
// - the schedules a staff member works on, a JSON list of ids on the admin's row, so the session read (a
//   primary-key join to admins) brings them along without another query;
// - invitations: a one-time link whose random token is stored only as its SHA-256, usable once, until it expires;
// - the invitation link held on the inviting session's row until the page that shows it once is opened;
// - the audit trail: who booked, moved, cancelled or edited what, and user management, one row per event,
//   written in the transaction of the change. The actor's name is copied in, so a removed user's events stay legible.
export function adminUsers(dialect: DialectName) {
  const { id, instant, idColumn } = columnTypes(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('admins')
        .addColumn('role', 'varchar(20)', (c) => c.notNull().defaultTo('administrator'))
        .execute();
      await db.schema
        .alterTable('admins')
        .addColumn('name', 'varchar(200)', (c) => c.notNull().defaultTo(''))
        .execute();
      await db.schema
        .alterTable('admins')
        .addColumn('schedule_ids', 'text', (c) => c.notNull().defaultTo('[]'))
        .execute();
      await db.schema.alterTable('admins').addColumn('last_sign_in_at', instant).execute();
      await db.schema.alterTable('admin_sessions').addColumn('unshown_invitation', 'text').execute();
      await db.schema
        .createTable('admin_invitations')
        .addColumn('id', id, idColumn)
        .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('email', 'varchar(254)', (c) => c.notNull())
        .addColumn('role', 'varchar(20)', (c) => c.notNull())
        .addColumn('schedule_ids', 'text', (c) => c.notNull())
        .addColumn('invited_by', 'integer')
        .addColumn('created_at', instant, (c) => c.notNull())
        .addColumn('expires_at', instant, (c) => c.notNull())
        .addColumn('used_at', instant)
        .execute();
      await db.schema
        .createTable('audit_events')
        .addColumn('id', id, idColumn)
        .addColumn('at', instant, (c) => c.notNull())
        .addColumn('actor_kind', 'varchar(20)', (c) => c.notNull())
        .addColumn('actor_admin_id', 'integer')
        .addColumn('actor_label', 'varchar(300)', (c) => c.notNull().defaultTo(''))
        .addColumn('action', 'varchar(50)', (c) => c.notNull())
        .addColumn('booking_id', 'integer')
        .addColumn('summary', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
      // a booking's history; the Activity page (latest first, optionally of one user)
      await db.schema.createIndex('audit_events_booking').on('audit_events').columns(['booking_id', 'id']).execute();
      await db.schema.createIndex('audit_events_actor').on('audit_events').columns(['actor_admin_id', 'id']).execute();
    },
  };
}
