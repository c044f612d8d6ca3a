// Practice-wide closures (issue 11) through real HTTP on a real port, on SQLite and PostgreSQL: a closure
// added on the admin page closes every schedule on the API's very next request (config version), bookings
// already inside it stay booked and are listed as a warning, removing it (after a confirmation) opens the days
// again, and bad input or a resubmitted form changes nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { countRows, describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, testInstallation, type TestInstallation } from '../support/installation.js';
import { signedInAdmin, type AdminClient } from '../support/admin-http.js';

// Monday 2026-06-01 06:00Z = 08:00 in Berlin
const NOW = Date.UTC(2026, 5, 1, 6, 0);
const schedule = (name: string) => ({
  name,
  slot_interval_minutes: 60,
  horizon_days: 14,
  weekly_hours: ALL_WEEK([['09:00', '12:00']]),
  // an exception that opens a day: the closure still wins
  exceptions: [{ date: '2026-06-04', hours: [['14:00', '15:00']] }],
  reasons: [{ name: 'Visit', duration_minutes: 60 }],
  form: { first_name: { label: 'First name', input_type: 'text', required: true } },
});

describeEachDatabase('admin: practice-wide closures', (dialect) => {
  let inst: TestInstallation;
  let base: string;
  let admin: AdminClient;

  const days = async (index: number) => {
    const s = inst.schedules[index]!;
    const res = await fetch(`${base}/api/days?schedule=${s.id}&reason=${s.reasons[0]!.id}`, {
      headers: { authorization: `Bearer ${inst.token}` },
    });
    assert.equal(res.status, 200);
    return ((await res.json()) as { data: string[] }).data;
  };
  const closureCount = () => countRows(inst.db, 'closures');

  before(async () => {
    inst = await testInstallation(dialect, { now: NOW, schedules: [schedule('North'), schedule('South')] });
    const s = inst.schedules[0]!;
    const booked = await inst.api({
      method: 'POST',
      url: '/api/bookings',
      payload: { schedule: s.id, reason: s.reasons[0]!.id, slot: '2026-06-03 10:00:00', submission: { first_name: 'Ada' } },
    });
    assert.equal(booked.statusCode, 201, booked.body);
    await inst.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(inst.app.server.address() as AddressInfo).port}`;
    admin = await signedInAdmin(base);
  });
  after(() => inst.close());

  test('a closure closes every schedule on the next API request; bookings inside are listed, not cancelled; removal opens the days again', async () => {
    // answers computed (and cached) before the closure
    for (const i of [0, 1]) assert.ok((await days(i)).includes('2026-06-03') && (await days(i)).includes('2026-06-04'));

    const added = await admin.post('/admin/closures', { first_day: '2026-06-03', last_day: '2026-06-04', label: 'Staff outing' });
    assert.equal(added.status, 303);
    for (const i of [0, 1]) {
      const open = await days(i);
      assert.ok(!open.includes('2026-06-03') && !open.includes('2026-06-04'), `schedule ${i}: ${open.join(' ')}`);
      assert.ok(open.includes('2026-06-02') && open.includes('2026-06-05'));
    }
    const listPage = await (await admin.get(added.headers.get('location')!)).text();
    assert.match(listPage, /Closure added/);
    assert.match(listPage, /2026-06-03 to 2026-06-04 \(Staff outing\)/);
    assert.match(listPage, /1 booking is inside this closure/);
    assert.match(listPage, /Ada/);
    const status = await inst.db.kysely.selectFrom('bookings').select('status').executeTakeFirstOrThrow();
    assert.equal(status.status, 'booked');

    const id = /href="\/admin\/closures\/(\d+)\/remove"/.exec(listPage)![1]!;
    const confirm = await (await admin.get(`/admin/closures/${id}/remove`)).text();
    assert.match(confirm, /Confirm removal/);
    assert.equal(await closureCount(), 1, 'the confirmation page removes nothing');
    const removed = await admin.post(`/admin/closures/${id}/remove`, {}, `/admin/closures/${id}/remove`);
    assert.equal(removed.status, 303);
    assert.equal(await closureCount(), 0);
    for (const i of [0, 1]) assert.ok((await days(i)).includes('2026-06-04'));
  });

  test('bad dates are refused beside the field and store nothing; a resubmitted form adds nothing twice', async () => {
    const bad = await admin.post('/admin/closures', { first_day: '2026-06-10', last_day: '2026-06-09', label: '' });
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /The last day is before the first day/);
    assert.equal(await closureCount(), 0);

    const page = await (await admin.get('/admin/closures')).text();
    const once = /name="_once" value="([^"]+)"/.exec(page)![1]!;
    const first = await admin.post('/admin/closures', { first_day: '2026-06-10', last_day: '', label: '', _once: once });
    assert.equal(first.status, 303);
    const again = await admin.post('/admin/closures', { first_day: '2026-06-10', last_day: '', label: '', _once: once });
    assert.equal(again.status, 409);
    assert.equal(await closureCount(), 1);
    assert.ok(!(await days(0)).includes('2026-06-10'));
  });
});
