// One rule, four calls (issue 3): on random installations, every time /slots lists is listed by /days for
// its day, accepted by /forms and bookable by POST /bookings; every other well-formed time is refused by
// /forms and POST /bookings with 404. Through real HTTP handling (app.inject), on SQLite and PostgreSQL.
// A failure prints fast-check's seed; rerun it with FC_SEED=<seed>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describeEachDatabase } from '../support/databases.js';
import { testInstallation, type TestInstallation } from '../support/installation.js';
import { setOperatorSetting } from '../../src/app/installation.js';
import { cancelBooking, createBooking } from '../../src/app/bookings.js';
import { SnapshotCache } from '../../src/app/snapshot.js';
import { connect } from '../../src/db/connect.js';
import { formatDate, formatLocalDateTime, formatUtc, parseDate } from '../../src/core/time/calendar.js';
import { TimeZone } from '../../src/core/time/zone.js';

const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

// now near a DST change of each zone (2026), so the short horizons cross it
const ZONES: [string, number][] = [
  ['Europe/Berlin', Date.UTC(2026, 2, 28, 22, 30)],
  ['Europe/Berlin', Date.UTC(2026, 9, 24, 21, 0)],
  ['America/New_York', Date.UTC(2026, 10, 1, 3, 0)],
  ['Australia/Lord_Howe', Date.UTC(2026, 3, 4, 10, 0)],
  ['Pacific/Chatham', Date.UTC(2026, 8, 26, 12, 0)],
  ['Asia/Kolkata', Date.UTC(2026, 5, 1, 18, 29)],
  ['UTC', Date.UTC(2026, 5, 1, 23, 59)],
];

const clock = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;

const dayHours = fc.uniqueArray(fc.integer({ min: 0, max: 48 }), { minLength: 0, maxLength: 4 }).map((marks) => {
  const cuts = [...marks].sort((a, b) => a - b).map((m) => m * 30);
  const hours: [string, string][] = [];
  for (let i = 0; i + 1 < cuts.length; i += 2) hours.push([clock(cuts[i]!), clock(cuts[i + 1]!)]);
  return hours;
});

const scheduleArb = fc.record({
  name: fc.constant('Random'),
  slot_interval_minutes: fc.constantFrom(15, 20, 30, 45, 60),
  min_notice_minutes: fc.constantFrom(0, 0, 30, 90),
  horizon_days: fc.integer({ min: 0, max: 3 }),
  capacity: fc.integer({ min: 1, max: 2 }),
  buffer_before_minutes: fc.constantFrom(0, 0, 15),
  buffer_after_minutes: fc.constantFrom(0, 0, 10, 30),
  weekly_hours: fc.tuple(...WEEKDAYS.map(() => dayHours)).map((days) => Object.fromEntries(WEEKDAYS.map((d, i) => [d, days[i]!]))),
  reasons: fc.tuple(fc.constantFrom(15, 30, 45, 60, 90), fc.constantFrom(20, 60, 120)).map(([a, b]) => [
    { name: 'Short', duration_minutes: a },
    { name: 'Long', duration_minutes: b },
  ]),
});

const installationArb = fc.record({
  zone: fc.constantFrom(...ZONES),
  schedule: scheduleArb,
  /** which free times to book, as fractions of the list */
  picks: fc.array(fc.double({ min: 0, max: 0.999, noNaN: true }), { minLength: 1, maxLength: 3 }),
  /** well-formed times to try that /slots does not list: day offset, minute */
  probes: fc.array(fc.tuple(fc.integer({ min: -1, max: 4 }), fc.integer({ min: 0, max: 1439 })), { minLength: 5, maxLength: 15 }),
});

const submission = { email: 'one.rule@example.com' };

async function get(inst: TestInstallation, url: string) {
  const res = await inst.api({ method: 'GET', url });
  return { status: res.statusCode, body: res.json<{ data: any }>() };
}

