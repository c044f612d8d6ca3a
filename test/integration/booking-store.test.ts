// A booking on PostgreSQL is checked against the bookings read outside the schedule's lock and stored by one
// statement that takes the lock only if none of the bookings that matter changed meanwhile (issue 13). These
// tests hold the races that could let a second booking into a taken time: a booking committed between the
// read and the statement, and one holding the lock while the statement waits for it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, testInstallation, type TestInstallation } from '../support/installation.js';
import { createBooking } from '../../src/app/bookings.js';
import { SnapshotCache } from '../../src/app/snapshot.js';
import { bumpBookingsVersion, insertBooking } from '../../src/db/repos/booking.repository.js';
import { saveCustomer } from '../../src/db/repos/customer.repository.js';
import { bookingsSeen, storeBookingIfUnchanged, type BookingToStore } from '../../src/db/repos/booking-store.repository.js';
import { sql } from 'kysely';

// Monday 2026-06-01 06:00Z = 08:00 in Berlin
const NOW = Date.UTC(2026, 5, 1, 6, 0);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** 09:00 in Berlin on a day of June 2026 */
const nineOn = (day: number) => Date.UTC(2026, 5, day, 7, 0);

describeEachDatabase('bookings checked outside the lock', (dialect) => {
  let inst: TestInstallation;
  before(async () => {
    inst = await testInstallation(dialect, {
      now: NOW,
      schedules: [
        {
          name: 'Desk',
          slot_interval_minutes: 30,
          horizon_days: 7,
          weekly_hours: ALL_WEEK([['09:00', '12:00']]),
          // an hour on a 30-minute grid: 09:00 and 09:30 overlap
          reasons: [{ name: 'Talk', duration_minutes: 60 }],
          form: { email: { label: 'E-mail', input_type: 'email', required: true } },
        },
      ],
    });
  });
  after(() => inst.close());

  const book = async (slot: string, email: string) => {
    const schedule = inst.schedules[0]!;
    const snapshot = await new SnapshotCache(inst.db).current();
    const request = { scheduleId: schedule.id, reasonId: schedule.reasons[0]!.id, slot, submission: { email }, source: 'api' as const };
    return createBooking(inst.db, snapshot, request, NOW).then(
      (created) => ({ ok: true as const, created }),
      (error: Error) => ({ ok: false as const, error: error.message }),
    );
  };

  test('concurrent bookings of overlapping times: exactly one is taken, and the others answer "Time not available"', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, i) => book(i % 2 ? '2026-06-03 09:30:00' : '2026-06-03 09:00:00', `race${i}@example.com`)),
    );
    assert.equal(outcomes.filter((o) => o.ok).length, 1, JSON.stringify(outcomes));
    for (const o of outcomes) if (!o.ok) assert.equal(o.error, 'Time not available');
  });

  test('concurrent bookings of times apart are all taken, each once, under versions of their own', async () => {
    const slots = ['09:00', '10:00', '11:00'].flatMap((t) => [`2026-06-04 ${t}:00`, `2026-06-05 ${t}:00`]);
    const outcomes = await Promise.all(slots.map((slot, i) => book(slot, `apart${i}@example.com`)));
    assert.ok(
      outcomes.every((o) => o.ok),
      JSON.stringify(outcomes),
    );
    const { rows } = await sql<{ changed_in: number }>`select changed_in from bookings where customer_id in
      (select id from customers where email like 'apart%')`.execute(inst.db.kysely);
    assert.equal(new Set(rows.map((r) => Number(r.changed_in))).size, slots.length);
  });

  // the statement itself exists on PostgreSQL only (SQLite's bookings are serial from BEGIN IMMEDIATE on)
  const postgresOnly = { skip: dialect !== 'postgres' && 'the lock-free statement exists on PostgreSQL only' };

  const toStore = (start: number, email: string): BookingToStore => {
    const schedule = inst.schedules[0]!;
    return {
      customer: { email, firstName: '', lastName: '', phone: '' },
      booking: {
        detailsId: `d-${email}`,
        scheduleId: schedule.id,
        reasonId: schedule.reasons[0]!.id,
        start,
        end: start + HOUR,
        source: 'api',
        answers: { email },
        createdAt: NOW,
      },
      messages: [{ kind: 'booking_confirmation', recipient: email }],
      audit: { at: NOW, actorKind: 'api', actorAdminId: null, actorLabel: '', action: 'booking.created', summary: `Talk, ${email}` },
    };
  };
  const seenAround = (start: number) =>
    bookingsSeen(inst.db.kysely, inst.schedules[0]!.id, inst.schedules[0]!.reasons[0]!.id, start - DAY, start + DAY);

  /** A booking at `start` in a transaction that stays open (holding the schedule's lock) until `commit` is called. */
  const bookingHoldingTheLock = async (start: number, email: string) => {
    let commit!: () => void;
    const committing = new Promise<void>((resolve) => (commit = resolve));
    let locked!: () => void;
    const lockHeld = new Promise<void>((resolve) => (locked = resolve));
    const done = inst.db.write(async (trx) => {
      const changedIn = (await bumpBookingsVersion(trx, inst.schedules[0]!.id))!;
      const customer = await saveCustomer(trx, { email, firstName: '', lastName: '', phone: '' }, NOW);
      await insertBooking(trx, { ...toStore(start, email).booking, customerId: customer.id, changedIn });
      locked();
      await committing;
    });
    await lockHeld;
    return { commit, done };
  };

  /** Resolves once a statement of this database waits for a lock (the statement under test has reached the schedule's row). */
  const waitingForLock = async () => {
    for (;;) {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'`.execute(inst.db.kysely);
      if (Number(rows[0]!.n) > 0) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  test('a booking in the range committed after the read: nothing is stored', postgresOnly, async () => {
    const start = nineOn(6);
    const seen = await seenAround(start);
    assert.ok((await book('2026-06-06 11:00:00', 'between@example.com')).ok);
    const other = await seenAround(start);
    assert.ok(other.version! > seen.version!);
    assert.equal(await storeBookingIfUnchanged(inst.db.kysely, toStore(start, 'late@example.com'), seen), null);
  });

  test('a booking in the range holding the lock while the statement waits: nothing is stored after its commit', postgresOnly, async () => {
    const start = nineOn(7);
    const seen = await seenAround(start);
    const holder = await bookingHoldingTheLock(start + HOUR / 2, 'holder@example.com');
    const storing = storeBookingIfUnchanged(inst.db.kysely, toStore(start, 'waiting@example.com'), seen);
    await waitingForLock();
    holder.commit();
    await holder.done;
    // its own snapshot (from before the holder's commit) has no clash; the function's does
    assert.equal(await storing, null);
    const { rows } = await sql`select 1 from customers where email = 'waiting@example.com'`.execute(inst.db.kysely);
    assert.equal(rows.length, 0, 'not even the customer is saved');
  });

  test('a booking elsewhere holding the lock: the statement stores after it, under the next version', postgresOnly, async () => {
    const start = nineOn(8);
    const seen = await seenAround(start);
    const holder = await bookingHoldingTheLock(start + 2 * DAY, 'far@example.com');
    const storing = storeBookingIfUnchanged(inst.db.kysely, toStore(start, 'after@example.com'), seen);
    await waitingForLock();
    holder.commit();
    await holder.done;
    const stored = await storing;
    assert.ok(stored, 'stored');
    assert.equal(stored.changedIn, seen.version! + 2);
    const { rows } = await sql<{ kind: string }>`select kind from outbox where booking_id = ${stored.bookingId}`.execute(inst.db.kysely);
    assert.deepEqual(
      rows.map((r) => r.kind),
      ['booking_confirmation'],
    );
    // the audit event in the same statement
    const audit = await sql<{ action: string; actor_kind: string; summary: string }>`select action, actor_kind, summary from audit_events
      where booking_id = ${stored.bookingId}`.execute(inst.db.kysely);
    assert.deepEqual(audit.rows, [{ action: 'booking.created', actor_kind: 'api', summary: 'Talk, after@example.com' }]);
  });

  // last: the reason stays retired
  test(
    'a retirement of the reason holding the lock while the statement waits: nothing is stored, and the read after tells why',
    postgresOnly,
    async () => {
      const start = nineOn(5);
      const seen = await seenAround(start);
      assert.equal(seen.reasonInService, true);
      let commit!: () => void;
      const committing = new Promise<void>((resolve) => (commit = resolve));
      let locked!: () => void;
      const lockHeld = new Promise<void>((resolve) => (locked = resolve));
      const retirement = inst.db.write(async (trx) => {
        await bumpBookingsVersion(trx, inst.schedules[0]!.id);
        await sql`update reasons set retired_at = ${NOW} where id = ${inst.schedules[0]!.reasons[0]!.id}`.execute(trx);
        locked();
        await committing;
      });
      await lockHeld;
      const storing = storeBookingIfUnchanged(inst.db.kysely, toStore(start, 'retired@example.com'), seen);
      await waitingForLock();
      commit();
      await retirement;
      // its own snapshot (from before the retirement's commit) has the reason in service; the function's does not
      assert.equal(await storing, null);
      assert.equal((await seenAround(start)).reasonInService, false);
      const { rows } = await sql`select 1 from customers where email = 'retired@example.com'`.execute(inst.db.kysely);
      assert.equal(rows.length, 0, 'not even the customer is saved');
      assert.deepEqual(await book('2026-06-05 09:00:00', 'retired@example.com'), { ok: false, error: 'Reason not found' });
    },
  );
});
