// The audit trail (issue 11) through real HTTP on a real port, on SQLite and PostgreSQL: every booking made,
// moved, cancelled or edited through the API, the admin area or the manage link leaves one row naming who did
// it, written in the change's transaction (a refused booking leaves none); a booking's page shows its History,
// the Activity page the latest events, by user; sign-ins are recorded.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, testInstallation, type TestInstallation } from '../support/installation.js';
import { signedInAdmin, type AdminClient } from '../support/admin-http.js';
import { manageToken } from '../../src/app/manage-link.js';

// Monday 2026-06-01 06:00Z = 08:00 in Berlin
const NOW = Date.UTC(2026, 5, 1, 6, 0);

describeEachDatabase('audit trail: who booked, moved, cancelled or edited what', (dialect) => {
  let inst: TestInstallation;
  let base: string;
  let admin: AdminClient;
  let scheduleId: number;
  let reasonId: number;
  let adminId: number;

  before(async () => {
    inst = await testInstallation(dialect, {
      now: NOW,
      schedules: [
        {
          name: 'Desk',
          slot_interval_minutes: 60,
          horizon_days: 30,
          weekly_hours: ALL_WEEK([['09:00', '17:00']]),
          reasons: [{ name: 'Talk', duration_minutes: 60 }],
          form: {
            first_name: { label: 'First name', input_type: 'text', required: true },
            email: { label: 'E-mail', input_type: 'email', required: false },
            notes: { label: 'Notes', form_type: 'textarea', input_type: 'text', required: false },
          },
        },
      ],
    });
    scheduleId = inst.schedules[0]!.id;
    reasonId = inst.schedules[0]!.reasons[0]!.id;
    await inst.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(inst.app.server.address() as AddressInfo).port}`;
    admin = await signedInAdmin(base);
    adminId = (await inst.db.kysely.selectFrom('admins').select('id').executeTakeFirstOrThrow()).id;
  });
  after(() => inst.close());

  const apiBook = async (slot: string, name: string) => {
    const res = await fetch(`${base}/api/bookings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${inst.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        schedule: scheduleId,
        reason: reasonId,
        slot,
        submission: { first_name: name, email: `${name.toLowerCase()}@example.com` },
      }),
    });
    return { status: res.status, body: (await res.json()) as { booking_id: number; booking_details_id: string } };
  };
  const events = (bookingId: number) =>
    inst.db.kysely
      .selectFrom('audit_events')
      .select(['actor_kind', 'actor_admin_id', 'actor_label', 'action', 'summary'])
      .where('booking_id', '=', bookingId)
      .orderBy('id')
      .execute();
  const bookingId = async (detailsId: string) =>
    (await inst.db.kysely.selectFrom('bookings').select('id').where('details_id', '=', detailsId).executeTakeFirstOrThrow()).id;

  test('the API: booked through the API; a refused booking records nothing', async () => {
    const made = await apiBook('2026-06-02 09:00:00', 'Ann');
    assert.equal(made.status, 201);
    assert.deepEqual(await events(made.body.booking_id), [
      { actor_kind: 'api', actor_admin_id: null, actor_label: '', action: 'booking.created', summary: 'Talk, 2026-06-02 09:00' },
    ]);
    const before = await inst.db.kysely
      .selectFrom('audit_events')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal((await apiBook('2026-06-02 09:00:00', 'Bob')).status, 404, 'the time is taken');
    const afterRefusal = await inst.db.kysely
      .selectFrom('audit_events')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(afterRefusal.n), Number(before.n));
  });

  test('the admin area: booked by hand, edited and cancelled by the signed-in admin; the History shows it', async () => {
    const booked = await admin.post(`/admin/schedules/${scheduleId}/book`, {
      reason: String(reasonId),
      day: '2026-06-03',
      time: '10:00',
      'answer.first_name': 'Cleo',
      'answer.email': 'cleo@example.com',
      email_customer: 'on',
      book: '1',
    });
    assert.equal(booked.status, 303, await booked.text());
    const detailsId = booked.headers.get('location')!.split('/').pop()!.split('?')[0]!;
    const id = await bookingId(detailsId);
    const edited = await admin.post(`/admin/bookings/${detailsId}/edit`, {
      'answer.first_name': 'Cleo',
      'answer.email': 'cleo@example.com',
      'answer.notes': 'wheelchair',
    });
    assert.equal(edited.status, 303);
    const cancelled = await admin.post(`/admin/bookings/${detailsId}/cancel`, {}, `/admin/bookings/${detailsId}/cancel`);
    assert.equal(cancelled.status, 303);
    const admin_ = { actor_kind: 'admin', actor_admin_id: adminId, actor_label: 'admin@example.com' };
    assert.deepEqual(await events(id), [
      { ...admin_, action: 'booking.created', summary: 'Talk, 2026-06-03 10:00' },
      { ...admin_, action: 'booking.edited', summary: 'answers: notes' },
      { ...admin_, action: 'booking.cancelled', summary: 'the appointment of 2026-06-03 10:00' },
    ]);
    const page = await (await admin.get(`/admin/bookings/${detailsId}`)).text();
    const history = /<section id="booking-history">([\s\S]*?)<\/section>/.exec(page)?.[1] ?? '';
    assert.match(history, /Booked by admin@example\.com[\s\S]*Edited by admin@example\.com[\s\S]*Cancelled by admin@example\.com/);
  });

  test('the manage link: moved and cancelled by the customer', async () => {
    const made = await apiBook('2026-06-04 09:00:00', 'Dora');
    const token = await manageToken(inst.db, made.body.booking_details_id);
    const pageHtml = await (await fetch(`${base}/manage/${token}/cancel`)).text();
    const formToken = /name="form_token" value="([^"]+)"/.exec(pageHtml)?.[1];
    assert.ok(formToken);
    const post = (path: string, form: Record<string, string>) =>
      fetch(`${base}/manage/${token}/${path}`, {
        method: 'POST',
        redirect: 'manual',
        body: new URLSearchParams({ form_token: formToken, ...form }),
      });
    assert.equal((await post('reschedule', { slot: '2026-06-04 11:00:00' })).status, 303);
    assert.equal((await post('cancel', { reason: 'feeling better' })).status, 303);
    assert.deepEqual(
      (await events(made.body.booking_id)).map((e) => [e.actor_kind, e.action, e.summary]),
      [
        ['api', 'booking.created', 'Talk, 2026-06-04 09:00'],
        ['customer', 'booking.rescheduled', 'from 2026-06-04 09:00 to 2026-06-04 11:00'],
        ['customer', 'booking.cancelled', 'the appointment of 2026-06-04 11:00'],
      ],
    );
    const history = await (await admin.get(`/admin/bookings/${made.body.booking_details_id}`)).text();
    assert.match(history, /Moved by the customer \(manage link\)/);
  });

  test('Reschedule, the attendance marks and Undo cancellation in the admin area name the signed-in admin', async () => {
    const made = await apiBook('2026-06-05 09:00:00', 'Eva');
    const ref = made.body.booking_details_id;
    const moved = await admin.post(`/admin/bookings/${ref}/reschedule`, { reason: String(reasonId), day: '2026-06-05', time: '10:00' });
    assert.equal(moved.status, 303, await moved.text());
    assert.equal((await admin.post(`/admin/bookings/${ref}/cancel`, {}, `/admin/bookings/${ref}/cancel`)).status, 303);
    assert.equal((await admin.post(`/admin/bookings/${ref}/restore`, {}, `/admin/bookings/${ref}/restore`)).status, 303);
    const saved = inst.clock.now;
    try {
      inst.clock.now = Date.UTC(2026, 5, 5, 8, 5); // 10:05 in Berlin: the appointment has begun
      // four days on, the first session has ended (idle): a new sign-in, in a browser of its own
      const later = await signedInAdmin(base);
      const marked = await later.post(`/admin/bookings/${ref}/attendance`, { attendance: 'no_show' }, `/admin/bookings/${ref}`);
      assert.equal(marked.status, 303);
    } finally {
      inst.clock.now = saved;
    }
    assert.deepEqual(
      (await events(made.body.booking_id)).map((e) => [e.actor_kind, e.actor_admin_id, e.action, e.summary]),
      [
        ['api', null, 'booking.created', 'Talk, 2026-06-05 09:00'],
        ['admin', adminId, 'booking.rescheduled', 'from 2026-06-05 09:00 to 2026-06-05 10:00'],
        ['admin', adminId, 'booking.cancelled', 'the appointment of 2026-06-05 10:00'],
        ['admin', adminId, 'booking.restored', ''],
        ['admin', adminId, 'booking.no_show', ''],
      ],
    );
  });

  test('the Activity page lists the latest events, by user; sign-ins are recorded', async () => {
    const signIns = await inst.db.kysely
      .selectFrom('audit_events')
      .select(['actor_admin_id'])
      .where('action', '=', 'user.signed_in')
      .execute();
    // the first sign-in, and the one four days on in the test before
    assert.deepEqual(signIns, [{ actor_admin_id: adminId }, { actor_admin_id: adminId }]);
    const row = await inst.db.kysely.selectFrom('admins').select('last_sign_in_at').where('id', '=', adminId).executeTakeFirstOrThrow();
    assert.equal(Number(row.last_sign_in_at), Date.UTC(2026, 5, 5, 8, 5));
    admin = await signedInAdmin(base);

    const all = await (await admin.get('/admin/activity')).text();
    assert.match(all, /Booked through the API/);
    assert.match(all, /Cancelled by the customer \(manage link\)/);
    const mine = /<table id="activity">[\s\S]*<\/table>/.exec(await (await admin.get(`/admin/activity?user=${adminId}`)).text())?.[0] ?? '';
    assert.match(mine, /Cancelled by admin@example\.com/);
    assert.doesNotMatch(mine, /through the API|by the customer/);
  });
});
