// Issue 11's "book by hand with staff overrides" through real HTTP handling (app.inject), on SQLite and
// PostgreSQL: each override relaxes exactly its rule, only when ticked, in the booking's locked re-check;
// the booking records it; over capacity is never silent and never possible through the API; e-mailing the
// customer is optional; an existing customer fills the form.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { countRows, describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, CONTACT_FORM, deskSchedule, testInstallation, type TestInstallation } from '../support/installation.js';
import { AdminBrowser } from '../support/admin-browser.js';

// Monday 2026-06-01 08:00 in Berlin (06:00Z)
const NOW = Date.UTC(2026, 5, 1, 6, 0);

describeEachDatabase('admin area: book by hand with staff overrides', (dialect) => {
  let inst: TestInstallation;
  let browser: AdminBrowser;
  let scheduleId: number;
  let reasonId: number;
  let url: string;

  before(async () => {
    inst = await testInstallation(dialect, {
      now: NOW,
      schedules: [
        deskSchedule({
          min_notice_minutes: 120,
          horizon_days: 30,
          capacity: 1,
          weekly_hours: ALL_WEEK([['09:00', '17:00']]),
          form: CONTACT_FORM,
        }),
      ],
    });
    scheduleId = inst.schedules[0]!.id;
    reasonId = inst.schedules[0]!.reasons[0]!.id;
    url = `/admin/schedules/${scheduleId}/book`;
    browser = await AdminBrowser.signedIn(inst);
  });
  after(() => inst.close());

  const count = () => countRows(inst.db, 'bookings');
  const version = async () =>
    Number(
      (await inst.db.kysely.selectFrom('schedules').select('bookings_version').where('id', '=', scheduleId).executeTakeFirstOrThrow())
        .bookings_version,
    );
  /** a fresh form each time (its own one-time token), as "Book by hand" opens one */
  const bookByHand = (day: string, time: string, extra: Record<string, string> = {}) =>
    browser.post(url, { reason: String(reasonId), day, time, 'answer.first_name': 'Walk-in', email_customer: 'on', book: '1', ...extra });
  const rowOf = async (location: string) => {
    const detailsId = /\/admin\/bookings\/([^?]+)/.exec(location)![1]!;
    return inst.db.kysely.selectFrom('bookings').selectAll().where('details_id', '=', detailsId).executeTakeFirstOrThrow();
  };

  test('over capacity only when ticked, in the locked re-check; recorded, shown, and the bookings version bumped', async () => {
    const api = await inst.api({
      method: 'POST',
      url: '/api/bookings',
      payload: { schedule: scheduleId, reason: reasonId, slot: '2026-06-02 09:00:00', submission: { first_name: 'Ada' } },
    });
    assert.equal(api.statusCode, 201);
    const before = await count();

    const refused = await bookByHand('2026-06-02', '09:00:00');
    assert.equal(refused.statusCode, 409);
    assert.match(refused.body, /09:00 on 2026-06-02 is not a free time for Talk/);
    // the other three overrides do not relax the capacity
    const otherRules = await bookByHand('2026-06-02', '09:00:00', {
      'override.notice': 'on',
      'override.horizon': 'on',
      'override.hours': 'on',
    });
    assert.equal(otherRules.statusCode, 409);
    assert.match(otherRules.body, /even with the rules ticked set aside/);
    assert.equal(await count(), before, 'no silent double booking');

    // the page lists the full time only with the box ticked, marked
    const shown = await browser.post(url, { reason: String(reasonId), day: '2026-06-02', 'override.capacity': 'on', show: '1' });
    assert.match(
      shown.body,
      /<label class="override" title="only with the rules set aside"><input type="radio" name="time" id="slot-0" value="09:00:00"> 09:00 \*/,
    );

    const v = await version();
    const ok = await bookByHand('2026-06-02', '09:00:00', { 'override.capacity': 'on' });
    assert.equal(ok.statusCode, 303, ok.body);
    const row = await rowOf(String(ok.headers.location));
    assert.equal(row.staff_overrides, 'capacity');
    assert.equal(row.source, 'admin');
    assert.equal(await version(), v + 1);
    assert.equal(Number(row.changed_in), v + 1);
    assert.equal(await count(), before + 1);
    const details = await browser.get(String(ok.headers.location));
    assert.match(details.body, /id="booking-overrides"><strong>over capacity<\/strong>/);
    const list = await browser.get('/admin/bookings');
    assert.match(list.body, /admin area \(by hand\) <strong class="override">· over capacity<\/strong>/);
  });

  test('the API cannot set a rule aside: a full time stays full, whatever the body says', async () => {
    const before = await count();
    const res = await inst.api({
      method: 'POST',
      url: '/api/bookings',
      payload: {
        schedule: scheduleId,
        reason: reasonId,
        slot: '2026-06-02 09:00:00',
        submission: { first_name: 'Eve' },
        overrides: ['capacity'],
      },
    });
    assert.ok(res.statusCode >= 400 && res.statusCode < 500, res.body);
    assert.equal(await count(), before);
  });

  test('notice, horizon and hours: each refused without its box, booked and recorded with it', async () => {
    const cases: [string, string, string][] = [
      ['2026-06-01', '09:00:00', 'notice'], // 60 minutes ahead, the notice is 120
      ['2026-07-20', '10:00:00', 'horizon'], // 49 days ahead, the horizon is 30
      ['2026-06-03', '18:00:00', 'hours'], // open 09:00-17:00
    ];
    for (const [day, time, rule] of cases) {
      const before = await count();
      const refused = await bookByHand(day, time);
      assert.equal(refused.statusCode, 409, `${rule} without the box`);
      assert.equal(await count(), before);
      const ok = await bookByHand(day, time, { [`override.${rule}`]: 'on' });
      assert.equal(ok.statusCode, 303, `${rule} with the box: ${ok.body.slice(0, 200)}`);
      assert.equal((await rowOf(String(ok.headers.location))).staff_overrides, rule);
    }
    // never in the past, notice set aside or not
    const past = await bookByHand('2026-06-01', '07:00:00', { 'override.notice': 'on', 'override.hours': 'on' });
    assert.equal(past.statusCode, 409);
  });

  test('e-mail the customer unticked: no confirmation queued, the office is notified; ticked: both', async () => {
    const quiet = await bookByHand('2026-06-04', '09:00:00', { 'answer.email': 'quiet@example.com', email_customer: '' });
    assert.equal(quiet.statusCode, 303);
    const quietRow = await rowOf(String(quiet.headers.location));
    const messages = (id: number) =>
      inst.db.kysely.selectFrom('outbox').select(['kind', 'recipient']).where('booking_id', '=', id).orderBy('kind').execute();
    assert.deepEqual(await messages(quietRow.id), [{ kind: 'booking_notification', recipient: 'desk@example.com' }]);
    const told = await bookByHand('2026-06-04', '10:00:00', { 'answer.email': 'told@example.com' });
    assert.deepEqual(await messages((await rowOf(String(told.headers.location))).id), [
      { kind: 'booking_confirmation', recipient: 'told@example.com' },
      { kind: 'booking_notification', recipient: 'desk@example.com' },
    ]);
  });

  test('an existing customer found by phone fills the form; the booking is theirs', async () => {
    const first = await bookByHand('2026-06-05', '09:00:00', {
      'answer.first_name': 'Grace',
      'answer.last_name': 'Hopper',
      'answer.email': 'grace@example.com',
      'answer.phone': '01632 960 777',
    });
    const grace = (await rowOf(String(first.headers.location))).customer_id;
    const found = await browser.post(url, { reason: String(reasonId), day: '2026-06-05', customer_q: '960 777', find: '1' });
    assert.equal(found.statusCode, 200);
    assert.match(found.body, new RegExp(`name="use_customer" value="${grace}" formnovalidate>Use Grace Hopper</button>`));
    const filled = await browser.post(url, { reason: String(reasonId), day: '2026-06-05', use_customer: String(grace) });
    assert.match(filled.body, /name="answer\.last_name" type="text" value="Hopper"/);
    assert.match(filled.body, /name="answer\.email" type="email" value="grace@example.com"/);
    const again = await bookByHand('2026-06-05', '10:00:00', { 'answer.first_name': 'Grace', 'answer.email': 'grace@example.com' });
    assert.equal((await rowOf(String(again.headers.location))).customer_id, grace);
  });
});