async function book(inst: TestInstallation, schedule: number, reason: number, slot: string) {
  const res = await inst.api({ method: 'POST', url: '/api/bookings', payload: { schedule, reason, slot, submission } });
  return { status: res.statusCode, body: res.json() };
}

/** Checks the rule for one reason; books the picked free times. */
async function checkReason(
  inst: TestInstallation,
  zone: TimeZone,
  scheduleId: number,
  reasonId: number,
  picks: number[],
  probes: [number, number][],
) {
  const q = `schedule=${scheduleId}&reason=${reasonId}`;
  for (const pick of [...picks, null]) {
    const days = await get(inst, `/api/days?${q}`);
    assert.equal(days.status, 200);
    const listed = new Set<string>(days.body.data);
    const today = zone.localDayOf(inst.clock());
    const free = new Set<string>();
    for (let d = today - 1; d <= today + 4; d++) {
      const slots = await get(inst, `/api/slots?${q}&day=${formatDate(d)}`);
      if (slots.status === 404) {
        assert.ok(!listed.has(formatDate(d)), `${formatDate(d)} is listed by /days but /slots says 404`);
        continue;
      }
      assert.equal(slots.status, 200);
      assert.equal(listed.has(formatDate(d)), slots.body.data.length > 0, `/days and /slots disagree on ${formatDate(d)}`);
      for (const s of slots.body.data as string[]) {
        assert.ok(s.startsWith(formatDate(d)), `${s} listed for ${formatDate(d)}`);
        free.add(s);
      }
    }
    for (const s of free) {
      assert.equal((await get(inst, `/api/forms?${q}&slot=${encodeURIComponent(s)}`)).status, 200, `/forms refuses listed ${s}`);
    }
    for (const [offset, minute] of probes) {
      const s = formatLocalDateTime(today + offset, minute);
      if (free.has(s)) continue;
      assert.equal((await get(inst, `/api/forms?${q}&slot=${encodeURIComponent(s)}`)).status, 404, `/forms accepts unlisted ${s}`);
      assert.equal((await book(inst, scheduleId, reasonId, s)).status, 404, `POST /bookings accepts unlisted ${s}`);
    }
    if (pick === null || free.size === 0) break;
    const chosen = [...free].sort()[Math.floor(pick * free.size)]!;
    const created = await book(inst, scheduleId, reasonId, chosen);
    assert.equal(created.status, 201, `POST /bookings refuses listed ${chosen}: ${JSON.stringify(created.body)}`);
    const day = parseDate(chosen.slice(0, 10))!;
    const [h, m] = chosen.slice(11, 16).split(':').map(Number);
    assert.equal(created.body.slot, formatUtc(zone.startInstant(day, h! * 60 + m!)!), "the booking starts at the time's first occurrence");
  }
}

