// DATABASE_PREPARED_STATEMENTS (docs/operations.md): on PostgreSQL the per-request reads run as named
// prepared statements by default, and as plain parameterised queries when it is off (a PgBouncer in
// transaction mode that does not track prepared statements). Both must read the same, and only the first
// may leave statements in the session.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { POSTGRES_AVAILABLE } from '../support/databases.js';
import { deskSchedule, testInstallation } from '../support/installation.js';
import { connect } from '../../src/db/connect.js';
import { loadConfig } from '../../src/config.js';
import { SnapshotCache } from '../../src/app/snapshot.js';
import { createBooking } from '../../src/app/bookings.js';

const NOW = Date.UTC(2026, 5, 1, 6, 0);
const HOUR = 3_600_000;

test('DATABASE_PREPARED_STATEMENTS: on by default, off on request, anything else refused at start', () => {
  assert.equal(loadConfig({}).databasePreparedStatements, true);
  assert.equal(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'on' }).databasePreparedStatements, true);
  assert.equal(loadConfig({ DATABASE_PREPARED_STATEMENTS: ' off ' }).databasePreparedStatements, false);
  for (const wrong of ['yes', 'false', '0', 'OFF'])
    assert.throws(() => loadConfig({ DATABASE_PREPARED_STATEMENTS: wrong }), /DATABASE_PREPARED_STATEMENTS must be on or off/);
});

test(
  'PostgreSQL: the per-request reads answer the same prepared and unprepared, and only prepared leave statements behind',
  { skip: !POSTGRES_AVAILABLE },
  async () => {
    const inst = await testInstallation('postgres', { now: NOW, timezone: 'UTC', schedules: [deskSchedule()] });
    // one connection each, so the session the reads ran on is the one asked about afterwards
    const prepared = connect(inst.url, { poolMax: 1, preparedStatements: true });
    const plain = connect(inst.url, { poolMax: 1, preparedStatements: false });
    const statementsOf = async (db: typeof prepared) =>
      (
        await db.kysely
          .selectFrom('pg_prepared_statements' as never)
          .select('name' as never)
          .execute()
      )
        .map((r) => (r as { name: string }).name)
        .sort();
    try {
      const scheduleId = inst.schedules[0]!.id;
      const snapshot = await new SnapshotCache(inst.db).current();
      const booking = {
        scheduleId,
        reasonId: inst.schedules[0]!.reasons[0]!.id,
        slot: '2026-06-02 09:00:00',
        submission: { email: 'a@example.com' },
        source: 'api',
      } as const;
      await createBooking(inst.db, snapshot, booking, inst.clock());
      const booked = [{ start: Date.UTC(2026, 5, 2, 9, 0), end: Date.UTC(2026, 5, 2, 9, 30) }];
      for (let round = 0; round < 2; round++) {
        const [a, b] = [prepared, plain];
        assert.deepEqual(await a.hot.versions(scheduleId), await b.hot.versions(scheduleId), `versions, round ${round}`);
        assert.deepEqual(await a.hot.versions(null), await b.hot.versions(null));
        assert.deepEqual(await a.hot.bookedTimes(scheduleId, NOW, NOW + 48 * HOUR), booked);
        assert.deepEqual(await b.hot.bookedTimes(scheduleId, NOW, NOW + 48 * HOUR), booked);
        assert.deepEqual(await a.hot.changesAround(scheduleId, 0, HOUR, HOUR), await b.hot.changesAround(scheduleId, 0, HOUR, HOUR));
        assert.equal(await a.hot.bookingsVersion(scheduleId), await b.hot.bookingsVersion(scheduleId));
      }
      assert.deepEqual(await statementsOf(prepared), ['booking_bookedTimes', 'booking_changesAround', 'booking_versions']);
      assert.deepEqual(await statementsOf(plain), []);
    } finally {
      await prepared.close();
      await plain.close();
      await inst.close();
    }
  },
);
