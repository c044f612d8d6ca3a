import type { Kysely } from 'kysely';
import type { DialectName } from '../connect.js';
import { columnTypes } from './columns.js';

// Customers and bookings edited in the admin area (issue 11, docs/admin.md):
// - staff-only notes on a customer;
// - when a customer's personal data was erased on request (GDPR): the row stays, emptied, so the bookings'
//   statistics (schedule, reason, time, status, source) keep their customer id;
// - when a booking's details or answers were last edited in the admin area (null: never);
// - the rules staff set aside booking by hand (comma-separated: notice, horizon, hours, capacity; null: none).
export function customerRecords(dialect: DialectName) {
  const { instant } = columnTypes(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('customers')
        .addColumn('notes', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
      await db.schema.alterTable('customers').addColumn('erased_at', instant).execute();
      await db.schema.alterTable('bookings').addColumn('updated_at', instant).execute();
      await db.schema.alterTable('bookings').addColumn('staff_overrides', 'varchar(100)').execute();
    },
  };
}
