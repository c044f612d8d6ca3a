// The read path of issue 13 (docs/architecture.md, "A request's path"): /days answers brought up to date
// by rescanning only the days the changed bookings touch, one computation per answer at a time, and on
// PostgreSQL version reads shared by concurrent requests. Whatever the path, a request must answer as a
// fresh computation from the committed bookings would (docs/decisions.md §1): the changes here are made by
// another connection, as another process or instance would make them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect as tcpConnect, type Socket } from 'node:net';
import { once } from 'node:events';
import { describeEachDatabase, POSTGRES_AVAILABLE } from '../support/databases.js';
import { ALL_WEEK, testInstallation, type TestInstallation } from '../support/installation.js';
import { connect, type Db } from '../../src/db/connect.js';
import { SnapshotCache, type Snapshot } from '../../src/app/snapshot.js';
import { availabilityContext, findReason, findSchedule, listDays, listSlots } from '../../src/app/availability.js';
import { cancelBooking, createBooking } from '../../src/app/bookings.js';
import { getSchedule, updateSchedule } from '../../src/app/admin-schedules.js';
import { bookedTimes } from '../../src/db/repos/booking.repository.js';
import { bumpConfigVersion } from '../../src/db/repos/installation.repository.js';
import { freeDays, freeSlotsOn, relevantBookingStarts, bookingWindow } from '../../src/core/availability/free-slots.js';
import { formatDate, formatLocalDateTime } from '../../src/core/time/calendar.js';

const NOW = Date.UTC(2026, 5, 1, 6, 0);
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/** A small seeded generator, so that a failing sequence can be replayed (the seed is in the message). */
function random(seed: number) {
  let state = seed >>> 0 || 1;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  return {
    next,
    below: (n: number) => Math.floor(next() * n),
    pick: <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!,
  };
}

// short days and buffers, so a few bookings fill a day and the neighbouring days' free times depend on them
const SCHEDULE = {
  name: 'Vaccinations',
  slot_interval_minutes: 30,
  horizon_days: 12,
  capacity: 1,
  buffer_before_minutes: 15,
  buffer_after_minutes: 30,
  // around midnight too: a booking just after midnight takes free times of the day before
  weekly_hours: ALL_WEEK([
    ['00:00', '01:00'],
    ['08:00', '10:30'],
    ['22:30', '24:00'],
  ]),
  reasons: [
    { name: 'Shot', duration_minutes: 30 },
    { name: 'Check-up', duration_minutes: 90 },
  ],
};

/** What the API's gate and a handler do: the versions in one read, the snapshot of that config version. */
async function asRequest(db: Db, snapshots: SnapshotCache, scheduleId: number) {
  const versions = await db.hot.versions(scheduleId);
  return { versions, snapshot: await snapshots.at(versions.config) };
}

/** /days and one day's /slots computed from scratch from the committed bookings (no cache involved). */
async function fresh(db: Db, snapshot: Snapshot, scheduleId: number, reasonId: number, now: number, day: number) {
  const schedule = findSchedule(snapshot, scheduleId);
  const ctx = availabilityContext(snapshot, schedule, findReason(schedule, reasonId), now);
  const window = bookingWindow(ctx);
  const { from, to } = relevantBookingStarts(ctx, window.firstDay, window.lastDay);
  const bookings = await bookedTimes(db.kysely, scheduleId, from, to);
  return {
    days: freeDays(ctx, bookings).map(formatDate),
    slots: freeSlotsOn(ctx, day, bookings)?.map((s) => formatLocalDateTime(s.day, s.minute)) ?? null,
  };
}

