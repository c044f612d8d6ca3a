import type { Kysely } from 'kysely';
import type { DialectName } from '../connect.js';
import { columnTypes } from './columns.js';

// Whether the customer came (issue 11, docs/admin.md "Statuses"): 'completed' or 'no_show', set by the office
// once the appointment has begun, and when. Beside `status`, not in it: a marked booking is still 'booked',
// so its time stays taken for the availability engine and the hot reads, which count `status = 'booked'`.
export function bookingAttendance(dialect: DialectName) {
  const { instant } = columnTypes(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('bookings').addColumn('attendance', 'varchar(16)').execute();
      await db.schema.alterTable('bookings').addColumn('attendance_at', instant).execute();
    },
  };
}
