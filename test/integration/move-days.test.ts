// A move rewrites a booking's row, and a cached /days answer is brought up to date from the rows changed
// since it (bookings.changed_in), which tell their new time only: the day a booking left must still show up
// free on the very next request (rescheduleBooking renews the answers through the config version).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, deskSchedule, testInstallation, type TestInstallation } from '../support/installation.js';
import { createBooking } from '../../src/app/bookings.js';
import { rescheduleBooking } from '../../src/app/manage-link.js';
import { SnapshotCache } from '../../src/app/snapshot.js';

// Monday 2026-06-01 06:00Z = 08:00 in Berlin
const NOW = Date.UTC(2026, 5, 1, 6, 0);

describeEachDatabase('a move and the cached /days', (dialect) => {
  let inst: TestInstallation;
  before(async () => {
    inst = await testInstallation(dialect, {
      now: NOW,
      schedules: [
        deskSchedule({
          slot_interval_minutes: 60,
          horizon_days: 5,
          // one free time a day: a booked day is a full day
          weekly_hours: ALL_WEEK([['09:00', '10:00']]),
          reasons: [{ name: 'Talk', duration_minutes: 60 }],
          form: { email: { label: 'E-mail', input_type: 'email', required: true } },
        }),
      ],
    });
  });
  after(() => inst.close());

  test('the day a booking was moved away from is listed again on the next request', async () => {
    const schedule = inst.schedules[0]!;
    const reason = schedule.reasons[0]!;
    const days = async () =>
      (await inst.api({ method: 'GET', url: `/api/days?schedule=${schedule.id}&reason=${reason.id}` })).json<{ data: string[] }>().data;
    const booked = await createBooking(
      inst.db,
      await new SnapshotCache(inst.db).current(),
      { scheduleId: schedule.id, reasonId: reason.id, slot: '2026-06-02 09:00:00', submission: { email: 'm@example.com' }, source: 'api' },
      NOW,
    );
    // cached with 2 June full
    assert.ok(!(await days()).includes('2026-06-02'));
    assert.ok((await days()).includes('2026-06-04'));
    await rescheduleBooking(inst.db, await new SnapshotCache(inst.db).current(), booked.bookingId, '2026-06-04 09:00:00', NOW, 'office');
    const now = await days();
    assert.ok(now.includes('2026-06-02'), `2 June is free again: ${now.join(', ')}`);
    assert.ok(!now.includes('2026-06-04'), '4 June is taken');
  });
});