describeEachDatabase('the read path', (dialect) => {
  test('answers equal a fresh computation after random bookings, cancellations and edits by another connection', async () => {
    const seed = Number(process.env.READ_PATH_SEED ?? Date.now() % 1_000_000);
    const rnd = random(seed);
    const inst: TestInstallation = await testInstallation(dialect, { now: NOW, timezone: 'Europe/Berlin', schedules: [SCHEDULE] });
    // the other process: its own connection and snapshot cache
    const other = connect(inst.url);
    try {
      const { db, clock } = inst;
      const scheduleId = inst.schedules[0]!.id;
      const reasonIds = inst.schedules[0]!.reasons.map((r) => r.id);
      const snapshots = new SnapshotCache(db);
      const otherSnapshots = new SnapshotCache(other);
      const booked: string[] = [];
      let changes = 0;
      let served = 0;
      for (let step = 0; step < 120; step++) {
        const action = rnd.next();
        if (action < 0.45) {
          // a booking by the other process at a free time of a random reason
          const snapshot = await otherSnapshots.current();
          const reasonId = rnd.pick(reasonIds);
          const { days } = await fresh(other, snapshot, scheduleId, reasonId, clock(), 0);
          if (days.length) {
            const day = rnd.pick(days);
            const slots = await listSlots(other, snapshot, scheduleId, reasonId, day, clock());
            if (slots.items.length) {
              const created = await createBooking(
                other,
                snapshot,
                { scheduleId, reasonId, slot: rnd.pick(slots.items), submission: { email: `c${step}@example.com` }, source: 'api' },
                clock(),
              );
              booked.push(created.detailsId);
              changes++;
            }
          }
        } else if (action < 0.6 && booked.length) {
          // a cancellation by the other process (the admin area)
          const [detailsId] = booked.splice(rnd.below(booked.length), 1);
          assert.equal(await cancelBooking(other, detailsId!, clock()), true);
          changes++;
        } else if (action < 0.65) {
          // a schedule edit by the other process: buffers change which days are free
          const stored = await getSchedule(other, scheduleId);
          const settings = { ...stored.settings, bufferAfterMinutes: rnd.pick([0, 30, 90]) };
          await updateSchedule(other, scheduleId, {
            name: stored.name,
            settings,
            weeklyHours: stored.weeklyHours,
            exceptions: stored.exceptions,
            reminderMinutesBefore: stored.reminderMinutesBefore,
          });
          changes++;
        } else if (action < 0.75) {
          // time passes: free times fall into the past, and now and then a day ends
          clock.now += rnd.pick([1, 7, 29, 61, 240]) * MINUTE + (rnd.next() < 0.1 ? DAY : 0);
        }
        // requests of this process, several at once (they share computations), each checked against a fresh one
        const reasonId = rnd.pick(reasonIds);
        const now = clock();
        const requests = await Promise.all(
          Array.from({ length: 3 }, async () => {
            const { versions, snapshot } = await asRequest(db, snapshots, scheduleId);
            const days = await listDays(db, snapshot, scheduleId, reasonId, now, versions);
            return { snapshot, days: days.items };
          }),
        );
        const expected = await fresh(db, requests[0]!.snapshot, scheduleId, reasonId, now, 0);
        for (const { days } of requests) assert.deepEqual(days, expected.days, `seed ${seed}, step ${step}: /days`);
        if (expected.days.length) {
          const dayText = rnd.pick(expected.days);
          const { versions, snapshot } = await asRequest(db, snapshots, scheduleId);
          const slots = await listSlots(db, snapshot, scheduleId, reasonId, dayText, now, versions);
          const day = Math.floor(Date.parse(`${dayText}T00:00:00Z`) / DAY);
          assert.deepEqual(
            slots.items,
            (await fresh(db, snapshot, scheduleId, reasonId, now, day)).slots,
            `seed ${seed}, step ${step}: /slots`,
          );
        }
        served++;
      }
      assert.ok(changes > 40 && served === 120, `${changes} changes`);
    } finally {
      await other.close();
      await inst.close();
    }
  });

  test('a booking, a cancellation and an edit by another connection are in the very next answer', async () => {
    const inst = await testInstallation(dialect, { now: NOW, timezone: 'UTC', schedules: [{ ...SCHEDULE, horizon_days: 2 }] });
    const other = connect(inst.url);
    try {
      const { db, clock } = inst;
      const scheduleId = inst.schedules[0]!.id;
      const reasonId = inst.schedules[0]!.reasons[1]!.id; // 90 minutes: one per morning
      const snapshots = new SnapshotCache(db);
      const days = async () => {
        const { versions, snapshot } = await asRequest(db, snapshots, scheduleId);
        return (await listDays(db, snapshot, scheduleId, reasonId, clock(), versions)).items;
      };
      assert.deepEqual(await days(), ['2026-06-01', '2026-06-02', '2026-06-03']);
      // fill 2026-06-02: its night (00:00-01:00 is too short for 90 minutes), morning (08:00-10:30) and evening (22:30-24:00)
      const snapshot = await new SnapshotCache(other).current();
      const book = (slot: string) =>
        createBooking(other, snapshot, { scheduleId, reasonId, slot, submission: { email: 'a@example.com' }, source: 'api' }, clock());
      await book('2026-06-02 08:00:00');
      assert.deepEqual(await days(), ['2026-06-01', '2026-06-02', '2026-06-03'], 'the evening is still free');
      const evening = await book('2026-06-02 22:30:00');
      assert.deepEqual(await days(), ['2026-06-01', '2026-06-03'], 'the day is full: the next answer says so');
      assert.equal(await cancelBooking(other, evening.detailsId, clock()), true);
      assert.deepEqual(await days(), ['2026-06-01', '2026-06-02', '2026-06-03'], 'cancelled: free again at once');
      // an edit (the config version): closing 2026-06-03
      const stored = await getSchedule(other, scheduleId);
      await updateSchedule(other, scheduleId, {
        name: stored.name,
        settings: stored.settings,
        weeklyHours: stored.weeklyHours,
        exceptions: [{ date: '2026-06-03', hours: [] }],
        reminderMinutesBefore: stored.reminderMinutesBefore,
      });
      assert.deepEqual(await days(), ['2026-06-01', '2026-06-02']);
    } finally {
      await other.close();
      await inst.close();
    }
  });
});

