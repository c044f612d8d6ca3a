// What a move (reschedule) and an undone cancellation must keep true, found in review of the admin area's
// status work (issue 11): they land only on a reason still in service even when the request's snapshot was read
// before the reason's retirement committed (as createBooking does); a move clears a mark of whether the
// customer came and queues the reminders before the new time; an undo clears the rules staff set aside.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, testInstallation, type TestInstallation } from '../support/installation.js';
import { cancelBooking, createBooking } from '../../src/app/bookings.js';
import { markAttendance, restoreBooking } from '../../src/app/booking-status.js';
import { rescheduleBooking } from '../../src/app/reschedule.js';
import { retireReason } from '../../src/app/admin-schedules.js';
import { SnapshotCache } from '../../src/app/snapshot.js';
import { Conflict, NotFound } from '../../src/core/errors.js';
import type { StaffOverride } from '../../src/core/bookings.js';

// Monday 2026-06-01 08:00 in Berlin (06:00Z)
const NOW = Date.UTC(2026, 5, 1, 6, 0);

describeEachDatabase('reschedule and undo rules', (dialect) => {
  let inst: TestInstallation;
  before(async () => {
    inst = await testInstallation(dialect, {
      now: NOW,
      schedules: Array.from({ length: 5 }, (_, i) => ({
        name: `Desk ${i}`,
        reminder_minutes_before: [1440],
        slot_interval_minutes: 30,
        horizon_days: 30,
        weekly_hours: ALL_WEEK([['09:00', '17:00']]),
        reasons: [
          { name: 'Talk', duration_minutes: 30 },
          { name: 'Other', duration_minutes: 30 },
        ],
      })),
    });
  });
  after(() => inst.close());

  const bookedOnRetiredReason = async (scheduleId: number) =>
    (
      await inst.db.kysely
        .selectFrom('bookings')
        .innerJoin('reasons', 'reasons.id', 'bookings.reason_id')
        .select('bookings.id')
        .where('bookings.status', '=', 'booked')
        .where('bookings.end_at', '>', NOW)
        .where('reasons.retired_at', 'is not', null)
        .where('bookings.schedule_id', '=', scheduleId)
        .execute()
    ).length;

  const book = async (i: number, reasonIndex: number, slot: string, overrides?: StaffOverride[]) => {
    const s = inst.schedules[i]!;
    const snapshot = await new SnapshotCache(inst.db).current();
    return createBooking(
      inst.db,
      snapshot,
      {
        scheduleId: s.id,
        reasonId: s.reasons[reasonIndex]!.id,
        slot,
        submission: { email: `c${i}@example.com` },
        source: overrides ? 'admin' : 'api',
        ...(overrides ? { overrides } : {}),
      },
      NOW,
    );
  };

  test('reschedule to a reason retired since the snapshot is refused', async () => {
    const s = inst.schedules[0]!;
    const created = await book(0, 0, '2026-06-02 10:00:00');
    const stale = await new SnapshotCache(inst.db).current(); // read by the request before the retirement commits
    await retireReason(inst.db, s.id, s.reasons[1]!.id, NOW); // 'Other' has no upcoming booking: allowed
    await assert.rejects(
      rescheduleBooking(inst.db, stale, created.bookingId, '2026-06-02 11:00:00', NOW, 'office', s.reasons[1]!.id),
      NotFound,
    );
    assert.equal(await bookedOnRetiredReason(s.id), 0, 'an upcoming booking now sits on the retired reason');
  });

  test('undo of a cancellation with a reason retired since the snapshot is refused', async () => {
    const s = inst.schedules[1]!;
    const created = await book(1, 1, '2026-06-02 10:00:00');
    assert.ok(await cancelBooking(inst.db, created.detailsId, NOW));
    const stale = await new SnapshotCache(inst.db).current();
    await retireReason(inst.db, s.id, s.reasons[1]!.id, NOW); // no upcoming booking on it: allowed
    await assert.rejects(restoreBooking(inst.db, stale, created.detailsId, NOW), Conflict);
    assert.equal(await bookedOnRetiredReason(s.id), 0, 'an upcoming booking now sits on the retired reason');
  });

  test('a no-show moved by the office to a future time is no longer marked no-show', async () => {
    const created = await book(2, 0, '2026-06-01 09:00:00');
    const later = Date.UTC(2026, 5, 1, 7, 30); // 09:30 Berlin: the appointment has begun
    await markAttendance(inst.db, created.detailsId, 'no_show', later);
    const snapshot = await new SnapshotCache(inst.db).current();
    assert.equal(await rescheduleBooking(inst.db, snapshot, created.bookingId, '2026-06-03 10:00:00', later, 'office'), 'moved');
    const row = await inst.db.kysely
      .selectFrom('bookings')
      .select(['start_at', 'attendance'])
      .where('id', '=', created.bookingId)
      .executeTakeFirstOrThrow();
    assert.ok(Number(row.start_at) > later);
    assert.equal(row.attendance, null, 'a future appointment still marked no-show (lists, status filter, CSV say "no-show")');
  });

  test('after the office moves a booking a week later, its reminder is due 24 h before the new time, not the old', async () => {
    const s = inst.schedules[3]!;
    const created = await book(3, 0, '2026-06-03 10:00:00');
    const snapshot = await new SnapshotCache(inst.db).current();
    assert.equal(await rescheduleBooking(inst.db, snapshot, created.bookingId, '2026-06-10 10:00:00', NOW, 'office'), 'moved');
    const due = await inst.db.kysely
      .selectFrom('outbox')
      .select(['next_attempt_at', 'state'])
      .where('booking_id', '=', created.bookingId)
      .where('kind', '=', 'booking_reminder')
      .where('state', 'in', ['queued', 'retrying'])
      .execute();
    const newStart = Date.UTC(2026, 5, 10, 8, 0);
    assert.deepEqual(
      due.map((r) => Number(r.next_attempt_at)),
      [newStart - 86_400_000],
      `reminder still due ${new Date(Number(due[0]?.next_attempt_at)).toISOString()}: a week early (s ${s.id})`,
    );
  });

  test('an undone cancellation no longer carries the rules staff set aside booking it by hand', async () => {
    const s = inst.schedules[4]!;
    // "hours" set aside though inside the hours: the undo's re-check (every rule) passes
    const created = await book(4, 0, '2026-06-02 10:00:00', ['hours']);
    assert.ok(await cancelBooking(inst.db, created.detailsId, NOW));
    const snapshot = await new SnapshotCache(inst.db).current();
    assert.equal(await restoreBooking(inst.db, snapshot, created.detailsId, NOW), 'restored');
    const row = await inst.db.kysely
      .selectFrom('bookings')
      .select(['status', 'staff_overrides'])
      .where('id', '=', created.bookingId)
      .where('schedule_id', '=', s.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.status, 'booked');
    assert.equal(row.staff_overrides, null, 'the restored booking still says rules were set aside for it');
  });
});