describeEachDatabase('one rule, four calls', (dialect) => {
  test('on random installations /slots, /days, /forms and POST /bookings agree', { timeout: 300_000 }, async () => {
    const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;
    try {
      await fc.assert(
        fc.asyncProperty(installationArb, async ({ zone: [zoneName, now], schedule, picks, probes }) => {
          const inst = await testInstallation(dialect, { timezone: zoneName, now, schedules: [schedule] });
          try {
            await setOperatorSetting(inst.db, 'api.rate_limit_per_minute', '9999999');
            const zone = TimeZone.of(zoneName);
            const [imported] = inst.schedules;
            for (const reason of imported!.reasons) await checkReason(inst, zone, imported!.id, reason.id, picks, probes);
          } finally {
            await inst.close();
          }
        }),
        { numRuns: Number(process.env.FC_RUNS ?? 4), ...(seed === undefined ? {} : { seed }) },
      );
    } catch (error) {
      console.error(error instanceof Error ? error.message : error);
      throw error;
    }
  });

  test('fall-back: 02:30 on 2026-10-25 in Berlin books its first occurrence, 00:30Z', async () => {
    const inst = await testInstallation(dialect, {
      now: Date.UTC(2026, 9, 24, 12),
      schedules: [
        {
          name: 'Night',
          slot_interval_minutes: 30,
          weekly_hours: { sun: [['01:00', '04:00']] },
          reasons: [{ name: 'Talk', duration_minutes: 30 }],
        },
      ],
    });
    try {
      const [s] = inst.schedules;
      const q = `schedule=${s!.id}&reason=${s!.reasons[0]!.id}`;
      const slots = await get(inst, `/api/slots?${q}&day=2026-10-25`);
      assert.deepEqual(
        slots.body.data,
        ['01:00', '01:30', '02:00', '02:30', '03:00', '03:30'].map((t) => `2026-10-25 ${t}:00`),
      );
      const created = await book(inst, s!.id, s!.reasons[0]!.id, '2026-10-25 02:30:00');
      assert.equal(created.status, 201);
      assert.equal(created.body.slot, '2026-10-25T00:30:00Z');
      // the second 02:30 (01:30Z) was never offered and the first is now taken
      assert.equal((await book(inst, s!.id, s!.reasons[0]!.id, '2026-10-25 02:30:00')).status, 404);
    } finally {
      await inst.close();
    }
  });

  test('spring-forward: 02:30 on 2026-03-29 in Berlin does not exist: /forms and POST /bookings answer 404', async () => {
    const inst = await testInstallation(dialect, {
      now: Date.UTC(2026, 2, 28, 12),
      schedules: [
        {
          name: 'Night',
          slot_interval_minutes: 30,
          weekly_hours: { sun: [['01:00', '05:00']] },
          reasons: [{ name: 'Talk', duration_minutes: 60 }],
        },
      ],
    });
    try {
      const [s] = inst.schedules;
      const q = `schedule=${s!.id}&reason=${s!.reasons[0]!.id}`;
      assert.equal((await get(inst, `/api/forms?${q}&slot=2026-03-29%2002:30:00`)).status, 404);
      assert.equal((await book(inst, s!.id, s!.reasons[0]!.id, '2026-03-29 02:30:00')).status, 404);
      // a 60-minute booking at 01:30 lasts until 03:30 local: 01:00 and 03:00 overlap it, 03:30 does not
      assert.equal((await book(inst, s!.id, s!.reasons[0]!.id, '2026-03-29 01:30:00')).body.slot, '2026-03-29T00:30:00Z');
      assert.deepEqual((await get(inst, `/api/slots?${q}&day=2026-03-29`)).body.data, ['2026-03-29 03:30:00', '2026-03-29 04:00:00']);
    } finally {
      await inst.close();
    }
  });

  test('/days is recomputed after a booking made outside the API (as by another process) and as time passes', async () => {
    const inst = await testInstallation(dialect, {
      now: Date.UTC(2026, 5, 1, 6, 0), // 08:00 in Berlin
      schedules: [
        {
          name: 'One a day',
          slot_interval_minutes: 60,
          horizon_days: 2,
          weekly_hours: Object.fromEntries(WEEKDAYS.map((d) => [d, [['10:00', '11:00']]])),
          reasons: [{ name: 'Talk', duration_minutes: 60 }],
        },
      ],
    });
    try {
      const [s] = inst.schedules;
      const q = `schedule=${s!.id}&reason=${s!.reasons[0]!.id}`;
      assert.deepEqual((await get(inst, `/api/days?${q}`)).body.data, ['2026-06-01', '2026-06-02', '2026-06-03']);
      // as another process would: its own connection, nothing in this process is told
      const other = connect(inst.url);
      try {
        const snapshot = await new SnapshotCache(other).current();
        await createBooking(
          other,
          snapshot,
          { scheduleId: s!.id, reasonId: s!.reasons[0]!.id, slot: '2026-06-02 10:00:00', submission, source: 'admin' },
          inst.clock(),
        );
      } finally {
        await other.close();
      }
      assert.deepEqual((await get(inst, `/api/days?${q}`)).body.data, ['2026-06-01', '2026-06-03']);
      // 10:00 today starts at 08:00Z; one millisecond later it has passed
      inst.clock.now = Date.UTC(2026, 5, 1, 8, 0);
      assert.deepEqual((await get(inst, `/api/days?${q}`)).body.data, ['2026-06-01', '2026-06-03']);
      inst.clock.now += 1;
      assert.deepEqual((await get(inst, `/api/days?${q}`)).body.data, ['2026-06-03']);
      // at midnight the window moves one day on
      inst.clock.now = Date.UTC(2026, 5, 1, 22, 0);
      assert.deepEqual((await get(inst, `/api/days?${q}`)).body.data, ['2026-06-03', '2026-06-04']);
    } finally {
      await inst.close();
    }
  });
  test('/slots and /forms are recomputed after a booking or cancellation outside the API and as time passes', async () => {
    const inst = await testInstallation(dialect, {
      now: Date.UTC(2026, 5, 1, 6, 0), // 08:00 in Berlin
      schedules: [
        {
          name: 'Mornings',
          slot_interval_minutes: 30,
          horizon_days: 2,
          weekly_hours: Object.fromEntries(WEEKDAYS.map((d) => [d, [['10:00', '12:00']]])),
          reasons: [{ name: 'Talk', duration_minutes: 60 }],
        },
      ],
    });
    try {
      const [s] = inst.schedules;
      const q = `schedule=${s!.id}&reason=${s!.reasons[0]!.id}`;
      const slots = async (day: string) => (await get(inst, `/api/slots?${q}&day=${day}`)).body.data;
      const form = async (slot: string) => (await get(inst, `/api/forms?${q}&slot=${encodeURIComponent(slot)}`)).status;
      const all = ['2026-06-02 10:00:00', '2026-06-02 10:30:00', '2026-06-02 11:00:00'];
      assert.deepEqual(await slots('2026-06-02'), all);
      assert.equal(await form('2026-06-02 10:30:00'), 200);
      // as another process would: its own connection, nothing in this process is told
      const other = connect(inst.url);
      try {
        const snapshot = await new SnapshotCache(other).current();
        const booked = await createBooking(
          other,
          snapshot,
          { scheduleId: s!.id, reasonId: s!.reasons[0]!.id, slot: '2026-06-02 11:00:00', submission, source: 'admin' },
          inst.clock(),
        );
        assert.deepEqual(await slots('2026-06-02'), ['2026-06-02 10:00:00']);
        assert.equal(await form('2026-06-02 10:30:00'), 404);
        assert.equal(await form('2026-06-02 10:00:00'), 200);
        assert.equal(await cancelBooking(other, booked.detailsId, inst.clock()), true);
      } finally {
        await other.close();
      }
      assert.deepEqual(await slots('2026-06-02'), all);
      assert.equal(await form('2026-06-02 10:30:00'), 200);
      // today: 10:00 starts at 08:00Z; one millisecond later it has passed
      inst.clock.now = Date.UTC(2026, 5, 1, 8, 0);
      assert.deepEqual(await slots('2026-06-01'), ['2026-06-01 10:00:00', '2026-06-01 10:30:00', '2026-06-01 11:00:00']);
      inst.clock.now += 1;
      assert.deepEqual(await slots('2026-06-01'), ['2026-06-01 10:30:00', '2026-06-01 11:00:00']);
      assert.equal(await form('2026-06-01 10:00:00'), 404);
      // at midnight the window moves on: yesterday is no longer a day of the window
      inst.clock.now = Date.UTC(2026, 5, 1, 22, 0);
      assert.equal((await get(inst, `/api/slots?${q}&day=2026-06-01`)).status, 404);
      assert.deepEqual(await slots('2026-06-04'), ['2026-06-04 10:00:00', '2026-06-04 10:30:00', '2026-06-04 11:00:00']);
    } finally {
      await inst.close();
    }
  });
});
