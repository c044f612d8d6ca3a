// The schedule editor (issue 11, "Confusing: make it clear") through real HTTP on a real port, on SQLite and
// PostgreSQL, as a browser without JavaScript posts it: opening hours from time inputs per weekday ("Add
// interval" and "Remove" show the form again as typed, saving nothing; a day's hours typed as text win);
// saving hours that leave upcoming bookings outside stops at a page listing them ("Confirm" saves, "Back"
// keeps what was typed); the booking form editor adds rows and saves several at once with every problem at
// once; the saved-message stands beside the part that was saved.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, testInstallation, type TestInstallation } from '../support/installation.js';
import { signedInAdmin, type AdminClient } from '../support/admin-http.js';
import { getSchedule } from '../../src/app/admin-schedules.js';
import { scheduleValues } from '../../src/http/admin/schedule-form.js';

// Monday 2026-06-01 06:00Z = 08:00 in Berlin
const NOW = Date.UTC(2026, 5, 1, 6, 0);
const SCHEDULE = {
  name: 'Editor',
  slot_interval_minutes: 60,
  horizon_days: 14,
  weekly_hours: ALL_WEEK([['09:00', '12:00']]),
  reasons: [{ name: 'Visit', duration_minutes: 60 }],
  form: { first_name: { label: 'First name', input_type: 'text', required: true } },
};

/** The form's values with one weekday's intervals replaced by `pairs` (as the time inputs send them). */
function withDay(values: Record<string, string>, day: string, pairs: [string, string][]): Record<string, string> {
  const kept = Object.fromEntries(Object.entries(values).filter(([k]) => !k.startsWith(`hours_${day}_`)));
  pairs.forEach(([from, to], i) => Object.assign(kept, { [`hours_${day}_${i}_from`]: from, [`hours_${day}_${i}_to`]: to }));
  return kept;
}

const timeValue = (page: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page)?.[1];

