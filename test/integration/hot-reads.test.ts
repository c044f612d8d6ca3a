// The per-request reads prepared outside Kysely (src/db/hot-reads.ts) must see exactly what is committed:
// never the rows of a write transaction that is still open in this process (it may roll back, and an
// answer cached from them would outlive it), and a commit at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, testInstallation } from '../support/installation.js';
import { bumpBookingsVersion } from '../../src/db/repos/booking.repository.js';
import { bumpConfigVersion } from '../../src/db/repos/installation.repository.js';
import type { Db } from '../../src/db/connect.js';
import { MAX_CHANGES } from '../../src/db/hot-reads.js';

const NOW = Date.UTC(2026, 5, 1, 6, 0);
const HOUR = 3_600_000;

/** Stores a booking of the customer at [start, end), changed in `changedIn`, in the write transaction `trx`. */
async function insertBooking(
  trx: Parameters<Parameters<Db['write']>[0]>[0],
  {
    detailsId,
    scheduleId,
    reasonId,
    customerId,
    start,
    end,
    changedIn,
  }: Record<'scheduleId' | 'reasonId' | 'customerId' | 'start' | 'end' | 'changedIn', number> & { detailsId: string },
) {
  await trx
    .insertInto('bookings')
    .values({
      details_id: detailsId,
      schedule_id: scheduleId,
      reason_id: reasonId,
      customer_id: customerId,
      start_at: start,
      end_at: end,
      status: 'booked',
      source: 'admin',
      answers: '{}',
      created_at: NOW,
      changed_in: changedIn,
    })
    .execute();
}

/** A customer to book for. */
async function insertCustomer(db: Db, email: string) {
  return db.kysely
    .insertInto('customers')
    .values({ email_key: email, email, first_name: 'Held', last_name: '', phone: '', created_at: NOW, updated_at: NOW })
    .returning('id')
    .executeTakeFirstOrThrow();
}

/** Opens a write transaction that changes what the hot reads return, and holds it until `finish` is called. */
let held = 0;
async function heldWrite(db: Db, scheduleId: number, reasonId: number, customerId: number) {
  let finish!: (outcome: 'commit' | 'roll back') => void;
  const decided = new Promise<'commit' | 'roll back'>((resolve) => {
    finish = resolve;
  });
  let changed!: () => void;
  const hasChanged = new Promise<void>((resolve) => {
    changed = resolve;
  });
  const done = db
    .write(async (trx) => {
      await bumpConfigVersion(trx);
      const changedIn = (await bumpBookingsVersion(trx, scheduleId))!;
      const detailsId = `held-${++held}`;
      await insertBooking(trx, { detailsId, scheduleId, reasonId, customerId, start: NOW + 24 * HOUR, end: NOW + 25 * HOUR, changedIn });
      changed();
      if ((await decided) === 'roll back') throw new Error('rolled back on purpose');
    })
    .then(
      () => 'committed',
      (error: Error) => error.message,
    );
  await hasChanged;
  return { finish, done };
}

