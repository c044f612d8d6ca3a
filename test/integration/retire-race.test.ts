// Issue 11 (reviewer): a booking racing the retirement of its schedule or reason. The retirement takes the
// schedule's lock as a booking does, and a booking under that lock refuses a retired schedule or reason, so
// one of the two wins: the booking first (the retirement is refused: upcoming bookings exist) or the
// retirement first (the booking gets the contract's 404 for an unknown schedule or reason). Never both: a
// booked upcoming appointment on a retired schedule or reason. Each round races a booking, made with the
// snapshot a request would hold from before the retirement, against the retirement on a second
// connection (as another process or instance); PostgreSQL runs them truly at once.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, testInstallation, type TestInstallation } from '../support/installation.js';
import { connect, type Db } from '../../src/db/connect.js';
import { createBooking } from '../../src/app/bookings.js';
import { retireReason, retireSchedule } from '../../src/app/admin-schedules.js';
import { SnapshotCache } from '../../src/app/snapshot.js';
import { Conflict, NotFound } from '../../src/core/errors.js';

// Monday 2026-06-01 08:00 in Berlin (06:00Z)
const NOW = Date.UTC(2026, 5, 1, 6, 0);
const ROUNDS = 30;

describeEachDatabase('a booking racing the retirement of its schedule or reason', (dialect) => {
  let inst: TestInstallation;
  let second: Db;
  before(async () => {
    inst = await testInstallation(dialect, {
      now: NOW,
      // one schedule per round (each retired once), with two reasons: one to retire, one that stays
      schedules: Array.from({ length: 2 * ROUNDS }, (_, i) => ({
        name: `Desk ${i}`,
        slot_interval_minutes: 30,
        horizon_days: 30,
        weekly_hours: ALL_WEEK([['09:00', '17:00']]),
        reasons: [
          { name: 'Talk', duration_minutes: 30 },
          { name: 'Other', duration_minutes: 30 },
        ],
      })),
    });
    second = connect(inst.url);
  });
  after(async () => {
    await second.close();
    await inst.close();
  });

  /** Booked appointments still to come on a retired schedule or with a retired reason: must stay none. */
  const bookedOnRetired = async () => {
    const { rows } = await sql<{ n: number }>`
      select count(*) as n from bookings b
      join schedules s on s.id = b.schedule_id
      join reasons r on r.id = b.reason_id
      where b.status = 'booked' and b.end_at > ${NOW} and (s.retired_at is not null or r.retired_at is not null)`.execute(inst.db.kysely);
    return Number(rows[0]!.n);
  };

  const race = async (round: number, retire: (scheduleId: number, reasonId: number) => Promise<void>, lost: string) => {
    const schedule = inst.schedules[round]!;
    const reasonId = schedule.reasons[0]!.id;
    // the snapshot a request read before the retirement committed
    const snapshot = await new SnapshotCache(inst.db).current();
    const book = () =>
      createBooking(
        inst.db,
        snapshot,
        { scheduleId: schedule.id, reasonId, slot: '2026-06-02 10:00:00', submission: { email: `r${round}@example.com` }, source: 'api' },
        NOW,
      );
    // every other round the retirement starts first (on SQLite, whose write lock orders them, the one that
    // starts first wins: so both orders are seen there too)
    let booking: PromiseSettledResult<unknown>, retirement: PromiseSettledResult<unknown>;
    if (round % 2 === 0) [booking, retirement] = await Promise.allSettled([book(), retire(schedule.id, reasonId)]);
    else [retirement, booking] = await Promise.allSettled([retire(schedule.id, reasonId), book()]);
    const outcome = `round ${round}: ${JSON.stringify([booking, retirement].map((r) => (r.status === 'fulfilled' ? 'ok' : String(r.reason))))}`;
    if (booking.status === 'fulfilled') {
      assert.equal(retirement.status, 'rejected', outcome);
      assert.ok(retirement.reason instanceof Conflict, outcome);
      assert.match(retirement.reason.message, /still has 1 upcoming booking/, outcome);
    } else {
      assert.equal(retirement.status, 'fulfilled', outcome);
      assert.ok(booking.reason instanceof NotFound, outcome);
      assert.equal(booking.reason.message, lost, outcome);
    }
    assert.equal(await bookedOnRetired(), 0, outcome);
    return booking.status === 'fulfilled' ? 'booking first' : 'retirement first';
  };

  /** Races every round and says how often each side won (the race decides; the invariant must hold either way). */
  const rounds = async (first: number, retire: Parameters<typeof race>[1], lost: string) => {
    const won: Record<string, number> = {};
    for (let round = first; round < first + ROUNDS; round++) {
      const winner = await race(round, retire, lost);
      won[winner] = (won[winner] ?? 0) + 1;
    }
    return JSON.stringify(won);
  };

  test('schedule: the booking or the retirement wins, never both', async (t) => {
    t.diagnostic(await rounds(0, (scheduleId) => retireSchedule(second, scheduleId, NOW), 'Schedule not found'));
  });

  test('reason: the booking or the retirement wins, never both', async (t) => {
    t.diagnostic(await rounds(ROUNDS, (scheduleId, reasonId) => retireReason(second, scheduleId, reasonId, NOW), 'Reason not found'));
  });
});
