// POST /bookings end to end through the HTTP layer, on SQLite and PostgreSQL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { countRows, describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, deskSchedule, testInstallation, type TestInstallation } from '../support/installation.js';
import { connect } from '../../src/db/connect.js';
import { cancelBooking, createBooking } from '../../src/app/bookings.js';
import { addWebhookEndpoint } from '../../src/app/webhooks.js';
import { SnapshotCache } from '../../src/app/snapshot.js';

// Monday 2026-06-01 06:00Z = 08:00 in Berlin
const NOW = Date.UTC(2026, 5, 1, 6, 0);

describeEachDatabase('bookings', (dialect) => {
  let inst: TestInstallation;
  let desk: number, talk: number, long: number;
  before(async () => {
    inst = await testInstallation(dialect, {
      now: NOW,
      schedules: [
        deskSchedule({
          reasons: [
            { name: 'Talk', duration_minutes: 30 },
            { name: 'Long', duration_minutes: 90 },
          ],
          form: {
            first_name: { label: 'First name', input_type: 'text', required: true },
            email: { label: 'E-mail', input_type: 'email', required: true },
            phone: { label: 'Phone', input_type: 'tel', required: false },
            newsletter: { label: 'Newsletter', form_type: 'checkbox', input_type: 'text' },
          },
        }),
      ],
    });
    desk = inst.schedules[0]!.id;
    [talk, long] = inst.schedules[0]!.reasons.map((r) => r.id) as [number, number];
  });
  after(() => inst.close());

  const book = (slot: string, submission: Record<string, unknown>, reason = talk) =>
    inst.api({ method: 'POST', url: '/api/bookings', payload: { schedule: desk, reason, slot, submission } });

  test('201 with ids and the UTC start; the booking, its customer and two outbox rows are stored together', async () => {
    const res = await book('2026-06-02 09:00:00', {
      first_name: 'Ada',
      email: 'Ada@Example.com',
      phone: '+49 30 1234567',
      newsletter: true,
      ignored: 'x',
    });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.equal(body.slot, '2026-06-02T07:00:00Z');
    assert.match(body.booking_details_id, /^[A-Za-z0-9_-]{20,}$/);
    const row = await inst.db.kysely.selectFrom('bookings').selectAll().where('id', '=', body.booking_id).executeTakeFirstOrThrow();
    assert.equal(row.customer_id, body.user_id);
    assert.equal(row.source, 'api');
    assert.deepEqual(JSON.parse(row.answers), { first_name: 'Ada', email: 'Ada@Example.com', phone: '+49 30 1234567', newsletter: true });
    assert.equal(Number(row.end_at) - Number(row.start_at), 30 * 60_000);
    const outbox = await inst.db.kysely
      .selectFrom('outbox')
      .select(['kind', 'recipient', 'state'])
      .where('booking_id', '=', body.booking_id)
      .orderBy('id')
      .execute();
    assert.deepEqual(outbox, [
      { kind: 'booking_confirmation', recipient: 'Ada@Example.com', state: 'queued' },
      { kind: 'booking_notification', recipient: 'desk@example.com', state: 'queued' },
    ]);
  });

  test('the customer is reused by e-mail, case-insensitively, and its details updated; empty values keep the old', async () => {
    const a = await book('2026-06-03 09:00:00', { first_name: 'Grace', email: 'grace@example.com', phone: '12345' });
    const b = await book('2026-06-03 10:00:00', { first_name: 'Grace H.', email: 'GRACE@example.com' });
    assert.equal(a.json().user_id, b.json().user_id);
    const customer = await inst.db.kysely.selectFrom('customers').selectAll().where('id', '=', a.json().user_id).executeTakeFirstOrThrow();
    assert.equal(customer.first_name, 'Grace H.');
    assert.equal(customer.phone, '12345');
  });

  test('order of checks: unknown schedule/reason 404, then the submission 400, then the time 404', async () => {
    const unknown = await inst.api({
      method: 'POST',
      url: '/api/bookings',
      payload: { schedule: 999, reason: talk, slot: '2026-06-02 09:00:00', submission: {} },
    });
    assert.equal(unknown.statusCode, 404);
    const badSubmission = await book('2026-06-02 09:00:00', { first_name: 'Ada' }); // taken time, missing e-mail
    assert.equal(badSubmission.statusCode, 400);
    assert.deepEqual(badSubmission.json(), { error: 'Field is required', field: 'email' });
    const taken = await book('2026-06-02 09:00:00', { first_name: 'Ada', email: 'x@example.com' });
    assert.equal(taken.statusCode, 404);
  });

  test('a bad booking changes nothing', async () => {
    const count = () => countRows(inst.db, 'bookings');
    const before = await count();
    for (const submission of [
      { first_name: 'A', email: 'nope' },
      { first_name: 'A', email: 'a@example.com', phone: 'abc' },
    ]) {
      assert.equal((await book('2026-06-04 09:00:00', submission)).statusCode, 400);
    }
    assert.equal(await count(), before);
    assert.equal((await inst.db.kysely.selectFrom('customers').where('email_key', '=', 'a@example.com').selectAll().execute()).length, 0);
  });

  test('concurrent requests with overlapping reasons for the last place: exactly one 201', async () => {
    const attempts = Array.from({ length: 20 }, (_, i) =>
      book(i % 2 ? '2026-06-05 10:00:00' : '2026-06-05 09:30:00', { first_name: 'R', email: `racer${i}@example.com` }, i % 2 ? talk : long),
    );
    const statuses = (await Promise.all(attempts)).map((r) => r.statusCode);
    assert.equal(statuses.filter((s) => s === 201).length, 1, String(statuses));
    assert.equal(statuses.filter((s) => s === 404).length, 19, String(statuses));
  });

  test('a booked time disappears from /slots and /forms', async () => {
    const before = (await inst.api({ method: 'GET', url: `/api/slots?schedule=${desk}&reason=${talk}&day=2026-06-06` })).json().data;
    assert.ok(before.includes('2026-06-06 11:00:00'));
    assert.equal((await book('2026-06-06 11:00:00', { first_name: 'Z', email: 'z@example.com' })).statusCode, 201);
    const slots = (await inst.api({ method: 'GET', url: `/api/slots?schedule=${desk}&reason=${talk}&day=2026-06-06` })).json().data;
    assert.ok(!slots.includes('2026-06-06 11:00:00'));
    const form = await inst.api({ method: 'GET', url: `/api/forms?schedule=${desk}&reason=${talk}&slot=2026-06-06%2011:00:00` });
    assert.equal(form.statusCode, 404);
  });
});

