// Staff and customers shared with another schedule (issue 11, found in review): bookings match customers by
// e-mail address, so staff booking by hand with the address of another schedule's customer must neither reach
// that customer's page (the staff-only notes written by the other schedule's office, the edit form for the
// address its mails and manage links go to) nor overwrite their name and phone. The booking is made, linked to
// the customer; staff see it as its answers hold it. A customer is staff's only while all their bookings are in
// the staff member's schedules (docs/admin.md "Users and roles").
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, testInstallation, type TestInstallation } from '../support/installation.js';
import { signedInAdmin } from '../support/admin-http.js';
import { hashPassword } from '../../src/app/passwords.js';
import { insertAdminUser } from '../../src/db/repos/admin-user.repository.js';

const NOW = Date.UTC(2026, 5, 1, 6, 0);
const schedule = (name: string) => ({
  name,
  slot_interval_minutes: 60,
  horizon_days: 30,
  weekly_hours: ALL_WEEK([['09:00', '12:00']]),
  reasons: [{ name: 'Visit', duration_minutes: 60 }],
  form: {
    first_name: { label: 'First name', input_type: 'text', required: true },
    email: { label: 'E-mail', input_type: 'email', required: false },
    phone: { label: 'Phone', input_type: 'tel', required: false },
  },
});

describeEachDatabase('admin staff scope: customers shared with another schedule', (dialect) => {
  let inst: TestInstallation;
  let base: string;
  before(async () => {
    inst = await testInstallation(dialect, { now: NOW, schedules: [schedule('North'), schedule('South')] });
    await inst.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(inst.app.server.address() as AddressInfo).port}`;
  });
  after(() => inst.close());

  test("staff of North cannot read the notes of South's customer", async () => {
    const south = inst.schedules[1]!;
    const res = await inst.api({
      method: 'POST',
      url: '/api/bookings',
      payload: {
        schedule: south.id,
        reason: south.reasons[0]!.id,
        slot: '2026-06-02 10:00:00',
        submission: { first_name: 'Sven', email: 'sven@example.com', phone: '+49 30 1234' },
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    const svenId = res.json<{ user_id: number }>().user_id;
    await inst.db.kysely.updateTable('customers').set({ notes: 'SOUTH-ONLY NOTE' }).where('id', '=', svenId).execute();
    const passwordHash = await hashPassword('staff password 1');
    await inst.db.write((trx) =>
      insertAdminUser(
        trx,
        { email: 'sam@example.com', name: 'Sam', passwordHash, role: 'staff', scheduleIds: [inst.schedules[0]!.id] },
        NOW,
      ),
    );
    const staff = await signedInAdmin(base, 'sam@example.com', 'staff password 1');
    assert.equal((await staff.get(`/admin/customers/${svenId}`)).status, 404, 'not visible to North staff');

    const north = inst.schedules[0]!;
    const booked = await staff.post(
      `/admin/schedules/${north.id}/book`,
      {
        reason: String(north.reasons[0]!.id),
        day: '2026-06-03',
        time: '10:00',
        'answer.first_name': 'x',
        'answer.email': 'sven@example.com',
        'answer.phone': '+49 170 9999',
      },
      `/admin/schedules/${north.id}/book`,
    );
    assert.equal(booked.status, 303, await booked.text());
    const page = await staff.get(`/admin/customers/${svenId}`);
    // before the fix: 200 with South's notes in the form, and an edit form for the address South's mails go to
    assert.doesNotMatch(await page.text(), /SOUTH-ONLY NOTE/, "South's staff-only notes shown to North staff");
    assert.equal(page.status, 404, "South's customer is not North staff's");

    // the booking is made and linked to the customer, whose details North staff did not change
    const detailsPath = booked.headers.get('location')!.replace(/\?.*$/, '');
    const row = await inst.db.kysely
      .selectFrom('bookings')
      .innerJoin('customers', 'customers.id', 'bookings.customer_id')
      .select(['bookings.customer_id', 'customers.first_name', 'customers.phone', 'customers.notes'])
      .where('bookings.details_id', '=', detailsPath.slice('/admin/bookings/'.length))
      .executeTakeFirstOrThrow();
    assert.equal(row.customer_id, svenId, 'linked to the customer with that address');
    assert.equal(row.first_name, 'Sven', "North staff's booking overwrote South's customer's name");
    assert.equal(row.phone, '+49 30 1234', "North staff's booking overwrote South's customer's phone");
    assert.equal(row.notes, 'SOUTH-ONLY NOTE');

    // North staff see their booking as its answers hold it, without a way to the customer's page
    const details = await (await staff.get(detailsPath)).text();
    assert.match(details, /class="customer-as-answered">x</);
    assert.match(details, /\+49 170 9999/);
    assert.doesNotMatch(details, new RegExp(`/admin/customers/${svenId}"`));
    assert.doesNotMatch(details, /\+49 30 1234/, "South's phone number shown to North staff");
    const list = await (await staff.get(`/admin/bookings?schedule=${north.id}`)).text();
    assert.match(list, /class="customer-as-answered">x</);
    assert.doesNotMatch(list, new RegExp(`/admin/customers/${svenId}"`));
    assert.doesNotMatch(await (await staff.get('/admin/customers?q=sven')).text(), new RegExp(`/admin/customers/${svenId}"`));
  });

  test("staff's own customer (bookings only in their schedules) stays theirs: page, and updated by a new booking", async () => {
    const north = inst.schedules[0]!;
    const staff = await signedInAdmin(base, 'sam@example.com', 'staff password 1');
    const book = (day: string, name: string) =>
      staff.post(
        `/admin/schedules/${north.id}/book`,
        { reason: String(north.reasons[0]!.id), day, time: '09:00', 'answer.first_name': name, 'answer.email': 'nora@example.com' },
        `/admin/schedules/${north.id}/book`,
      );
    assert.equal((await book('2026-06-04', 'Nora')).status, 303);
    assert.equal((await book('2026-06-05', 'Nora-Marie')).status, 303);
    const nora = await inst.db.kysely
      .selectFrom('customers')
      .select(['id', 'first_name'])
      .where('email_key', '=', 'nora@example.com')
      .executeTakeFirstOrThrow();
    assert.equal(nora.first_name, 'Nora-Marie', 'a booking by staff updates their own customer, as every booking does');
    assert.equal((await staff.get(`/admin/customers/${nora.id}`)).status, 200);
  });
});
