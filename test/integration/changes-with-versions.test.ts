// On PostgreSQL the API's shared version read also brings the bookings changed since the version this process
// read last (db/hot-reads.ts, Versions.changes), and a cached /days answer is brought up to date from them
// instead of a read of its own (issue 13). Through the real API (the gate asks with the schedule's reach):
// after every booking and cancellation by another connection, the very next /days requests of both reasons
// answer what a computation from scratch answers; on PostgreSQL without a changes read of their own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, testInstallation } from '../support/installation.js';
import { connect, type Db } from '../../src/db/connect.js';
import { SnapshotCache, type Snapshot } from '../../src/app/snapshot.js';
import { availabilityContext, findReason, findSchedule } from '../../src/app/availability.js';
import { cancelBooking, createBooking } from '../../src/app/bookings.js';
import { bookedTimes } from '../../src/db/repos/booking.repository.js';
import { bookingWindow, freeDays, freeSlotsOn, relevantBookingStarts } from '../../src/core/availability/free-slots.js';
import { formatDate, formatLocalDateTime } from '../../src/core/time/calendar.js';

const NOW = Date.UTC(2026, 5, 1, 6, 0);

const SCHEDULE = {
  name: 'Vaccinations',
  slot_interval_minutes: 30,
  horizon_days: 10,
  buffer_before_minutes: 15,
  buffer_after_minutes: 30,
  // few times a day, so that a booking or two fills a day and a cancellation frees it
  weekly_hours: ALL_WEEK([
    ['08:00', '09:30'],
    ['23:00', '24:00'],
  ]),
  reasons: [
    { name: 'Shot', duration_minutes: 30 },
    { name: 'Check-up', duration_minutes: 90 },
  ],
  form: { email: { label: 'E-mail', input_type: 'email', required: true } },
};

/** /days and the free times of every day, computed from the committed bookings (no cache involved). */
async function fromScratch(db: Db, snapshot: Snapshot, scheduleId: number, reasonId: number, now: number) {
  const schedule = findSchedule(snapshot, scheduleId);
  const ctx = availabilityContext(snapshot, schedule, findReason(schedule, reasonId), now);
  const window = bookingWindow(ctx);
  const { from, to } = relevantBookingStarts(ctx, window.firstDay, window.lastDay);
  const bookings = await bookedTimes(db.kysely, scheduleId, from, to);
  const times: string[] = [];
  for (let day = window.firstDay; day <= window.lastDay; day++)
    for (const slot of freeSlotsOn(ctx, day, bookings) ?? []) times.push(formatLocalDateTime(slot.day, slot.minute));
  return { days: freeDays(ctx, bookings).map(formatDate), times };
}

/** xorshift, seeded: a failing sequence can be replayed with its seed */
function random(seed: number) {
  let state = seed >>> 0 || 1;
  return (n: number) => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) % n;
  };
}

describeEachDatabase('the changes read with the versions', (dialect) => {
  test('after each booking and cancellation by another connection, the next /days answers of both reasons are exact', async () => {
    const seed = Number(process.env.CHANGES_SEED ?? Date.now() % 1_000_000);
    const below = random(seed);
    const inst = await testInstallation(dialect, { now: NOW, schedules: [SCHEDULE] });
    const other = connect(inst.url);
    let ownChangesReads = 0;
    const changesAround = inst.db.hot.changesAround.bind(inst.db.hot);
    inst.db.hot.changesAround = (...args) => {
      ownChangesReads++;
      return changesAround(...args);
    };
    try {
      const scheduleId = inst.schedules[0]!.id;
      const reasonIds = inst.schedules[0]!.reasons.map((r) => r.id);
      const otherSnapshots = new SnapshotCache(other);
      const booked: string[] = [];
      const days = async (reasonId: number) =>
        (await inst.api({ method: 'GET', url: `/api/days?schedule=${scheduleId}&reason=${reasonId}` })).json<{ data: string[] }>().data;
      let updates = 0;
      // this process has seen the schedule before the first change
      for (const reasonId of reasonIds) await days(reasonId);
      // 40 steps of 6 requests stay within the default rate limit (300 a minute)
      for (let step = 0; step < 40; step++) {
        const snapshot = await otherSnapshots.current();
        if (booked.length && below(3) === 0) {
          assert.equal(await cancelBooking(other, booked.splice(below(booked.length), 1)[0]!, NOW), true);
        } else {
          const reasonId = reasonIds[below(reasonIds.length)]!;
          const { times } = await fromScratch(other, snapshot, scheduleId, reasonId, NOW);
          if (times.length) {
            const slot = times[below(times.length)]!;
            const request = { scheduleId, reasonId, slot, submission: { email: `c${step}@example.com` }, source: 'api' as const };
            booked.push((await createBooking(other, snapshot, request, NOW)).detailsId);
          }
        }
        for (const reasonId of reasonIds) {
          const answers = await Promise.all([days(reasonId), days(reasonId), days(reasonId)]);
          const expected = (await fromScratch(inst.db, snapshot, scheduleId, reasonId, NOW)).days;
          for (const answer of answers) assert.deepEqual(answer, expected, `seed ${seed}, step ${step}, reason ${reasonId}`);
        }
        updates++;
        // the first change after a quiet spell is read apart (the version read asks for changes only
        // while the schedule's version moves: db/hot-reads.ts); from the second on, none
        if (step === 0) ownChangesReads = 0;
      }
      assert.equal(updates, 40);
      // PostgreSQL: every answer was brought up to date from the changes the version read brought
      if (dialect === 'postgres') assert.equal(ownChangesReads, 0, `seed ${seed}: changes read apart from the versions`);
    } finally {
      await other.close();
      await inst.close();
    }
  });
});
