import type { Kysely } from 'kysely';

// Which bookings changed after a bookings version (docs/architecture.md, "A request's path"): every booking
// and cancellation writes the schedule's new bookings version into the row it changes, so a process holding
// an answer computed at version v reads only the rows with `changed_in > v` (a few) and recomputes only the
// days their spans touch, instead of reading the schedule's year of bookings again. Rows from before this
// migration keep 0: no process holds an answer older than the version they were last changed under.
export function bookingChanges() {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('bookings')
        .addColumn('changed_in', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      // with start and end in the index, the read of the changes is answered from the index alone
      await db.schema
        .createIndex('bookings_schedule_changes')
        .on('bookings')
        .columns(['schedule_id', 'changed_in', 'start_at', 'end_at'])
        .execute();
    },
  };
}