describeEachDatabase('two cancellations of one booking at once', (dialect) => {
  test('one cancels; the other changes nothing and sends nothing (one mail, one webhook event)', async () => {
    const NOW = Date.UTC(2026, 5, 1, 6, 0);
    const inst = await testInstallation(dialect, {
      now: NOW,
      schedules: [
        deskSchedule({
          weekly_hours: ALL_WEEK([['09:00', '18:00']]),
          form: { email: { label: 'E-mail', input_type: 'email', required: true } },
        }),
      ],
    });
    // a second connection, as another process or instance would have
    const other = connect(inst.url);
    try {
      await addWebhookEndpoint(inst.db, { url: 'http://127.0.0.1:9/hook', events: ['booking.created', 'booking.cancelled'] }, NOW, true);
      const schedule = inst.schedules[0]!;
      const snapshot = await new SnapshotCache(inst.db).current();
      const booked = await createBooking(
        inst.db,
        snapshot,
        {
          scheduleId: schedule.id,
          reasonId: schedule.reasons[0]!.id,
          slot: '2026-06-02 09:00:00',
          submission: { email: 'a@example.com' },
          source: 'api',
        },
        NOW,
      );
      const outcomes = await Promise.all([cancelBooking(inst.db, booked.detailsId, NOW), cancelBooking(other, booked.detailsId, NOW)]);
      assert.deepEqual([...outcomes].sort(), [false, true]);
      const mails = await inst.db.kysely.selectFrom('outbox').select('id').where('kind', '=', 'booking_cancellation').execute();
      assert.equal(mails.length, 1, 'one cancellation mail');
      const events = await inst.db.kysely
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('event_type', '=', 'booking.cancelled')
        .execute();
      assert.equal(events.length, 1, 'one booking.cancelled event');
    } finally {
      await other.close();
      await inst.close();
    }
  });
});
