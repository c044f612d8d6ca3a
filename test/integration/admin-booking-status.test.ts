// Issue 11's "Reschedule" and "Statuses" through real HTTP handling (app.inject), on SQLite and PostgreSQL:
// the office moves a booking (another time, another reason) and the customer is e-mailed a change; marks a
// begun booking completed or no-show without freeing its time; undoes a cancellation only while the time is
// free, re-checked under the schedule's lock (an undo racing a booking for the last place: one wins).
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, testInstallation, type TestInstallation } from '../support/installation.js';
import { AdminBrowser } from '../support/admin-browser.js';
import { cancelBooking, createBooking } from '../../src/app/bookings.js';
import { restoreBooking } from '../../src/app/booking-status.js';
import { SnapshotCache } from '../../src/app/snapshot.js';
import { addWebhookEndpoint } from '../../src/app/webhooks.js';
import { retireReason } from '../../src/app/admin-schedules.js';
import { Conflict } from '../../src/core/errors.js';
import { parseCsv } from '../support/csv.js';

// Monday 2026-06-01 08:00 in Berlin (06:00Z)
const NOW = Date.UTC(2026, 5, 1, 6, 0);
/** a Berlin wall time of June 2026 (UTC+2) as an instant */
const berlin = (day: number, hour: number, minute = 0) => Date.UTC(2026, 5, day, hour - 2, minute);