describeEachDatabase('per-request reads beside a write transaction', (dialect) => {
  test('see neither the versions nor the bookings of an open transaction; see its commit at once', async () => {
    const inst = await testInstallation(dialect, {
      now: NOW,
      schedules: [
        {
          name: 'Desk',
          slot_interval_minutes: 60,
          horizon_days: 7,
          weekly_hours: ALL_WEEK([['09:00', '17:00']]),
          reasons: [{ name: 'Talk', duration_minutes: 60 }],
        },
      ],
    });
    try {
      const { db } = inst;
      const schedule = inst.schedules[0]!;
      const reasonId = schedule.reasons[0]!.id;
      const customer = await insertCustomer(db, 'held@example.com');
      // on PostgreSQL the three reads run on different connections, so one made while a commit lands may
      // see it and another not; each must show either the state before the transaction or after its commit
      let since = 0;
      // settled: no commit can land while it reads (a read raced against a commit may see it in one statement only)
      const read = async (settled = true) => {
        const [versions, version, spans, changes] = await Promise.all([
          db.hot.versions(schedule.id),
          db.hot.bookingsVersion(schedule.id),
          db.hot.bookedTimes(schedule.id, NOW, NOW + 48 * HOUR),
          db.hot.changesAround(schedule.id, since, HOUR, HOUR).then((changes) => changes!),
        ]);
        // the bookings changed since the version first read are the ones booked, and the booked ones around them
        if (settled) {
          assert.deepEqual(changes.changed, spans);
          assert.deepEqual(changes.around, spans);
        } else {
          // each statement shows the state before the commit or after it, never a part of it
          for (const seen of [changes.changed, changes.around]) assert.ok(seen.length <= 1, JSON.stringify(seen));
        }
        return [versions.config, version, spans, versions.bookings] as const;
      };
      const [config0, bookings0, spans0, bookingsWithConfig] = await read();
      since = bookings0;
      assert.deepEqual(spans0, []);
      assert.equal(bookingsWithConfig, bookings0, 'the same bookings version, read with the config version or alone');
      assert.deepEqual(await db.hot.versions(null), { config: config0, scheduleId: null, bookings: null });
      assert.deepEqual(await db.hot.versions(schedule.id + 1000), { config: config0, scheduleId: schedule.id + 1000, bookings: null });

      // rolled back: reads made while it was open must not have seen its changes
      const rolledBack = await heldWrite(db, schedule.id, reasonId, customer.id);
      const during = read();
      // let the turn's shared version read run while the write transaction is still open
      await new Promise((resolve) => setImmediate(resolve));
      rolledBack.finish('roll back');
      assert.equal(await rolledBack.done, 'rolled back on purpose');
      assert.deepEqual(await during, [config0, bookings0, [], bookings0]);
      assert.deepEqual(await read(), [config0, bookings0, [], bookings0]);

      // committed: the next read sees it
      const committed = await heldWrite(db, schedule.id, reasonId, customer.id);
      const during2 = read(false);
      await new Promise((resolve) => setImmediate(resolve));
      committed.finish('commit');
      assert.equal(await committed.done, 'committed');
      const [config2, bookings2, spans2, bookingsWithConfig2] = await during2;
      const booked = [{ start: NOW + 24 * HOUR, end: NOW + 25 * HOUR }];
      // PostgreSQL answers from the last commit at once; SQLite waits for the open transaction to end
      assert.ok([config0, config0 + 1].includes(config2), `config version ${config2}`);
      assert.ok([bookings0, bookings0 + 1].includes(bookings2) && [bookings0, bookings0 + 1].includes(bookingsWithConfig2!));
      assert.ok(spans2.length === 0 || (spans2.length === 1 && spans2[0]!.start === booked[0]!.start));
      assert.deepEqual(await read(), [config0 + 1, bookings0 + 1, booked, bookings0 + 1]);
    } finally {
      await inst.close();
    }
  });

  test(`more than ${MAX_CHANGES} changes since a version are not read: the answer behind them is computed whole`, async () => {
    const inst = await testInstallation(dialect, {
      now: NOW,
      schedules: [{ name: 'Desk', weekly_hours: ALL_WEEK([['09:00', '17:00']]), reasons: [{ name: 'Talk', duration_minutes: 60 }] }],
    });
    try {
      const { db } = inst;
      const schedule = inst.schedules[0]!;
      const customer = await insertCustomer(db, 'many@example.com');
      // MAX_CHANGES + 1 bookings, each its own version (1 .. MAX_CHANGES + 1), an hour apart
      for (let i = 0; i <= MAX_CHANGES; i++) {
        await db.write(async (trx) => {
          const changedIn = (await bumpBookingsVersion(trx, schedule.id))!;
          await insertBooking(trx, {
            detailsId: `many-${i}`,
            scheduleId: schedule.id,
            reasonId: schedule.reasons[0]!.id,
            customerId: customer.id,
            start: NOW + i * HOUR,
            end: NOW + (i + 1) * HOUR,
            changedIn,
          });
        });
      }
      const reach = { before: HOUR, after: HOUR };
      assert.equal(await db.hot.changesAround(schedule.id, 0, reach.before, reach.after), null, 'one change too many');
      const last = await db.hot.changesAround(schedule.id, 1, reach.before, reach.after);
      assert.equal(last?.changed.length, MAX_CHANGES, 'exactly MAX_CHANGES are brought');
      // the bookings starting from an hour before a change to an hour after its end: all of them
      assert.equal(last?.around.length, MAX_CHANGES + 1);
    } finally {
      await inst.close();
    }
  });
});
