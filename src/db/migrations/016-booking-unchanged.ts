import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../connect.js';

// PostgreSQL: whether a booking of a schedule starting in a range was booked, cancelled or moved after a
// bookings version, read with a snapshot of its own (a VOLATILE function takes a fresh snapshot for each of
// its queries). A new booking's lock-taking UPDATE has it in its condition (db/repos/booking-store.repository.ts):
// when the UPDATE waited for the schedule's row lock, PostgreSQL evaluates the condition again on the row it
// waited for, and this function then sees the booking that held the lock, which the UPDATE's own snapshot,
// taken when the statement started, does not. The same holds for a reason retired by the transaction that
// held the lock (admin-schedules.ts takes the schedule's lock to retire one): reason_in_service, also
// VOLATILE, sees it. SQLite needs nothing: its writes are serial from BEGIN IMMEDIATE.
export function bookingUnchanged(dialect: DialectName) {
  return {
    async up(db: Kysely<any>) {
      if (dialect !== 'postgres') return;
      await sql`
        create function bookings_changed_since(schedule integer, since bigint, starts_from bigint, starts_before bigint)
        returns boolean language plpgsql volatile as $$
        begin
          return exists (select 1 from bookings where schedule_id = schedule and changed_in > since
            and start_at >= starts_from and start_at < starts_before);
        end
        $$`.execute(db);
      await sql`
        create function reason_in_service(reason integer, schedule integer)
        returns boolean language plpgsql volatile as $$
        begin
          return exists (select 1 from reasons where id = reason and schedule_id = schedule and retired_at is null);
        end
        $$`.execute(db);
    },
  };
}
