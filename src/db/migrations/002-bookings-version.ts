import type { Kysely } from 'kysely';

// A per-schedule counter bumped in the transaction of every booking or cancellation, so a process can
// tell with one primary-key read whether its cached /days answer for a schedule is still current.
export function bookingsVersion() {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('schedules')
        .addColumn('bookings_version', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  };
}
