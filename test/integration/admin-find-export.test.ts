// The Bookings page's search, filters, pages and "Export CSV" (issue 11, "Find and export") through real
// HTTP on a real port, on SQLite and PostgreSQL: name, e-mail and phone search in any case, phone numbers
// compared by their digits, schedule/status/date filters in local dates, 50 rows a page, and a CSV of every
// matching row, read back by a strict RFC 4180 reader, with formula-like cells defused.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, testInstallation, type TestInstallation } from '../support/installation.js';
import { parseCsv } from '../support/csv.js';
import { signedInAdmin, type AdminClient } from '../support/admin-http.js';
import { cancelBooking } from '../../src/app/bookings.js';
import { csvField } from '../../src/core/csv.js';

// Monday 2026-06-01 06:00Z = 08:00 in Berlin
const NOW = Date.UTC(2026, 5, 1, 6, 0);
const FORM = {
  first_name: { label: 'First name', input_type: 'text', required: true },
  last_name: { label: 'Last name', input_type: 'text', required: false },
  email: { label: 'E-mail', input_type: 'email', required: false },
  phone: { label: 'Phone', input_type: 'tel', required: false },
  note: { label: 'Note', form_type: 'textarea', input_type: 'text', required: false },
};

describeEachDatabase('admin: find and export bookings', (dialect) => {
  let inst: TestInstallation;
  let base: string;
  let admin: AdminClient;
  let clinic: number, group: number;
  const ids: Record<string, string> = {};

  const get = (path: string) => admin.get(path);
  const listed = async (path: string) => {
    const res = await get(path);
    const body = await res.text();
    return { status: res.status, body, refs: [...body.matchAll(/href="\/admin\/bookings\/([A-Za-z0-9_-]{24})"/g)].map((m) => m[1]!) };
  };
  const csv = async (path: string) => {
    const res = await get(path);
    assert.equal(res.status, 200, path);
    return { res, rows: parseCsv(await res.text()) };
  };

  before(async () => {
    inst = await testInstallation(dialect, {
      now: NOW,
      schedules: [
        {
          name: 'Clinic',
          slot_interval_minutes: 30,
          horizon_days: 14,
          weekly_hours: ALL_WEEK([['09:00', '17:00']]),
          reasons: [{ name: 'Visit', duration_minutes: 30 }],
          form: FORM,
        },
        {
          name: 'Group',
          slot_interval_minutes: 60,
          horizon_days: 14,
          capacity: 60,
          weekly_hours: ALL_WEEK([['09:00', '17:00']]),
          reasons: [{ name: 'Class', duration_minutes: 60 }],
          form: FORM,
        },
      ],
    });
    clinic = inst.schedules[0]!.id;
    group = inst.schedules[1]!.id;
    const book = async (key: string, schedule: number, slot: string, submission: Record<string, string>) => {
      const reason = inst.schedules.find((s) => s.id === schedule)!.reasons[0]!.id;
      const res = await inst.api({ method: 'POST', url: '/api/bookings', payload: { schedule, reason, slot, submission } });
      assert.equal(res.statusCode, 201, res.body);
      ids[key] = res.json().booking_details_id;
    };
    await book('ada', clinic, '2026-06-02 09:00:00', {
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'Ada@Example.com',
      phone: '01632960777',
    });
    await book('grace', clinic, '2026-06-03 10:00:00', {
      first_name: 'Grace',
      last_name: 'HOPPER',
      email: 'grace@example.org',
      phone: '+44 1632 960888',
    });
    await book('evil', clinic, '2026-06-04 11:00:00', {
      first_name: '=HYPERLINK("http://evil.example","x")',
      last_name: 'Mallory',
      phone: '+1 555 0100',
      note: 'a, "quoted"\nsecond line',
    });
    await book('gone', clinic, '2026-06-05 09:00:00', { first_name: 'Cecil', last_name: 'Gone', email: 'cecil@example.com' });
    assert.ok(await cancelBooking(inst.db, ids.gone!, NOW));
    for (let i = 0; i < 52; i++)
      await book(`g${i}`, group, '2026-06-08 09:00:00', { first_name: `Pupil${String(i).padStart(2, '0')}`, last_name: 'Class' });

    await inst.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(inst.app.server.address() as AddressInfo).port}`;
    admin = await signedInAdmin(base);
  });
  after(() => inst.close());

  test('search by name, e-mail or phone, in any case; phone numbers by their digits', async () => {
    const search = async (q: string) => (await listed(`/admin/bookings?when=all&q=${encodeURIComponent(q)}`)).refs;
    assert.deepEqual(await search('lovelace'), [ids.ada]);
    assert.deepEqual(await search('ADA LOVE'), [ids.ada]);
    assert.deepEqual(await search('hopper grace'), [ids.grace]);
    assert.deepEqual(await search('EXAMPLE.ORG'), [ids.grace]);
    // typed with spaces, stored without; stored with a country code and spaces, found by the national digits
    assert.deepEqual(await search('01632 960 777'), [ids.ada]);
    assert.deepEqual(await search('1632-960-888'), [ids.grace]);
    assert.deepEqual(await search('(01632) 960777'), [ids.ada]);
    // LIKE's wildcards are searched for literally
    assert.deepEqual(await search('%'), []);
    assert.deepEqual(await search('_'), []);
    assert.deepEqual(await search('nobody'), []);
  });

  test('filters: schedule, status, local date range; a bad date is an error beside the field', async () => {
    const clinicAll = await listed(`/admin/bookings?when=all&schedule=${clinic}`);
    assert.deepEqual(clinicAll.refs, [ids.ada, ids.grace, ids.evil]);
    assert.deepEqual((await listed(`/admin/bookings?when=all&schedule=${clinic}&status=cancelled`)).refs, [ids.gone]);
    assert.deepEqual((await listed(`/admin/bookings?when=all&schedule=${clinic}&status=any`)).refs, [
      ids.ada,
      ids.grace,
      ids.evil,
      ids.gone,
    ]);
    // local dates of Berlin: 06-03 to 06-04 inclusive
    assert.deepEqual((await listed('/admin/bookings?when=all&from=2026-06-03&to=2026-06-04')).refs, [ids.grace, ids.evil]);
    const bad = await listed('/admin/bookings?from=2026-13-01');
    assert.equal(bad.status, 400);
    assert.match(bad.body, /Not a date/);
    const reversed = await listed('/admin/bookings?from=2026-06-04&to=2026-06-03');
    assert.equal(reversed.status, 400);
    assert.match(reversed.body, /before the start date/);
  });

  test('the list shows 50 a page with links to the next and previous, keeping the filter', async () => {
    const first = await listed(`/admin/bookings?schedule=${group}`);
    assert.equal(first.refs.length, 50);
    assert.match(first.body, /1–50 of 52 bookings/);
    const next = /href="([^"]+)" rel="next"/.exec(first.body)![1]!.replace(/&amp;/g, '&');
    assert.match(next, new RegExp(`schedule=${group}`));
    const second = await listed(next);
    assert.equal(second.refs.length, 2);
    assert.match(second.body, /51–52 of 52 bookings/);
    assert.match(second.body, /rel="prev"/);
    assert.deepEqual(new Set([...first.refs, ...second.refs]).size, 52);
  });

  test('Export CSV: every matching row (not one page), RFC 4180, local times, answers as columns, formulas defused', async () => {
    const page = await listed(`/admin/bookings?schedule=${group}`);
    const link = /href="([^"]+)" download>Export CSV/.exec(page.body)![1]!.replace(/&amp;/g, '&');
    const { res, rows } = await csv(link);
    assert.match(res.headers.get('content-type')!, /^text\/csv; charset=utf-8/);
    assert.match(res.headers.get('content-disposition')!, /^attachment; filename="bookings-2026-06-01\.csv"$/);
    assert.equal(rows.length, 1 + 52);

    const clinicCsv = (await csv(`/admin/bookings.csv?when=all&schedule=${clinic}&status=any`)).rows;
    const [header, ...records] = clinicCsv;
    assert.deepEqual(header, [
      'id',
      'reference',
      'schedule',
      'reason',
      'start',
      'end',
      'status',
      'source',
      'customer',
      'email',
      'phone',
      'answer:first_name',
      'answer:last_name',
      'answer:email',
      'answer:phone',
      'answer:note',
    ]);
    // a reference is random base64url: one starting with '-' is written defused, like any cell (csvField)
    const byRef = new Map(records.map((r) => [r[1], Object.fromEntries(header.map((h, i) => [h, r[i]]))]));
    assert.deepEqual(
      [...byRef.keys()],
      [ids.ada, ids.grace, ids.evil, ids.gone].map((id) => csvField(id!)),
    );
    const ada = byRef.get(csvField(ids.ada!))!;
    assert.equal(ada.start, '2026-06-02 09:00');
    assert.equal(ada.end, '2026-06-02 09:30');
    assert.equal(ada.status, 'booked');
    assert.equal(ada.schedule, 'Clinic');
    assert.equal(ada.reason, 'Visit');
    assert.equal(ada.customer, 'Ada Lovelace');
    assert.equal(ada.email, 'Ada@Example.com');
    assert.equal(byRef.get(csvField(ids.gone!))!.status, 'cancelled');
    const evil = byRef.get(csvField(ids.evil!))!;
    // a spreadsheet would run these as formulas: an apostrophe keeps them text
    assert.equal(evil.customer, `'=HYPERLINK("http://evil.example","x") Mallory`);
    assert.equal(evil['answer:first_name'], `'=HYPERLINK("http://evil.example","x")`);
    assert.equal(evil.phone, `'+1 555 0100`);
    // commas, quotes and line breaks survive quoting
    assert.equal(evil['answer:note'], 'a, "quoted"\nsecond line');

    const searched = (await csv('/admin/bookings.csv?when=all&q=01632%20960%20777')).rows;
    assert.deepEqual(
      searched.slice(1).map((r) => r[1]),
      [csvField(ids.ada!)],
    );
    assert.equal((await get('/admin/bookings.csv?from=nonsense')).status, 400);
  });

  test('signed out, neither the list nor the export is shown', async () => {
    const res = await fetch(`${base}/admin/bookings.csv?when=all`, { redirect: 'manual' });
    assert.notEqual(res.status, 200);
    assert.doesNotMatch(await res.text(), /Lovelace/);
  });
});