/** A TCP relay to PostgreSQL that holds every answer of the server for `delayMs`: a slow network. */
async function slowRelay(targetPort: number, delayMs: number) {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = tcpConnect({ host: '127.0.0.1', port: targetPort });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => setTimeout(() => client.destroyed || client.write(chunk), delayMs));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

test(
  'PostgreSQL: a request arriving while a shared version read is on its way is not answered by it',
  { skip: !POSTGRES_AVAILABLE },
  async () => {
    const inst = await testInstallation('postgres', { now: NOW, schedules: [SCHEDULE] });
    const url = new URL(inst.url);
    const relay = await slowRelay(Number(url.port || 5432), 150);
    url.host = `127.0.0.1:${relay.port}`;
    const slow = connect(url.href);
    try {
      const scheduleId = inst.schedules[0]!.id;
      await slow.hot.versions(scheduleId); // a connection in the pool, opened before the clock matters
      const before = await inst.db.hot.versions(scheduleId);
      // a read sent now and answered after the commit below lands
      const early = slow.hot.versions(scheduleId);
      await new Promise((resolve) => setTimeout(resolve, 20));
      await inst.db.write((trx) => bumpConfigVersion(trx));
      // arrives after the commit, while the early read is still on its way
      const late = slow.hot.versions(scheduleId);
      const joined = slow.hot.versions(null);
      assert.equal((await early).config, before.config, 'the early read was taken before the commit');
      assert.equal((await late).config, before.config + 1, 'the next request after the commit sees it');
      assert.equal((await joined).config, before.config + 1);
      assert.equal((await late).bookings, before.bookings);
    } finally {
      await slow.close();
      await relay.close();
      await inst.close();
    }
  },
);

test('SQLite: the requests of one turn share one version read, taken after the last of them arrived', async () => {
  const inst = await testInstallation('sqlite', { now: NOW, schedules: [SCHEDULE] });
  assert.match(inst.url, /^sqlite:/);
  // another process's connection, committing synchronously between two requests of the same turn
  const { default: SQLite } = await import('better-sqlite3');
  const other = new SQLite(inst.url.slice('sqlite:'.length));
  try {
    const scheduleId = inst.schedules[0]!.id;
    const before = await inst.db.hot.versions(scheduleId);
    const early = inst.db.hot.versions(scheduleId);
    const earlyWithout = inst.db.hot.versions(null);
    other.prepare('update meta set config_version = config_version + 1 where id = 1').run();
    other.prepare('update schedules set bookings_version = bookings_version + 1 where id = ?').run(scheduleId);
    // arrives after the commit: must see it, though a read for its schedule was already asked for in this turn
    const late = inst.db.hot.versions(scheduleId);
    const lateWithout = inst.db.hot.versions(null);
    for (const [name, read] of Object.entries({ early, late })) {
      assert.deepEqual(await read, { config: before.config + 1, scheduleId, bookings: before.bookings! + 1 }, name);
    }
    for (const read of [earlyWithout, lateWithout])
      assert.deepEqual(await read, { config: before.config + 1, scheduleId: null, bookings: null });
    // the next turn reads again
    other.prepare('update meta set config_version = config_version + 1 where id = 1').run();
    assert.equal((await inst.db.hot.versions(scheduleId)).config, before.config + 2);
  } finally {
    other.close();
    await inst.close();
  }
});
