import type { Kysely } from 'kysely';

// Per schedule, the reminders sent to the customer before an appointment (docs/reminders.md), as a JSON list
// of minutes before the start. Existing schedules get none. The reminder messages themselves are outbox rows
// (kind booking_reminder) whose next_attempt_at is their due time: no table of their own.
export function reminders() {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('schedules')
        .addColumn('reminder_minutes', 'text', (c) => c.notNull().defaultTo('[]'))
        .execute();
    },
  };
}
