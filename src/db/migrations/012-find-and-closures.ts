import type { Kysely } from 'kysely';
import type { DialectName } from '../connect.js';
import { columnTypes } from './columns.js';

// Two admin capabilities of issue 11.
// - Find and export: the Bookings page and its CSV export (docs/admin.md) read across all schedules by start
//   time: upcoming first, a date range, a page at a time. The schedule's indexes start with schedule_id, so
//   without this one every page of the list would read and sort every booking. The text search (name, e-mail,
//   phone contains…) cannot use a B-tree index on either engine; it filters the rows this index orders.
// - Closures: practice-wide closed days (holidays), stored once, applied to every schedule by the engine.
//   Dates are local dates of the installation, 'YYYY-MM-DD' (text, compared as text), first to last inclusive.
export function findAndClosures(dialect: DialectName) {
  return {
    async up(db: Kysely<any>) {
      const { id, instant, idColumn } = columnTypes(dialect);
      await db.schema.createIndex('bookings_start').on('bookings').columns(['start_at', 'id']).execute();
      await db.schema
        .createTable('closures')
        .addColumn('id', id, idColumn)
        .addColumn('first_day', 'varchar(10)', (c) => c.notNull())
        .addColumn('last_day', 'varchar(10)', (c) => c.notNull())
        .addColumn('label', 'varchar(200)', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', instant, (c) => c.notNull())
        .execute();
    },
  };
}
