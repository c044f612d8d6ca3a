// The calendar (issue 11, "Missing"): a schedule's day and week as a time grid in local wall time, every
// schedule side by side for a day, jump to a date, previous/next, and the printable day list; on the two
// days of 2026 when Berlin's clocks change (23 and 25 hours). Through the admin area's HTTP routes, signed in,
// on SQLite and PostgreSQL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, deskSchedule, testInstallation, type TestInstallation } from '../support/installation.js';

// Tuesday 2026-03-24 09:00 in Berlin (UTC+1)
const NOW = Date.UTC(2026, 2, 24, 8, 0);
const FORM = {
  first_name: { label: 'First name', input_type: 'text', required: true },
  last_name: { label: 'Last name', input_type: 'text', required: false },
  email: { label: 'E-mail', input_type: 'email', required: false },
  phone: { label: 'Phone', input_type: 'tel', required: false },
  notes: { label: 'Notes', input_type: 'text', required: false },
};

describeEachDatabase('admin calendar', (dialect) => {
  let inst: TestInstallation;
  let cookie = '';
  let desk: number, lab: number;

  const get = (url: string): Promise<LightMyRequestResponse> => inst.app.inject({ method: 'GET', url, headers: { cookie } });

  before(async () => {
    inst = await testInstallation(dialect, {
      now: NOW,
      schedules: [
        deskSchedule({ horizon_days: 400, capacity: 2, weekly_hours: ALL_WEEK([['01:00', '12:00']]), form: FORM }),
        {
          name: 'Lab',
          slot_interval_minutes: 60,
          horizon_days: 400,
          weekly_hours: ALL_WEEK([['09:00', '17:00']]),
          reasons: [{ name: 'Blood test', duration_minutes: 60 }],
          form: FORM,
        },
      ],
    });
    [desk, lab] = inst.schedules.map((s) => s.id) as [number, number];
    const form = await inst.app.inject({ method: 'GET', url: '/admin/signin' });
    const jar = (res: LightMyRequestResponse) =>
      (res.cookies as { name: string; value: string }[]).map((c) => `${c.name}=${c.value}`).join('; ');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? '';
    const signIn = await inst.app.inject({
      method: 'POST',
      url: '/admin/signin',
      payload: new URLSearchParams({ email: 'admin@example.com', password: 'correct horse battery', _csrf: csrf }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar(form) },
    });
    assert.equal(signIn.statusCode, 303, signIn.body);
    cookie = jar(signIn);
    const book = async (schedule: number, slot: string, first_name: string, notes = '') => {
      const s = inst.schedules.find((x) => x.id === schedule)!;
      const res = await inst.api({
        method: 'POST',
        url: '/api/bookings',
        payload: { schedule, reason: s.reasons[0]!.id, slot, submission: { first_name, phone: '+49 30 1234567', notes } },
      });
      assert.equal(res.statusCode, 201, res.body);
    };
    // the 23-hour day: two at 10:00 on Desk (capacity 2), one on Lab
    await book(desk, '2026-03-29 10:00:00', 'Ada', 'Bring the results');
    await book(desk, '2026-03-29 10:00:00', 'Bob');
    await book(desk, '2026-03-29 03:00:00', 'Early');
    await book(lab, '2026-03-29 09:00:00', 'Cy');
    // the 25-hour day: 02:30 happens twice; the API books its first occurrence (docs/decisions.md §4)
    await book(desk, '2026-10-25 02:30:00', 'Dora');
    await book(desk, '2026-10-25 04:00:00', 'Eve');
  });
  after(async () => inst.close());

  /** The appointment links of a page: their classes and text, in page order */
  const appointments = (body: string) =>
    [...body.matchAll(/<a class="appt ([^"]*)" href="\/admin\/bookings\/[^"]+">([\s\S]*?)<\/a>/g)].map((m) => ({
      classes: m[1]!.split(' '),
      text: m[2]!
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    }));

  test('a day of 23 hours: wall-clock rows, the skipped hour marked, overlapping bookings side by side', async () => {
    const res = await get(`/admin/calendar?view=day&date=2026-03-29&schedule=${desk}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.match(res.body, /<h1>Sunday 2026-03-29: Desk<\/h1>/);
    assert.match(res.body, /23 hours: clocks go forward/);
    // rows from 01:00 (opening) to 18:00 (the grid shows 08:00-18:00 at least) in five-minute rows; 02:00-03:00 does not exist and is marked
    assert.match(res.body, /class="cal-col rows-204 lanes-2"/);
    assert.match(res.body, /<div class="gap r-s13 r-e25">02:00–03:00 does not exist today \(clocks go forward\)<\/div>/);
    assert.match(res.body, /<div class="open r-s1 r-e133"/, 'opening hours shaded 01:00-12:00');
    const appts = appointments(res.body);
    assert.deepEqual(
      appts.map((a) => a.text),
      ['03:00–03:30 Talk Early', '10:00–10:30 Talk Ada', '10:00–10:30 Talk Bob'],
    );
    // 10:00 is row (600 - 60) / 5 + 1 = 109, whatever the day's length; the two share the time in two lanes
    assert.ok(appts[1]!.classes.includes('r-s109') && appts[1]!.classes.includes('r-e115'), appts[1]!.classes.join(' '));
    assert.deepEqual(
      appts.slice(1).map((a) => a.classes.find((c) => c.startsWith('lane-'))),
      ['lane-1', 'lane-2'],
    );
    assert.ok(appts[0]!.classes.includes('r-s25'), '03:00 right after the skipped hour');
    assert.doesNotMatch(res.body, /<strong>outside the opening hours/);
    // previous / next / today, and the jump form that works without JavaScript
    assert.match(res.body, new RegExp(`href="/admin/calendar\\?view=day&amp;date=2026-03-28&amp;schedule=${desk}" rel="prev"`));
    assert.match(res.body, new RegExp(`href="/admin/calendar\\?view=day&amp;date=2026-03-30&amp;schedule=${desk}" rel="next"`));
    assert.match(res.body, /<form method="get" action="\/admin\/calendar"><input type="hidden" name="view" value="day">/);
    assert.match(res.body, /<input id="cal-date" name="date" type="date" value="2026-03-29" required>/);
  });

  test('a day of 25 hours: the repeated hour is marked and a booking in it says which 02:30 it is', async () => {
    const res = await get(`/admin/calendar?view=day&date=2026-10-25&schedule=${desk}`);
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /25 hours: clocks go back/);
    assert.match(res.body, /<div class="gap r-s13 r-e25">02:00–03:00 happens twice today \(clocks go back\)<\/div>/);
    const appts = appointments(res.body);
    assert.deepEqual(
      appts.map((a) => a.text),
      ['02:30–03:00 (first 02:30) Talk Dora', '04:00–04:30 Talk Eve'],
    );
    assert.ok(appts[0]!.classes.includes('r-s19'), '02:30 on its wall-clock row');
    assert.ok(appts[1]!.classes.includes('r-s37'), '04:00 on its wall-clock row, not shifted by the extra hour');
  });

  test('the week view: seven days Monday to Sunday, today highlighted, the DST Sunday among them', async () => {
    const res = await get(`/admin/calendar?view=week&date=2026-03-26&schedule=${desk}`);
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /<h1>Week of 2026-03-23: Desk<\/h1>/);
    assert.match(res.body, /<div class="cal n7"/);
    const days = [...res.body.matchAll(/<div class="cal-col [^"]*" data-day="([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(days, ['2026-03-23', '2026-03-24', '2026-03-25', '2026-03-26', '2026-03-27', '2026-03-28', '2026-03-29']);
    assert.match(res.body, /<div class="cal-col rows-204 lanes-1 today" data-day="2026-03-24"/);
    assert.match(res.body, /<div class="cal-head today">.*2026-03-24.*<small>Today<\/small>/);
    assert.equal(appointments(res.body).length, 3, 'the Sunday bookings of Desk only');
    assert.match(res.body, /rel="prev"[^>]*>|href="\/admin\/calendar\?view=week&amp;date=2026-03-19/);
    // the old per-schedule address leads here
    const old = await get(`/admin/schedules/${desk}/calendar?week=2026-03-26`);
    assert.equal(old.statusCode, 303);
    assert.equal(old.headers.location, `/admin/calendar?view=week&date=2026-03-26&schedule=${desk}`);
  });

  test('all schedules side by side for one day', async () => {
    const res = await get('/admin/calendar?view=all&date=2026-03-29');
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /<h1>Sunday 2026-03-29: all schedules<\/h1>/);
    const columns = [...res.body.matchAll(/<div class="cal-col [^"]*" data-day="2026-03-29" data-schedule="([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(columns, ['Desk', 'Lab']);
    const lab = res.body.slice(res.body.indexOf('data-schedule="Lab"'));
    assert.deepEqual(
      appointments(lab).map((a) => a.text),
      ['09:00–10:00 Blood test Cy'],
    );
  });

  test('the printable day list: time, schedule, reason, customer, phone, notes, in time order', async () => {
    const res = await get('/admin/calendar/print?date=2026-03-29');
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /This day has 23 hours: clocks go forward/);
    const rows = [
      ...res.body.matchAll(
        /<tr><td>([^<]+)<\/td><td>([^<]+)<\/td><td>([^<]+)<\/td><td><a [^>]+>([^<]+)<\/a><\/td><td>([^<]*)<\/td><td>([^<]*)<\/td><\/tr>/g,
      ),
    ].map((m) => m.slice(1).join(' | '));
    assert.deepEqual(rows, [
      '03:00–03:30 | Desk | Talk | Early | +49 30 1234567 | ',
      '09:00–10:00 | Lab | Blood test | Cy | +49 30 1234567 | ',
      '10:00–10:30 | Desk | Talk | Ada | +49 30 1234567 | Bring the results',
      '10:00–10:30 | Desk | Talk | Bob | +49 30 1234567 | ',
    ]);
    const one = await get(`/admin/calendar/print?date=2026-03-29&schedule=${lab}`);
    assert.match(one.body, /<h1>Sunday 2026-03-29: Lab<\/h1>/);
    assert.equal([...one.body.matchAll(/<tr><td>/g)].length, 1);
    // the print stylesheet leaves the menu and the controls off paper
    const css = (await get('/admin/assets/admin.css')).body;
    assert.match(css, /@media print\{\.top,\.cal-nav,\.no-print/);
  });

  test('a schedule that does not exist is 404; a date that is not one falls back to today', async () => {
    assert.equal((await get('/admin/calendar?view=day&schedule=999')).statusCode, 404);
    const res = await get(`/admin/calendar?view=day&date=2026-02-30&schedule=${desk}`);
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /<h1>Tuesday 2026-03-24: Desk<\/h1>/);
  });
});
