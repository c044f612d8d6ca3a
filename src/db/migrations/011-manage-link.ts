import type { Kysely } from 'kysely';
import type { DialectName } from '../connect.js';
import { columnTypes } from './columns.js';

// The manage link (docs/manage-link.md). `sequence`: the iCalendar SEQUENCE of the booking's event, raised
// by every change (a move, a cancellation), so a calendar replaces the event it has. `moved_from_*`: the time
// before the last move, for the office's notice. `cancel_reason` and `cancelled_by`: what the customer wrote
// and who cancelled, for the office. `cancel_cutoff_minutes`: how long before the start the customer can no
// longer cancel or move by themselves (0: until the start).
export function manageLink(dialect: DialectName) {
  const { instant } = columnTypes(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('bookings')
        .addColumn('sequence', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('bookings').addColumn('moved_from_start', instant).execute();
      await db.schema.alterTable('bookings').addColumn('moved_from_end', instant).execute();
      await db.schema.alterTable('bookings').addColumn('cancel_reason', 'text').execute();
      await db.schema.alterTable('bookings').addColumn('cancelled_by', 'varchar(16)').execute();
      await db.schema
        .alterTable('schedules')
        .addColumn('cancel_cutoff_minutes', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  };
}
