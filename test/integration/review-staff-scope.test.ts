// Reviewer's reproduction (wip/review): staff reach a customer of another schedule by booking by hand with
// that customer's e-mail address (bookings match customers by it): the customer's page then shows the
// staff-only notes written by the other schedule's office, and the edit form lets staff change the e-mail
// address that the other schedule's future mails (with their manage links) go to.
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
  },
});

describeEachDatabase('review: staff scope through booking by hand', (dialect) => {
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
        submission: { first_name: 'Sven', email: 'sven@example.com' },
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
      },
      `/admin/schedules/${north.id}/book`,
    );
    assert.equal(booked.status, 303, await booked.text());
    const page = await staff.get(`/admin/customers/${svenId}`);
    // today: 200 with South's notes in the form, and an edit form for the address South's mails go to
    assert.doesNotMatch(await page.text(), /SOUTH-ONLY NOTE/, "South's staff-only notes shown to North staff");
  });
});
