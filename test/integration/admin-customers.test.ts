// Issue 11's "edit a booking's answers" and "customers" through real HTTP handling (app.inject), on SQLite
// and PostgreSQL: answers edited with the schedule's form rules, a customer's e-mail unique in any case,
// the GDPR export's contents, and erasure leaving none of the customer's personal data in any table.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { countRows, describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, CONTACT_FORM, deskSchedule, testInstallation, type TestInstallation } from '../support/installation.js';
import { AdminBrowser } from '../support/admin-browser.js';
import { addWebhookEndpoint } from '../../src/app/webhooks.js';

// Monday 2026-06-01 08:00 in Berlin (06:00Z)
const NOW = Date.UTC(2026, 5, 1, 6, 0);
const DAY = 86_400_000;

describeEachDatabase('admin area: booking answers and customers', (dialect) => {
  let inst: TestInstallation;
  let browser: AdminBrowser;
  let scheduleId: number;
  let reasonId: number;

  before(async () => {
    inst = await testInstallation(dialect, {
      now: NOW,
      schedules: [
        deskSchedule({
          horizon_days: 30,
          weekly_hours: ALL_WEEK([['09:00', '17:00']]),
          form: {
            ...CONTACT_FORM,
            insurance: { label: 'Insurance', form_type: 'select', input_type: 'text', options: ['public', 'private'], required: false },
          },
        }),
      ],
    });
    scheduleId = inst.schedules[0]!.id;
    reasonId = inst.schedules[0]!.reasons[0]!.id;
    browser = await AdminBrowser.signedIn(inst);
  });
  after(() => inst.close());

  const book = async (slot: string, submission: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const res = await inst.api({
      method: 'POST',
      url: '/api/bookings',
      payload: { schedule: scheduleId, reason: reasonId, slot, submission },
      headers,
    });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json<{ booking_details_id: string; user_id: number; booking_id: number }>();
    return created;
  };
  const bookingRow = (detailsId: string) =>
    inst.db.kysely.selectFrom('bookings').selectAll().where('details_id', '=', detailsId).executeTakeFirstOrThrow();
  const bookingsVersion = async () =>
    Number(
      (await inst.db.kysely.selectFrom('schedules').select('bookings_version').where('id', '=', scheduleId).executeTakeFirstOrThrow())
        .bookings_version,
    );

  test("a booking's answers are edited with the schedule's form rules; a refused edit changes nothing; the time stays", async () => {
    const b = await book('2026-06-02 09:00:00', { first_name: 'Ada', email: 'ada@example.com', insurance: 'public' });
    const url = `/admin/bookings/${b.booking_details_id}/edit`;
    const before = await bookingRow(b.booking_details_id);
    const version = await bookingsVersion();
    const form = await browser.get(url);
    assert.equal(form.statusCode, 200);
    assert.match(form.body, /name="answer\.first_name" type="text" value="Ada"/);

    const missing = await browser.post(url, { 'answer.first_name': '', 'answer.email': 'ada@example.com', 'answer.insurance': 'public' });
    assert.equal(missing.statusCode, 400);
    assert.match(missing.body, /id="answer\.first_name-error">Field is required\./);
    const badOption = await browser.post(url, { 'answer.first_name': 'Ada', 'answer.insurance': 'none of them' });
    assert.equal(badOption.statusCode, 400);
    assert.match(badOption.body, /id="answer\.insurance-error"/);
    assert.deepEqual(await bookingRow(b.booking_details_id), before, 'refused edits change nothing');

    const ok = await browser.post(url, {
      'answer.first_name': 'Ada',
      'answer.last_name': 'Lovelace',
      'answer.email': 'ada@example.com',
      'answer.insurance': 'private',
    });
    assert.equal(ok.statusCode, 303);
    assert.equal(ok.headers.location, `/admin/bookings/${b.booking_details_id}?saved=edited`);
    const after = await bookingRow(b.booking_details_id);
    assert.deepEqual(JSON.parse(after.answers), {
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'ada@example.com',
      insurance: 'private',
    });
    assert.equal(Number(after.updated_at), NOW);
    assert.equal(Number(after.start_at), Number(before.start_at));
    assert.equal(await bookingsVersion(), version, 'no free time changed, so cached availability stays valid');
    const details = await browser.get(`/admin/bookings/${b.booking_details_id}?saved=edited`);
    assert.match(details.body, /Answers saved\./);
    assert.match(details.body, /id="booking-updated">2026-06-01 08:00 in the admin area/);
    assert.match(details.body, /Lovelace/);
  });

  test("a customer's details and notes are edited; an e-mail another customer has (in any case) is a clear error", async () => {
    const grace = await book('2026-06-02 10:00:00', { first_name: 'Grace', email: 'Grace@Example.com' });
    const alan = await book('2026-06-02 11:00:00', { first_name: 'Alan', email: 'alan@example.com' });
    const url = `/admin/customers/${alan.user_id}`;
    const clash = await browser.post(url, { firstName: 'Alan', lastName: 'Turing', email: 'GRACE@example.com', phone: '', notes: '' });
    assert.equal(clash.statusCode, 400);
    assert.match(
      clash.body,
      new RegExp(`id="email-error">Another customer \\(number ${grace.user_id}\\) has the e-mail address GRACE@example\\.com`),
    );
    assert.match(clash.body, /There is 1 problem|href="#email"/);
    const unchanged = await inst.db.kysely.selectFrom('customers').selectAll().where('id', '=', alan.user_id).executeTakeFirstOrThrow();
    assert.equal(unchanged.email, 'alan@example.com');
    assert.equal(unchanged.last_name, '');

    const invalid = await browser.post(url, { firstName: 'Alan', lastName: '', email: 'not an address', phone: '', notes: '' });
    assert.equal(invalid.statusCode, 400);
    assert.match(invalid.body, /id="email-error">Enter an e-mail address/);

    const ok = await browser.post(url, {
      firstName: 'Alan',
      lastName: 'Turing',
      email: 'A.Turing@Example.com',
      phone: '01632 960 777',
      notes: 'Prefers mornings.\nCall first.',
    });
    assert.equal(ok.statusCode, 303);
    const saved = await inst.db.kysely.selectFrom('customers').selectAll().where('id', '=', alan.user_id).executeTakeFirstOrThrow();
    assert.equal(saved.email_key, 'a.turing@example.com', 'the match key follows the address');
    assert.equal(saved.notes, 'Prefers mornings.\nCall first.');
    // the next booking with the new address (any case) is his
    const again = await book('2026-06-03 11:00:00', { first_name: 'Alan', email: 'a.turing@EXAMPLE.com' });
    assert.equal(again.user_id, alan.user_id);
    const pageHtml = (await browser.get(`${url}?saved=edited`)).body;
    assert.match(pageHtml, /Customer saved\./);
    assert.match(pageHtml, /Prefers mornings\./);
    assert.match(pageHtml, /id="customer-answers"/);
  });

  test('export: a JSON download of the customer, their bookings with answers and the mail addressed to them', async () => {
    const b = await book('2026-06-04 09:00:00', {
      first_name: 'Edsger',
      last_name: 'Dijkstra',
      email: 'ewd@example.com',
      phone: '+31 40 123',
    });
    await browser.post(`/admin/customers/${b.user_id}`, {
      firstName: 'Edsger',
      lastName: 'Dijkstra',
      email: 'ewd@example.com',
      phone: '+31 40 123',
      notes: 'Staff note',
    });
    const res = await browser.get(`/admin/customers/${b.user_id}/export`);
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.match(String(res.headers['content-disposition']), new RegExp(`attachment; filename="customer-${b.user_id}\\.json"`));
    const data = res.json();
    assert.deepEqual(
      { ...data.customer, created_at: undefined, updated_at: undefined },
      {
        id: b.user_id,
        first_name: 'Edsger',
        last_name: 'Dijkstra',
        email: 'ewd@example.com',
        phone: '+31 40 123',
        notes: 'Staff note',
        created_at: undefined,
        updated_at: undefined,
      },
    );
    assert.equal(data.bookings.length, 1);
    assert.equal(data.bookings[0].reference, b.booking_details_id);
    assert.equal(data.bookings[0].start, '2026-06-04T07:00:00.000Z');
    assert.deepEqual(data.bookings[0].answers, {
      first_name: 'Edsger',
      last_name: 'Dijkstra',
      email: 'ewd@example.com',
      phone: '+31 40 123',
    });
    // the confirmation to them, not the office's notification
    assert.deepEqual(
      data.messages.map((m: { kind: string; recipient: string; booking_reference: string }) => [m.kind, m.recipient, m.booking_reference]),
      [['booking_confirmation', 'ewd@example.com', b.booking_details_id]],
    );
  });

  test('erasure: refused while an appointment is upcoming; then no table holds their name, e-mail or phone; the bookings stay anonymous', async () => {
    await addWebhookEndpoint(
      inst.db,
      { url: 'http://127.0.0.1:9/hook', events: ['booking.created', 'booking.cancelled'] },
      inst.clock(),
      true,
    );
    const person = { first_name: 'Barbara', last_name: 'Liskov', email: 'Barbara.Liskov@example.com', phone: '+1 617 555 0199' };
    const past = await book('2026-06-05 09:00:00', person, { 'idempotency-key': 'erasure-test-1' });
    const future = await book('2026-06-20 09:00:00', person);
    const customerId = past.user_id;
    await browser.post(`/admin/customers/${customerId}`, {
      firstName: 'Barbara',
      lastName: 'Liskov',
      email: person.email,
      phone: person.phone,
      notes: 'Barbara Liskov asked for a copy',
    });
    inst.clock.now = NOW + 6 * DAY; // the first appointment is past, the second upcoming
    await browser.signIn('admin@example.com', 'correct horse battery'); // the session idled out meanwhile

    const refused = await browser.get(`/admin/customers/${customerId}/erase`);
    assert.equal(refused.statusCode, 409);
    assert.match(refused.body, /has 1 upcoming appointment\. Cancel it first/);
    assert.doesNotMatch(refused.body, /Confirm erasure/);
    const forced = await browser.post(`/admin/customers/${customerId}/erase`, {}, `/admin/customers/${customerId}`);
    assert.equal(forced.headers.location, `/admin/customers/${customerId}/erase`);
    assert.equal(
      (await inst.db.kysely.selectFrom('customers').select('erased_at').where('id', '=', customerId).executeTakeFirstOrThrow()).erased_at,
      null,
    );

    assert.equal(
      (await browser.post(`/admin/bookings/${future.booking_details_id}/cancel`, {}, `/admin/bookings/${future.booking_details_id}/cancel`))
        .statusCode,
      303,
    );
    const confirm = await browser.get(`/admin/customers/${customerId}/erase`);
    assert.equal(confirm.statusCode, 200);
    assert.match(confirm.body, /Confirm erasure/);
    assert.match(confirm.body, /their bookings stay, without anyone&#39;s name|their bookings stay, without anyone's name/);
    const erased = await browser.post(`/admin/customers/${customerId}/erase`, {});
    assert.equal(erased.statusCode, 303);
    assert.equal(erased.headers.location, `/admin/customers/${customerId}?saved=erased`);

    // every text column of every table, searched for any of the customer's personal data
    const needles = ['Barbara', 'Liskov', 'barbara.liskov@example.com', '617 555 0199', '6175550199'];
    const tables = await inst.db.kysely.introspection.getTables();
    const found: string[] = [];
    for (const table of tables) {
      const rows = (await inst.db.kysely
        .selectFrom(table.name as never)
        .selectAll()
        .execute()) as Record<string, unknown>[];
      for (const row of rows) {
        for (const [column, value] of Object.entries(row)) {
          if (typeof value !== 'string') continue;
          const lower = value.toLowerCase();
          for (const needle of needles) if (lower.includes(needle.toLowerCase())) found.push(`${table.name}.${column} holds ${needle}`);
        }
      }
    }
    assert.deepEqual(found, []);
    assert.ok(tables.some((t) => t.name === 'webhook_deliveries'));
    assert.ok((await countRows(inst.db, 'webhook_deliveries')) > 0);

    // the bookings stay, for the statistics
    const kept = await inst.db.kysely
      .selectFrom('bookings')
      .selectAll()
      .where('customer_id', '=', customerId)
      .orderBy('start_at')
      .execute();
    assert.deepEqual(
      kept.map((b) => [b.schedule_id, b.reason_id, b.status, b.source, b.answers]),
      [
        [scheduleId, reasonId, 'booked', 'api', '{}'],
        [scheduleId, reasonId, 'cancelled', 'api', '{}'],
      ],
    );
    const pageHtml = (await browser.get(`/admin/customers/${customerId}?saved=erased`)).body;
    assert.match(pageHtml, /personal data was erased on request/);
    // a new booking with the same address is a new customer
    const later = await book('2026-06-22 09:00:00', person);
    assert.notEqual(later.user_id, customerId);
    // erasing twice is erasing once
    assert.equal((await browser.post(`/admin/customers/${customerId}/erase`, {}, `/admin/customers/${customerId}`)).statusCode, 303);
  });
});
