// A cached /days answer behind by a few bookings is brought up to date from the bookings changed since its
// version and those around them (db/hot-reads.ts changesAround, app/availability.ts updatedDays) instead of
// the year's scan (issue 13). Through the real API: after every booking and cancellation by another
// connection, the very next /days requests of both reasons answer what a computation from scratch answers,
// and the concurrent requests of a reason share one read of the changes.
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
import { MAX_CHANGES } from '../../src/db/hot-reads.js';

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

describeEachDatabase('a /days answer brought up to date by the changes since it', (dialect) => {
  test('after each booking and cancellation by another connection, the next /days answers of both reasons are exact', async () => {
    const seed = Number(process.env.CHANGES_SEED ?? Date.now() % 1_000_000);
    const below = random(seed);
    const inst = await testInstallation(dialect, { now: NOW, schedules: [SCHEDULE] });
    const other = connect(inst.url);
    const reads = countChangesReads(inst.db);
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
      let changedSteps = 0;
      for (let step = 0; step < 40; step++) {
        const snapshot = await otherSnapshots.current();
        if (booked.length && below(3) === 0) {
          assert.equal(await cancelBooking(other, booked.splice(below(booked.length), 1)[0]!, NOW), true);
          changedSteps++;
        } else {
          const reasonId = reasonIds[below(reasonIds.length)]!;
          const { times } = await fromScratch(other, snapshot, scheduleId, reasonId, NOW);
          if (times.length) {
            const slot = times[below(times.length)]!;
            const request = { scheduleId, reasonId, slot, submission: { email: `c${step}@example.com` }, source: 'api' as const };
            booked.push((await createBooking(other, snapshot, request, NOW)).detailsId);
            changedSteps++;
          }
        }
        const readsBefore = reads.used;
        for (const reasonId of reasonIds) {
          const answers = await Promise.all([days(reasonId), days(reasonId), days(reasonId)]);
          const expected = (await fromScratch(inst.db, snapshot, scheduleId, reasonId, NOW)).days;
          for (const answer of answers) assert.deepEqual(answer, expected, `seed ${seed}, step ${step}, reason ${reasonId}`);
        }
        // one read of the changes per reason at most: its three requests share the computation (AnswerCache)
        assert.ok(reads.used - readsBefore <= reasonIds.length, `seed ${seed}, step ${step}: ${reads.used - readsBefore} reads`);
        updates++;
      }
      assert.equal(updates, 40);
      // after every change, each reason's answer was brought up to date from the changes, not computed whole
      assert.equal(reads.used, changedSteps * reasonIds.length, `seed ${seed}: reads of the changes used`);
      assert.equal(reads.refused, 0);
    } finally {
      await other.close();
      await inst.close();
    }
  });

  test(`more than ${MAX_CHANGES} changes since an answer: it is computed whole, and exact`, async () => {
    const inst = await testInstallation(dialect, { now: NOW, schedules: [SCHEDULE] });
    const other = connect(inst.url);
    const reads = countChangesReads(inst.db);
    try {
      const scheduleId = inst.schedules[0]!.id;
      const reasonId = inst.schedules[0]!.reasons[0]!.id;
      const days = async () =>
        (await inst.api({ method: 'GET', url: `/api/days?schedule=${scheduleId}&reason=${reasonId}` })).json<{ data: string[] }>().data;
      await days();
      // one time booked and cancelled again and again by another connection: a booking row changed a round
      const snapshot = await new SnapshotCache(other).current();
      const { times } = await fromScratch(other, snapshot, scheduleId, reasonId, NOW);
      const request = { scheduleId, reasonId, slot: times[0]!, submission: { email: 'again@example.com' }, source: 'api' as const };
      for (let round = 0; round <= MAX_CHANGES; round++) {
        const { detailsId } = await createBooking(other, snapshot, request, NOW);
        if (round < MAX_CHANGES) assert.equal(await cancelBooking(other, detailsId, NOW), true);
      }
      assert.deepEqual(await days(), (await fromScratch(inst.db, snapshot, scheduleId, reasonId, NOW)).days);
      assert.deepEqual([reads.used, reads.refused], [0, 1], 'the changes were read, found too many, and not used');
    } finally {
      await other.close();
      await inst.close();
    }
  });
});

/** Counts the reads of changes this process makes: used (brought an answer up to date) or refused (too many). */
function countChangesReads(db: Db) {
  const counts = { used: 0, refused: 0 };
  const changesAround = db.hot.changesAround.bind(db.hot);
  db.hot.changesAround = async (...args) => {
    const changes = await changesAround(...args);
    if (changes) counts.used++;
    else counts.refused++;
    return changes;
  };
  return counts;
}