describeEachDatabase('admin: the schedule editor', (dialect) => {
  let inst: TestInstallation;
  let base: string;
  let admin: AdminClient;
  let id: number;
  let path: string;
  let bookingId: number;

  const stored = () => getSchedule(inst.db, id);
  const values = async () => scheduleValues(await stored());

  before(async () => {
    inst = await testInstallation(dialect, { now: NOW, schedules: [SCHEDULE] });
    id = inst.schedules[0]!.id;
    path = `/admin/schedules/${id}`;
    const booked = await inst.api({
      method: 'POST',
      url: '/api/bookings',
      payload: { schedule: id, reason: inst.schedules[0]!.reasons[0]!.id, slot: '2026-06-03 10:00:00', submission: { first_name: 'Ada' } },
    });
    assert.equal(booked.statusCode, 201, booked.body);
    bookingId = (await inst.db.kysely.selectFrom('bookings').select('id').executeTakeFirstOrThrow()).id;
    await inst.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(inst.app.server.address() as AddressInfo).port}`;
    admin = await signedInAdmin(base);
  });
  after(() => inst.close());

  describe('opening hours', () => {
    test('the page shows each interval as two time inputs and one empty pair to add one', async () => {
      const page = await (await admin.get(path)).text();
      assert.equal(timeValue(page, 'hours_mon_0_from'), '09:00');
      assert.equal(timeValue(page, 'hours_mon_0_to'), '12:00');
      assert.equal(timeValue(page, 'hours_mon_1_from'), '');
      assert.match(page, /<input type="time" id="hours_sun_1_to" name="hours_sun_1_to" value="">/);
      assert.match(
        page,
        /<button class="secondary small" name="_action" value="add:mon" formaction="\/admin\/schedules\/\d+#hours-mon" formnovalidate data-add-interval="mon">Add interval<\/button>/,
      );
    });

    test('saved from time inputs: empty pairs ignored, 00:00 as an end is midnight, a day typed as text ("8-12") wins', async () => {
      let form = withDay(await values(), 'mon', [
        ['13:00', '00:00'],
        ['', ''],
        ['08:00', '12:00'],
      ]);
      form = withDay(form, 'tue', [['10:00', '11:00']]);
      form['weekly_hours.tue'] = '8-12, 13.30-17';
      const res = await admin.post(path, form);
      assert.equal(res.status, 303);
      assert.equal(res.headers.get('location'), `${path}?saved=hours#hours`);
      const s = await stored();
      assert.deepEqual(s.weeklyHours.mon, [
        { start: 480, end: 720 },
        { start: 780, end: 1440 },
      ]);
      assert.deepEqual(s.weeklyHours.tue, [
        { start: 480, end: 720 },
        { start: 810, end: 1020 },
      ]);
      // the message beside the hours, announced
      const page = await (await admin.get(res.headers.get('location')!)).text();
      assert.match(
        page,
        /<h2 id="hours">Weekly hours<\/h2>\s*<p class="flash" role="status">Schedule saved, with the new opening hours.<\/p>/,
      );
      assert.doesNotMatch(page, /<main><h1>[^<]*<\/h1>\s*<p class="flash"/, 'not at the top');
      assert.equal(timeValue(page, 'hours_mon_1_to'), '00:00', 'the end of the day is shown as 00:00');
    });

    test('"Add interval" and "Remove" without JavaScript show the form again as typed, saving nothing', async () => {
      const before = await stored();
      const typed = { ...withDay(await values(), 'wed', [['07:00', '08:00']]), name: 'Typed name', _action: 'add:wed' };
      const added = await admin.post(path, typed);
      assert.equal(added.status, 200);
      const page = await added.text();
      assert.equal(timeValue(page, 'hours_wed_0_from'), '07:00');
      assert.equal(timeValue(page, 'hours_wed_1_from'), '', 'one more empty pair');
      assert.match(page, /name="name" type="text" value="Typed name"/);

      const removed = await admin.post(path, {
        ...withDay(typed, 'wed', [
          ['07:00', '08:00'],
          ['09:00', '10:00'],
        ]),
        _action: 'remove:wed:0',
      });
      const after = await removed.text();
      assert.equal(timeValue(after, 'hours_wed_0_from'), undefined);
      assert.equal(timeValue(after, 'hours_wed_1_from'), '09:00');
      assert.deepEqual(await stored(), before, 'nothing saved');
    });

    test('a pair with one time missing is named beside its day', async () => {
      const res = await admin.post(path, withDay(await values(), 'thu', [['09:00', '']]));
      assert.equal(res.status, 400);
      const page = await res.text();
      assert.match(
        page,
        /<p class="error" id="weekly_hours.thu-error">An interval needs a start and an end: fill both times, or empty both.<\/p>/,
      );
      assert.match(page, /<a href="#weekly_hours.thu">Weekly hours, Thursday: An interval needs a start and an end/);
      // a long value is refused without being quoted back
      const long = await admin.post(path, withDay(await values(), 'fri', [['9'.repeat(5_000), '12:00']]));
      assert.equal(long.status, 400);
      const longPage = await long.text();
      assert.match(longPage, /Weekly hours, Friday: A time is written HH:MM, e.g. 09:30./);
      assert.ok(longPage.split('9'.repeat(5_000)).length <= 2, 'quoted at most once, as the typed value');
    });
  });

  describe('bookings left outside the new hours', () => {
    test('saving stops at a page listing them; "Back" keeps what was typed; "Confirm" saves; a booking seen by nobody asks again', async () => {
      const original = await stored();
      const form = withDay(await values(), 'wed', [['09:00', '10:00']]);
      const warned = await admin.post(path, form);
      assert.equal(warned.status, 200);
      const page = await warned.text();
      assert.match(page, /1 upcoming booking would be outside the new opening hours/);
      assert.match(page, /2026-06-03 10:00<\/a> Ada, Visit/);
      assert.match(page, /It stays booked: nobody is e-mailed/);
      assert.match(page, /<button class="delete" name="_action" value="confirm">Confirm: save the hours<\/button>/);
      assert.deepEqual(await stored(), original, 'nothing saved yet');

      const fields = Object.fromEntries(
        [...page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]),
      );
      assert.equal(fields._outside_confirmed, String(bookingId));
      const back = await admin.post(path, { ...fields, _action: 'back' });
      assert.equal(back.status, 200);
      assert.equal(timeValue(await back.text(), 'hours_wed_0_to'), '10:00', 'the typed hours are kept');
      assert.deepEqual(await stored(), original);

      // confirmed for no booking (as if the booking came in after the page was shown): asked again
      const again = await admin.post(path, { ...fields, _outside_confirmed: '', _action: 'confirm' });
      assert.equal(again.status, 200);
      assert.match(await again.text(), /Confirm: save the hours/);

      const confirmed = await admin.post(path, { ...fields, _action: 'confirm' });
      assert.equal(confirmed.status, 303);
      assert.deepEqual((await stored()).weeklyHours.wed, [{ start: 540, end: 600 }]);
      const status = await inst.db.kysely.selectFrom('bookings').select('status').executeTakeFirstOrThrow();
      assert.equal(status.status, 'booked', 'it stays booked');
      assert.match(await (await admin.get(confirmed.headers.get('location')!)).text(), /1 upcoming booking is outside the opening hours/);

      // already outside: a save that leaves it there asks nothing, and the message goes beside the schedule's form
      const renamed = await admin.post(path, { ...(await values()), name: 'Editor 2' });
      assert.equal(renamed.status, 303);
      assert.equal(renamed.headers.get('location'), `${path}?saved=saved#schedule`);
      const page2 = await (await admin.get(renamed.headers.get('location')!)).text();
      assert.match(page2, /<form method="post" action="[^"]+" id="schedule">[^]*?<p class="flash" role="status">Schedule saved.<\/p>/);
    });

    test('an exception that closes a booked day warns too', async () => {
      await admin.post(path, { ...withDay(await values(), 'wed', [['09:00', '12:00']]), _outside_confirmed: String(bookingId) });
      const res = await admin.post(path, { ...(await values()), exceptions: '2026-06-03 closed' });
      assert.equal(res.status, 200);
      assert.match(await res.text(), /2026-06-03 10:00<\/a> Ada, Visit/);
      assert.deepEqual((await stored()).exceptions, []);
    });
  });

  describe('booking form editor', () => {
    const row = (i: number, name: string, extra: Record<string, string> = {}) => ({
      [`f${i}_position`]: String(i + 1),
      [`f${i}_name`]: name,
      [`f${i}_label`]: name,
      [`f${i}_form_type`]: 'textbox',
      [`f${i}_input_type`]: 'text',
      ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [`f${i}_${k}`, v])),
    });

    test('"Add field" without JavaScript shows one more empty row, keeping what was typed; several rows are saved at once', async () => {
      const typed = { rows: '3', ...row(0, 'first_name'), ...row(1, 'phone'), ...row(2, '', { label: '' }) };
      const added = await admin.post(`${path}/form`, { ...typed, _action: 'add_row' }, path);
      assert.equal(added.status, 200);
      const page = await added.text();
      assert.match(page, /name="rows" value="4"/);
      assert.match(page, /id="f1_name" name="f1_name" value="phone"/);
      assert.match(page, /id="f3_name" name="f3_name" value=""/);
      assert.deepEqual(
        (await stored()).form.map((f) => f.name),
        ['first_name'],
        'nothing saved',
      );

      const saved = await admin.post(
        `${path}/form`,
        {
          rows: '5',
          ...row(0, 'first_name'),
          ...row(1, 'phone'),
          ...row(2, 'notes', { form_type: 'textarea' }),
          ...row(3, 'city'),
          ...row(4, '', { label: '' }),
        },
        path,
      );
      assert.equal(saved.status, 303);
      assert.equal(saved.headers.get('location'), `${path}?saved=form#form`);
      assert.deepEqual(
        (await stored()).form.map((f) => f.name),
        ['first_name', 'phone', 'notes', 'city'],
      );
      const after = await (await admin.get(saved.headers.get('location')!)).text();
      assert.match(after, /id="form-editor">[^]*?<p class="flash" role="status">Booking form saved.<\/p>/);
    });

    test('every problem at once, the rows typed into shown again (empty rows between them dropped), nothing saved', async () => {
      const res = await admin.post(
        `${path}/form`,
        {
          rows: '4',
          ...row(0, 'first_name'),
          ...row(1, '', { label: '' }),
          ...row(2, 'size', { form_type: 'select' }),
          ...row(3, '', { label: 'A label without a name' }),
        },
        path,
      );
      assert.equal(res.status, 400);
      const page = await res.text();
      assert.match(page, /There are 2 problems/);
      assert.match(page, /<p class="error" id="f1_options-error">A list needs its options/);
      assert.match(page, /id="f1_name" name="f1_name" value="size"/);
      assert.match(page, /<p class="error" id="f2_name-error">/);
      assert.match(page, /id="f2_label" name="f2_label" value="A label without a name"/);
      assert.equal((await stored()).form.length, 4);
    });
  });

  test('a reason saved: the message stands in that reason', async () => {
    const reason = inst.schedules[0]!.reasons[0]!.id;
    const p = `reason${reason}_`;
    const res = await admin.post(
      `${path}/reasons/${reason}`,
      { [`${p}name`]: 'Visit', [`${p}duration_minutes`]: '60', [`${p}description`]: 'x' },
      path,
    );
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), `${path}?saved=reason&reason=${reason}#reason${reason}`);
    const page = await (await admin.get(res.headers.get('location')!)).text();
    assert.match(page, new RegExp(`<div class="card" id="reason${reason}"><p class="flash" role="status">Reason saved.</p>`));
  });
});
