import type { Kysely } from 'kysely';

// The Bookings page and its CSV export (docs/admin.md, "Find and export") read across all schedules by start
// time: upcoming first, a date range, a page at a time. The schedule's indexes start with schedule_id, so
// without this one every page of the list would read and sort every booking. The text search (name, e-mail,
// phone contains…) cannot use a B-tree index on either engine; it filters the rows this index orders.
export function bookingsStartIndex() {
  return {
    async up(db: Kysely<any>) {
      await db.schema.createIndex('bookings_start').on('bookings').columns(['start_at', 'id']).execute();
    },
  };
}