describeEachDatabase('admin area: reschedule, completed / no-show, undo of a cancellation', (dialect) => {
  let inst: TestInstallation;
  let browser: AdminBrowser;
  let scheduleId: number;
  let talk: number;
  let long: number;
  let spare: number;

  before(async () => {
    inst = await testInstallation(dialect, {
      now: NOW,
      schedules: [
        {
          name: 'Desk',
          slot_interval_minutes: 30,
          horizon_days: 30,
          capacity: 1,
          weekly_hours: ALL_WEEK([['09:00', '17:00']]),
          reasons: [
            { name: 'Talk', duration_minutes: 30 },
            { name: 'Long talk', duration_minutes: 60 },
            { name: 'Spare', duration_minutes: 30 },
          ],
          form: {
            first_name: { label: 'First name', input_type: 'text', required: true },
            email: { label: 'E-mail', input_type: 'email', required: false },
          },
        },
      ],
    });
    scheduleId = inst.schedules[0]!.id;
    [talk, long, spare] = inst.schedules[0]!.reasons.map((r) => r.id) as [number, number, number];
    await addWebhookEndpoint(inst.db, { url: 'http://127.0.0.1:9/hook', events: ['booking.rescheduled', 'booking.restored'] }, NOW, true);
    browser = new AdminBrowser(inst);
    assert.equal((await browser.signIn('admin@example.com', 'correct horse battery')).statusCode, 303);
  });
  after(() => inst.close());
  beforeEach(() => {
    inst.clock.now = NOW;
  });

  const book = async (slot: string, reason = talk, name = 'Ada') => {
    const res = await inst.api({
      method: 'POST',
      url: '/api/bookings',
      payload: { schedule: scheduleId, reason, slot, submission: { first_name: name, email: `${name.toLowerCase()}@example.com` } },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json<{ booking_details_id: string }>().booking_details_id;
  };
  const row = (detailsId: string) =>
    inst.db.kysely.selectFrom('bookings').selectAll().where('details_id', '=', detailsId).executeTakeFirstOrThrow();
  const messages = async (bookingId: number) =>
    (
      await inst.db.kysely
        .selectFrom('outbox')
        .select(['kind', 'recipient', 'state', 'skip_reason'])
        .where('booking_id', '=', bookingId)
        .orderBy('id')
        .execute()
    ).map((m) => `${m.kind} ${m.recipient} ${m.state}${m.skip_reason ? ` (${m.skip_reason})` : ''}`);
  const events = async (bookingId: number) =>
    (
      await inst.db.kysely
        .selectFrom('webhook_deliveries')
        .select(['event_type', 'body'])
        .where('booking_id', '=', bookingId)
        .orderBy('id')
        .execute()
    ).map((d) => ({ type: d.event_type, booking: (JSON.parse(d.body) as { data: { booking: Record<string, any> } }).data.booking }));
  const slots = async (day: string, reason = talk) =>
    (await inst.api({ method: 'GET', url: `/api/slots?schedule=${scheduleId}&reason=${reason}&day=${day}` }))
      .json<{ data: string[] }>()
      .data.map((s) => s.slice(11, 16));

  test('Reschedule moves the same booking to another free time and reason; the customer is e-mailed a change', async () => {
    const ref = await book('2026-06-02 09:00:00');
    const before = await row(ref);
    const details = await browser.get(`/admin/bookings/${ref}`);
    assert.match(details.body, new RegExp(`href="/admin/bookings/${ref}/reschedule">Reschedule</a>`));

    const form = await browser.get(`/admin/bookings/${ref}/reschedule`);
    assert.equal(form.statusCode, 200);
    assert.match(form.body, /Free times on 2026-06-02 for Talk/);
    // its own time is listed (it does not block its own move)
    assert.match(form.body, /09:00 \(its time now\)/);
    // the next days with a free time, as links that need no JavaScript
    const nextDay = /<p id="free-days">Days with a free time for Talk: <a href="([^"]+)">2026-06-01<\/a>/.exec(form.body);
    assert.ok(nextDay, 'the days with a free time are linked');
    assert.match((await browser.get(nextDay[1]!.replaceAll('&amp;', '&'))).body, /Free times on 2026-06-01 for Talk/);
    const shown = await browser.post(`/admin/bookings/${ref}/reschedule`, { reason: String(long), day: '2026-06-03', show: '1' });
    assert.equal(shown.statusCode, 200);
    assert.match(shown.body, /Free times on 2026-06-03 for Long talk/);
    assert.equal((await row(ref)).start_at, before.start_at, '"Show free times" moves nothing');

    const moved = await browser.post(`/admin/bookings/${ref}/reschedule`, { reason: String(long), day: '2026-06-03', time: '10:00' });
    assert.equal(moved.statusCode, 303, moved.body);
    assert.equal(moved.headers.location, `/admin/bookings/${ref}?saved=moved`);
    const after = await row(ref);
    assert.equal(after.id, before.id);
    assert.equal(after.customer_id, before.customer_id);
    assert.equal(after.answers, before.answers);
    assert.equal(after.status, 'booked');
    assert.equal(after.reason_id, long);
    assert.equal(Number(after.start_at), berlin(3, 10));
    assert.equal(Number(after.end_at), berlin(3, 11), "the new reason's duration");
    assert.equal(Number(after.sequence), Number(before.sequence) + 1);
    assert.ok(Number(after.changed_in) > Number(before.changed_in));
    // a change, not a cancellation and a new booking
    assert.deepEqual(await messages(after.id), [
      'booking_confirmation ada@example.com queued',
      'booking_notification desk@example.com queued',
      'booking_moved ada@example.com queued',
    ]);
    const [event] = await events(after.id);
    assert.equal(event!.type, 'booking.rescheduled');
    assert.equal(event!.booking.reason.name, 'Long talk');
    assert.equal(event!.booking.start_local, '2026-06-03 10:00:00');
    assert.ok((await slots('2026-06-02')).includes('09:00'), 'the old time is free on the next request');
    assert.ok(!(await slots('2026-06-03')).includes('10:30'), 'the new span is taken');

    const page = await browser.get(`/admin/bookings/${ref}?saved=moved`);
    assert.match(page.body, /Rescheduled\. The customer is e-mailed the new time\./);
    assert.match(page.body, /<dd id="moved-from">from 2026-06-02 09:00<\/dd>/);
    assert.match(page.body, /<dt>Reason<\/dt><dd>Long talk<\/dd>/);
    // sent again (Back, a double click): nothing more happens
    const again = await browser.post(`/admin/bookings/${ref}/reschedule`, { reason: String(long), day: '2026-06-03', time: '10:00' });
    assert.equal(again.headers.location, `/admin/bookings/${ref}?saved=unmoved`);
    assert.equal((await messages(after.id)).length, 3);
  });

  test('a time not free for the chosen reason is refused (409) with the free times listed again; nothing changes', async () => {
    const ref = await book('2026-06-04 09:00:00');
    await book('2026-06-04 11:00:00', talk, 'Bob');
    const before = await row(ref);
    // 10:30 is free for a 30-minute talk, not for a 60-minute one (Bob at 11:00)
    const refused = await browser.post(`/admin/bookings/${ref}/reschedule`, { reason: String(long), day: '2026-06-04', time: '10:30' });
    assert.equal(refused.statusCode, 409);
    assert.match(refused.body, /10:30 on 2026-06-04 is not a free time for Long talk \(60 min\)/);
    assert.match(refused.body, /Free times on 2026-06-04 for Long talk/);
    assert.match(refused.body, /value="10:00:00"/);
    assert.doesNotMatch(refused.body, /value="10:30:00"/);
    assert.deepEqual(await row(ref), before);
    const taken = await browser.post(`/admin/bookings/${ref}/reschedule`, { reason: String(talk), day: '2026-06-04', time: '11:00' });
    assert.equal(taken.statusCode, 409);
    assert.deepEqual(await row(ref), before);
    const ok = await browser.post(`/admin/bookings/${ref}/reschedule`, { reason: String(talk), day: '2026-06-04', time: '10:30' });
    assert.equal(ok.statusCode, 303);
  });

  test('completed and no-show: only once begun, never on a cancelled booking, and the time stays taken', async () => {
    // today 09:00-10:00, marked at 09:05
    const ref = await book('2026-06-01 09:00:00', long);
    const future = await book('2026-06-01 10:30:00', talk, 'Cleo');
    const { id } = await row(ref);
    const early = await browser.post(`/admin/bookings/${ref}/attendance`, { attendance: 'completed' }, `/admin/bookings/${future}`);
    assert.equal(early.statusCode, 409);
    assert.match(early.body, /has not begun yet/);
    assert.equal((await row(ref)).attendance, null);
    assert.match((await browser.get(`/admin/bookings/${ref}`)).body, /Completed or no-show can be marked from the appointment's start/);

    inst.clock.now = berlin(1, 9, 5);
    const version = async () =>
      Number(
        (await inst.db.kysely.selectFrom('schedules').select('bookings_version').where('id', '=', scheduleId).executeTakeFirstOrThrow())
          .bookings_version,
      );
    const versionBefore = await version();
    const marked = await browser.post(`/admin/bookings/${ref}/attendance`, { attendance: 'completed' }, `/admin/bookings/${ref}`);
    assert.equal(marked.statusCode, 303);
    const r = await row(ref);
    assert.equal(r.status, 'booked');
    assert.equal(r.attendance, 'completed');
    assert.equal(Number(r.attendance_at), berlin(1, 9, 5));
    assert.equal(await version(), versionBefore, 'no free time changed, no bookings version bumped');
    const details = await browser.get(`/admin/bookings/${ref}?saved=completed`);
    assert.match(details.body, /<dd id="booking-status">completed \(marked 2026-06-01 09:05\)<\/dd>/);
    assert.match(details.body, /Mark no-show/);
    assert.match(details.body, /Clear the mark/);
    // still blocks the rest of its hour: 09:30 is not free, 10:00 is
    const free = await slots('2026-06-01');
    assert.ok(!free.includes('09:30'), free.join(' '));
    assert.ok(free.includes('10:00'), free.join(' '));

    const list = async (status: string) =>
      (await browser.get(`/admin/bookings?when=all&status=${status}`)).body.match(/href="\/admin\/bookings\/([A-Za-z0-9_-]{24})"/g) ?? [];
    assert.equal((await list('completed')).length, 1);
    assert.ok((await list('completed'))[0]!.includes(ref));
    assert.equal((await list('no_show')).length, 0);
    assert.match((await browser.get('/admin/bookings?when=all&status=completed')).body, /<td>completed<\/td>/);
    const csv = parseCsv((await browser.get('/admin/bookings.csv?when=all&status=completed')).body);
    assert.equal(csv.length, 2);
    assert.equal(csv[1]![csv[0]!.indexOf('status')], 'completed');

    assert.equal(
      (await browser.post(`/admin/bookings/${ref}/attendance`, { attendance: 'no_show' }, `/admin/bookings/${ref}`)).statusCode,
      303,
    );
    assert.equal((await row(ref)).attendance, 'no_show');
    assert.equal((await list('no_show')).length, 1);
    assert.equal((await browser.post(`/admin/bookings/${ref}/attendance`, { attendance: '' }, `/admin/bookings/${ref}`)).statusCode, 303);
    assert.equal((await row(ref)).attendance, null);

    assert.ok(await cancelBooking(inst.db, future, inst.clock()));
    inst.clock.now = berlin(1, 10, 35);
    const cancelled = await browser.post(`/admin/bookings/${future}/attendance`, { attendance: 'no_show' }, `/admin/bookings/${ref}`);
    assert.equal(cancelled.statusCode, 409);
    assert.match(cancelled.body, /A cancelled booking cannot be marked completed or no-show/);
    assert.equal((await row(future)).attendance, null);
    assert.deepEqual(await messages(id), ['booking_confirmation ada@example.com queued', 'booking_notification desk@example.com queued']);
  });

  test('Undo cancellation books the same booking again and e-mails a new confirmation; the unsent cancellation is not sent', async () => {
    const ref = await book('2026-06-08 14:00:00');
    assert.ok(await cancelBooking(inst.db, ref, inst.clock()));
    const cancelled = await row(ref);
    assert.ok((await slots('2026-06-08')).includes('14:00'));
    const details = await browser.get(`/admin/bookings/${ref}`);
    assert.match(details.body, /href="\/admin\/bookings\/[^"]+\/restore">Undo cancellation<\/a>/);
    const confirm = await browser.get(`/admin/bookings/${ref}/restore`);
    assert.equal(confirm.statusCode, 200);
    assert.match(confirm.body, /the customer is e-mailed a new confirmation at <strong>ada@example.com<\/strong>/);
    assert.match(confirm.body, /Confirm undo/);

    const done = await browser.post(`/admin/bookings/${ref}/restore`, {});
    assert.equal(done.statusCode, 303);
    assert.equal(done.headers.location, `/admin/bookings/${ref}?saved=restored`);
    const restored = await row(ref);
    assert.equal(restored.status, 'booked');
    assert.equal(restored.cancelled_at, null);
    assert.equal(restored.cancelled_by, null);
    assert.equal(Number(restored.sequence), Number(cancelled.sequence) + 1, 'past the cancellation, for the calendar');
    assert.ok(Number(restored.changed_in) > Number(cancelled.changed_in));
    assert.equal(restored.start_at, cancelled.start_at);
    assert.ok(!(await slots('2026-06-08')).includes('14:00'), 'taken again on the next request');
    assert.deepEqual(await messages(restored.id), [
      'booking_confirmation ada@example.com skipped (the cancellation was undone: a new confirmation replaces it)',
      'booking_notification desk@example.com skipped (the cancellation was undone: a new confirmation replaces it)',
      'booking_cancellation ada@example.com skipped (the cancellation was undone: a new confirmation replaces it)',
      'booking_cancellation_notification desk@example.com skipped (the cancellation was undone: a new confirmation replaces it)',
      'booking_confirmation ada@example.com queued',
      'booking_notification desk@example.com queued',
    ]);
    const [event] = await events(restored.id);
    assert.equal(event!.type, 'booking.restored');
    assert.equal(event!.booking.status, 'booked');
    assert.equal(event!.booking.cancelled_at, null);
    assert.match((await browser.get(`/admin/bookings/${ref}?saved=restored`)).body, /Cancellation undone: booked again/);
    // sent twice: the same outcome, nothing queued twice
    assert.equal((await browser.post(`/admin/bookings/${ref}/restore`, {}, `/admin/bookings/${ref}`)).statusCode, 303);
    assert.equal((await messages(restored.id)).length, 6);
  });

  test('Undo is refused when the time was taken, has passed, or the reason is retired', async () => {
    const ref = await book('2026-06-09 14:00:00');
    assert.ok(await cancelBooking(inst.db, ref, inst.clock()));
    await book('2026-06-09 14:00:00', talk, 'Bob');
    const taken = await browser.post(`/admin/bookings/${ref}/restore`, {}, `/admin/bookings/${ref}`);
    assert.equal(taken.statusCode, 409);
    assert.match(taken.body, /The time is no longer free/);
    assert.equal((await row(ref)).status, 'cancelled');

    const spareRef = await book('2026-06-10 14:00:00', spare, 'Dan');
    assert.ok(await cancelBooking(inst.db, spareRef, inst.clock()));
    await retireReason(inst.db, scheduleId, spare, inst.clock());
    const retired = await browser.get(`/admin/bookings/${spareRef}/restore`);
    assert.equal(retired.statusCode, 409);
    assert.match(retired.body, /Its reason is retired/);
    await assert.rejects(restoreBooking(inst.db, await new SnapshotCache(inst.db).current(), spareRef, inst.clock()), Conflict);

    const soon = await book('2026-06-01 13:00:00', talk, 'Eve');
    assert.ok(await cancelBooking(inst.db, soon, inst.clock()));
    inst.clock.now = berlin(1, 13, 0);
    const passed = await browser.get(`/admin/bookings/${soon}/restore`);
    assert.equal(passed.statusCode, 409);
    assert.match(passed.body, /time has passed/);
    assert.equal((await browser.post(`/admin/bookings/${soon}/restore`, {}, `/admin/bookings/${soon}`)).statusCode, 409);
    assert.equal((await row(soon)).status, 'cancelled');
  });

  test('an undo racing a booking for the last place: exactly one wins', async () => {
    for (const [i, day] of ['2026-06-15', '2026-06-16', '2026-06-17', '2026-06-18'].entries()) {
      const slot = `${day} 12:00:00`;
      const ref = await book(slot, talk, `Race${i}`);
      assert.ok(await cancelBooking(inst.db, ref, inst.clock()));
      const snapshot = await new SnapshotCache(inst.db).current();
      const submission = { first_name: 'Rival', email: 'rival@example.com' };
      const outcomes = await Promise.allSettled([
        restoreBooking(inst.db, snapshot, ref, inst.clock()),
        createBooking(inst.db, snapshot, { scheduleId, reasonId: talk, slot, submission, source: 'api' }, inst.clock()),
      ]);
      assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1, JSON.stringify(outcomes));
      const booked = await inst.db.kysely
        .selectFrom('bookings')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('schedule_id', '=', scheduleId)
        .where('status', '=', 'booked')
        .where('start_at', '=', berlin(15 + i, 12))
        .executeTakeFirstOrThrow();
      assert.equal(Number(booked.n), 1);
    }
  });
});
