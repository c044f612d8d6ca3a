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
import { POSTGRES_CHANGES_AROUND } from '../../src/db/hot-reads.js';
import pg from 'pg';

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
  'PostgreSQL: the per-request reads and the statements of a booking answer the same prepared and unprepared, and only prepared leave statements behind',
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

      // a booking's marked statements (db/prepared.ts): named on the first connection, plain on the second,
      // the same outcome either way, twice each (the second use of a name runs the statement prepared)
      const hours = ['10:00', '10:30', '11:00', '11:30'];
      for (const [i, db] of [prepared, plain, prepared, plain].entries()) {
        const made = await createBooking(
          db,
          snapshot,
          { ...booking, slot: `2026-06-02 ${hours[i]}:00`, submission: { email: `b${i}@example.com` } },
          inst.clock(),
        );
        assert.equal(made.start, Date.UTC(2026, 5, 2, 10 + Math.floor(i / 2), (i % 2) * 30));
        await assert.rejects(
          createBooking(db, snapshot, { ...booking, slot: `2026-06-02 ${hours[i]}:00` }, inst.clock()),
          /Time not available/,
        );
      }
      const marked = (await statementsOf(prepared)).filter((name) => /^booking_[0-9a-f]{24}$/.test(name));
      assert.ok(marked.length >= 2, `the booking's check and store are named: ${marked.join(', ')}`);
      assert.deepEqual(await statementsOf(plain), []);
    } finally {
      await prepared.close();
      await plain.close();
      await inst.close();
    }
  },
);

test(
  "PostgreSQL: the read of a schedule's changes keeps to its indexes in a prepared statement's generic plan, with the table's statistics",
  { skip: !POSTGRES_AVAILABLE },
  async () => {
    const inst = await testInstallation('postgres', { now: NOW, timezone: 'UTC', schedules: [deskSchedule()] });
    const client = new pg.Client({ connectionString: inst.url });
    await client.connect();
    try {
      const scheduleId = inst.schedules[0]!.id;
      const reasonId = inst.schedules[0]!.reasons[0]!.id;
      // 5,000 bookings a half hour apart, unchanged since version 0, and the statistics ANALYZE gathers
      await client.query(
        `with c as (insert into customers (email_key, email, first_name, last_name, phone, created_at, updated_at)
           values ('plan@example.com', 'plan@example.com', 'P', '', '', 0, 0) returning id)
         insert into bookings (details_id, schedule_id, reason_id, customer_id, start_at, end_at, status, source, answers, created_at, changed_in)
         select 'plan-' || n, $1, $2, c.id, $3::int8 + n::int8 * 1800000, $3::int8 + n::int8 * 1800000 + 1800000, 'booked', 'admin', '{}', 0, 0
         from c, generate_series(1, 5000) n`,
        [scheduleId, reasonId, NOW],
      );
      await client.query('update bookings set changed_in = 1 where details_id = $1', ['plan-2500']);
      await client.query('analyze bookings');
      // the plan PostgreSQL settles on for any parameters (it did scan every booking: a hash join over a seq scan)
      await client.query('set plan_cache_mode = force_generic_plan');
      await client.query(`prepare changes_around as ${POSTGRES_CHANGES_AROUND}`);
      const args = [scheduleId, 0, scheduleId, HOUR, HOUR].join(', ');
      const plan = (await client.query(`explain (analyze, costs off) execute changes_around(${args})`)).rows
        .map((r) => r['QUERY PLAN'])
        .join('\n');
      assert.doesNotMatch(plan, /Seq Scan on bookings/, plan);
      assert.match(plan, /bookings_schedule_changes/, plan);
      assert.match(plan, /bookings_schedule_span/, plan);
      // and it reads right: the one change, and the bookings starting from an hour before it to an hour after its end
      const { rows } = await client.query({ text: `execute changes_around(${args})`, rowMode: 'array' });
      assert.deepEqual(
        rows.map((r) => Number(r[0])),
        [1, 0, 0, 0, 0, 0],
        JSON.stringify(rows),
      );
    } finally {
      await client.end();
      await inst.close();
    }
  },
);
