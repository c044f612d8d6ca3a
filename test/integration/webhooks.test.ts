// Webhooks end to end on SQLite and PostgreSQL: bookings through the API and the admin area's use-cases queue
// deliveries in their own transaction; workers POST them to a real HTTP receiver on loopback, which verifies
// every signature with the documented snippet (test/support/verify-webhook.ts) and with the Standard Webhooks
// reference library. An outage, a receiver that never answers, and two workers on one database.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, testInstallation, type TestInstallation, localDateFromToday } from '../support/installation.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { until } from './mail-support.js';
import { connect } from '../../src/db/connect.js';
import { addWebhookEndpoint, setWebhookEnabled, webhookDeliveries } from '../../src/app/webhooks.js';
import { cancelBooking, createBooking } from '../../src/app/bookings.js';
import { SnapshotCache } from '../../src/app/snapshot.js';
import { startWebhookWorker, type WebhookWorker } from '../../src/app/webhook-delivery.js';
import { claimDueDeliveries, recordOutcomes } from '../../src/db/repos/webhook.repository.js';
import type { WebhookEvent } from '../../src/core/webhooks.js';

// the real time: receivers check the signature's timestamp against their clock, and a delivery gives up
// relative to when it was queued
const NOW = Date.now();
const localDate = (days: number) => localDateFromToday(days);

describeEachDatabase('webhooks', (dialect) => {
  let inst: TestInstallation;
  let receiver: WebhookReceiver;
  let desk: number, talk: number;
  const workers: WebhookWorker[] = [];
  let slotCounter = 0;

  before(async () => {
    receiver = await WebhookReceiver.start();
  });
  after(() => receiver.down());

  // each test gets its own installation, so delivery rows and endpoints never mix between tests
  const fresh = async () => {
    slotCounter = 0;
    inst = await testInstallation(dialect, {
      now: NOW,
      schedules: [
        {
          name: 'Desk',
          slot_interval_minutes: 15,
          horizon_days: 7,
          capacity: 1000,
          weekly_hours: ALL_WEEK([['08:00', '18:00']]),
          reasons: [{ name: 'Talk', duration_minutes: 30 }],
        },
      ],
    });
    desk = inst.schedules[0]!.id;
    talk = inst.schedules[0]!.reasons[0]!.id;
  };
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 0 })));
    receiver.mode = { answer: 204 };
    receiver.hangOnly = null;
    await receiver.up().catch(() => {}); // back up if a test left it down
    await inst.close();
  });

  const nextSlot = () => {
    const n = slotCounter++;
    return `${localDate(1 + (Math.floor(n / 40) % 5))} ${String(8 + Math.floor((n % 40) / 4)).padStart(2, '0')}:${String((n % 4) * 15).padStart(2, '0')}:00`;
  };
  const bookByApi = async (email: string) => {
    const res = await inst.api({
      method: 'POST',
      url: '/api/bookings',
      payload: { schedule: desk, reason: talk, slot: nextSlot(), submission: { email, first_name: 'Ada', phone: '+49 30 1234567' } },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json<{ booking_id: number; booking_details_id: string }>();
  };
  const endpoint = async (path: string, events: WebhookEvent[] = ['booking.created', 'booking.cancelled', 'booking.rescheduled']) => {
    const e = await addWebhookEndpoint(inst.db, { url: receiver.url(path), events }, NOW, true);
    receiver.secrets.set(path, e.secret);
    return e;
  };
  const worker = (options: Partial<Parameters<typeof startWebhookWorker>[0]> = {}) => {
    const w = startWebhookWorker({
      db: inst.db,
      giveUpAfterMs: 24 * 3_600_000,
      pollIntervalMs: 25,
      retryBaseMs: 50,
      retryCapMs: 200,
      ...options,
    });
    workers.push(w);
    return w;
  };
  const allDeliveries = () => inst.db.kysely.selectFrom('webhook_deliveries').selectAll().orderBy('id').execute();

  test('API and admin bookings and a cancellation: one delivery per subscribed endpoint, signed, with the booking', async () => {
    await fresh();
    receiver.received.length = 0;
    const all = await endpoint('/all');
    const cancelsOnly = await endpoint('/cancels', ['booking.cancelled']);
    const disabled = await endpoint('/off');
    await setWebhookEnabled(inst.db, disabled.id, false);

    const viaApi = await bookByApi('ada@example.com');
    const snapshot = await new SnapshotCache(inst.db).current();
    const viaAdmin = await createBooking(
      inst.db,
      snapshot,
      { scheduleId: desk, reasonId: talk, slot: `${localDate(6)} 10:00:00`, submission: { email: 'bob@example.com' }, source: 'admin' },
      NOW,
    );
    assert.equal(await cancelBooking(inst.db, viaApi.booking_details_id, NOW + 1000), true);
    // a booking refused (the time is not bookable) queues nothing: the rows live in the booking's transaction
    const refused = await inst.api({
      method: 'POST',
      url: '/api/bookings',
      payload: { schedule: desk, reason: talk, slot: `${localDate(1)} 03:00:00`, submission: { email: 'x@example.com' } },
    });
    assert.equal(refused.statusCode, 404);

    const queued = await allDeliveries();
    assert.deepEqual(
      queued.map((d) => [d.endpoint_id, d.event_type, d.booking_id, d.state]),
      [
        [all.id, 'booking.created', viaApi.booking_id, 'queued'],
        [all.id, 'booking.created', viaAdmin.bookingId, 'queued'],
        [all.id, 'booking.cancelled', viaApi.booking_id, 'queued'],
        [cancelsOnly.id, 'booking.cancelled', viaApi.booking_id, 'queued'],
      ],
    );
    // one event, one id, whichever endpoint it goes to
    assert.equal(queued[2]!.event_id, queued[3]!.event_id);

    worker();
    await until('4 deliveries', () => receiver.received.length >= 4);
    await until('all recorded', async () => (await allDeliveries()).every((d) => d.state === 'delivered'));
    assert.equal(receiver.received.length, 4);
    for (const r of receiver.received) {
      assert.equal(r.error, null, `the documented snippet verifies the delivery (${r.error})`);
      assert.equal(r.headers['content-type'], 'application/json');
      // the Standard Webhooks reference verifier agrees
      new Webhook(receiver.secrets.get(r.headers['x-path'] as string)!).verify(r.body, r.headers as Record<string, string>);
    }
    const created = receiver.events('/all').find((e) => e.type === 'booking.created' && e.data.booking.booking_id === viaApi.booking_id)!;
    const b = created.data.booking as any;
    assert.equal(b.booking_details_id, viaApi.booking_details_id);
    assert.equal(b.source, 'api');
    assert.equal(b.status, 'booked');
    assert.deepEqual(b.schedule, { id: desk, name: 'Desk' });
    assert.deepEqual(b.reason, { id: talk, name: 'Talk', duration_minutes: 30 });
    assert.equal(b.start_local, `${localDate(1)} 08:00:00`, 'the first slot booked');
    assert.equal(b.end_local, `${localDate(1)} 08:30:00`);
    assert.equal(Date.parse(b.end) - Date.parse(b.start), 30 * 60_000);
    assert.equal(new Date(b.start).toISOString(), b.start, 'UTC, ISO 8601');
    assert.equal(
      new Intl.DateTimeFormat('sv-SE', { timeZone: 'Europe/Berlin', dateStyle: 'short', timeStyle: 'medium' }).format(new Date(b.start)),
      b.start_local,
    );
    assert.equal(b.timezone, 'Europe/Berlin');
    assert.deepEqual(b.customer, {
      id: b.customer.id,
      first_name: 'Ada',
      last_name: '',
      email: 'ada@example.com',
      phone: '+49 30 1234567',
    });
    assert.deepEqual(b.submission, { email: 'ada@example.com', first_name: 'Ada', phone: '+49 30 1234567' });
    assert.equal(created.created_at, new Date(NOW).toISOString());
    const adminCreated = receiver.events('/all').find((e) => e.data.booking.booking_id === viaAdmin.bookingId)!;
    assert.equal((adminCreated.data.booking as any).source, 'admin');
    const [cancelled] = receiver.events('/cancels');
    assert.equal(cancelled!.type, 'booking.cancelled');
    assert.equal((cancelled!.data.booking as any).status, 'cancelled');
    assert.equal(receiver.events('/off').length, 0);
    const rows = await webhookDeliveries(inst.db, all.id);
    assert.ok(rows.every((d) => d.attempts === 1 && d.last_status === 204 && d.delivered_at !== null));
  });

  test('an outage: every event arrives once the receiver is back, each booking in order', async () => {
    await fresh();
    receiver.received.length = 0;
    await endpoint('/hook');
    await receiver.down();
    worker();
    const bookings = [];
    for (let i = 0; i < 6; i++) bookings.push(await bookByApi(`p${i}@example.com`));
    for (const b of bookings.slice(0, 4)) assert.ok(await cancelBooking(inst.db, b.booking_details_id, NOW));
    await until('failed attempts recorded', async () => (await allDeliveries()).filter((d) => d.attempts >= 2).length >= 3);
    const waiting = await allDeliveries();
    assert.ok(waiting.every((d) => d.state !== 'delivered'));
    assert.ok(
      waiting.some((d) => /ECONNREFUSED|fetch failed/.test(d.last_error ?? '')),
      JSON.stringify(waiting.map((d) => d.last_error)),
    );
    // a cancellation is never attempted while its booking's creation is still open
    for (const d of waiting.filter((x) => x.event_type === 'booking.cancelled')) assert.equal(d.attempts, 0);

    await receiver.up();
    await until('10 events delivered', async () => (await allDeliveries()).every((d) => d.state === 'delivered'));
    const events = receiver.events('/hook');
    assert.equal(new Set(events.map((e) => e.id)).size, 10);
    assert.equal(events.length, 10, 'each event once');
    for (const b of bookings.slice(0, 4)) {
      const types = events.filter((e) => e.data.booking.booking_id === b.booking_id).map((e) => e.type);
      assert.deepEqual(types, ['booking.created', 'booking.cancelled']);
    }
  });

  test('a receiver that never answers: the attempt times out and is retried, and bookings go on meanwhile', async () => {
    await fresh();
    receiver.received.length = 0;
    await endpoint('/hook');
    receiver.mode = { hang: true };
    worker({ timeoutMs: 4_000, retryBaseMs: 400, retryCapMs: 400 });
    await bookByApi('first@example.com');
    await until('the first attempt hangs at the receiver', () => receiver.hangingCount >= 1);
    // ten bookings while the delivery hangs: each answers 201 (bookByApi asserts it) and queues its own delivery
    for (let i = 0; i < 10; i++) await bookByApi(`next${i}@example.com`);
    assert.equal(receiver.hangingCount >= 1, true, 'the delivery was still waiting for the receiver');
    assert.equal((await allDeliveries()).length, 11);

    // recorded, whatever the row's state when looked at: with a short retry delay it is soon claimed again
    // (its 'sending' state then hides nothing: the last attempt's error stays on the row)
    const timedOutError = /no answer within the timeout/;
    await until('the timeout recorded', async () =>
      (await allDeliveries()).some((d) => d.attempts >= 1 && timedOutError.test(d.last_error ?? '')),
    );
    const timedOut = (await allDeliveries()).find((d) => timedOutError.test(d.last_error ?? ''))!;
    assert.ok(timedOut.attempts >= 1);
    assert.equal(timedOut.last_status, null);
    receiver.mode = { answer: 200 };
    await until(
      'all delivered after the receiver recovers',
      async () => (await allDeliveries()).every((d) => d.state === 'delivered'),
      60_000,
    );
    assert.equal(new Set(receiver.events('/hook').map((e) => e.id)).size, 11);
  });

  test('an endpoint that never answers does not hold back another endpoint', async () => {
    await fresh();
    receiver.received.length = 0;
    await endpoint('/slow');
    await endpoint('/fast');
    // the receiver hangs on /slow only; /fast answers
    receiver.mode = { hang: true };
    receiver.hangOnly = '/slow';
    worker({ timeoutMs: 20_000 });
    for (let i = 0; i < 12; i++) await bookByApi(`p${i}@example.com`);
    // all 12 reach /fast while /slow's attempts are still waiting for their 20 s timeout (before: a poll
    // waited for its whole batch, so each 20 s gave /fast only the few deliveries claimed beside /slow's)
    await until('every event at /fast', () => receiver.events('/fast').length === 12, 15_000);
    assert.ok(
      receiver.hangingCount >= 1 && receiver.hangingCount <= 4,
      `/slow holds at most half of the 8 lanes (${receiver.hangingCount})`,
    );
  });

  test('a 500 is a failure with its status; after the give-up time the delivery is failed', async () => {
    await fresh();
    receiver.received.length = 0;
    await endpoint('/hook');
    receiver.mode = { answer: 500 };
    worker({ giveUpAfterMs: 1_500 });
    inst.clock.now = Date.now(); // queued now: the give-up time counts from here
    await bookByApi('ada@example.com');
    await until('given up', async () => (await allDeliveries())[0]!.state === 'failed');
    const [row] = await allDeliveries();
    assert.equal(row!.last_status, 500);
    assert.match(row!.last_error ?? '', /^HTTP 500/);
    assert.ok(row!.attempts >= 2, `retried before giving up (${row!.attempts})`);
  });

  test('two workers on one database (their own connections): every event delivered once, in order per booking', async () => {
    await fresh();
    receiver.received.length = 0;
    await endpoint('/hook');
    const second = connect(inst.url);
    try {
      worker({ concurrency: 4 });
      worker({ db: second, concurrency: 4 });
      const bookings = [];
      for (let i = 0; i < 20; i++) bookings.push(await bookByApi(`p${i}@example.com`));
      for (const b of bookings.slice(0, 10)) assert.ok(await cancelBooking(inst.db, b.booking_details_id, NOW));
      await until('30 deliveries recorded', async () => (await allDeliveries()).every((d) => d.state === 'delivered'));
      await new Promise((r) => setTimeout(r, 300));
      const events = receiver.events('/hook');
      assert.equal(events.length, 30, 'no event twice');
      assert.equal(new Set(events.map((e) => e.id)).size, 30);
      for (const b of bookings.slice(0, 10)) {
        const types = events.filter((e) => e.data.booking.booking_id === b.booking_id).map((e) => e.type);
        assert.deepEqual(types, ['booking.created', 'booking.cancelled']);
      }
      assert.ok((await allDeliveries()).every((d) => d.attempts === 1));
    } finally {
      await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 0 })));
      await second.close();
    }
  });
  test('outcomes written together keep their own: status, error, retry, give-up; a stale claim is not overwritten', async () => {
    await fresh();
    await endpoint('/hook');
    for (let i = 0; i < 5; i++) await bookByApi(`g${i}@example.com`);
    const until_ = NOW + 60_000;
    const { claimed } = await claimDueDeliveries(inst.db, NOW, until_, { total: 8, room: () => 8 });
    assert.equal(claimed.length, 5);
    const [a, b, c, d, e] = claimed.map((r) => r.id) as [number, number, number, number, number];
    const recorded = await recordOutcomes(inst.db.kysely, [
      { id: a, claimedUntil: until_, status: 200, error: null, retryAt: null, at: NOW + 1 },
      { id: b, claimedUntil: until_, status: 202, error: null, retryAt: null, at: NOW + 2 },
      { id: c, claimedUntil: until_, status: 500, error: 'HTTP 500: down', retryAt: NOW + 5_000, at: NOW + 3 },
      { id: d, claimedUntil: until_, status: null, error: 'no answer within the timeout', retryAt: null, at: NOW + 4 },
      // an attempt made under a claim that has since changed hands: its failure must not touch the row
      { id: e, claimedUntil: until_ - 1, status: 503, error: 'HTTP 503', retryAt: NOW + 9_000, at: NOW + 5 },
    ]);
    assert.deepEqual(
      [...recorded].sort((x, y) => x - y),
      [a, b, c, d],
    );
    const byId = new Map((await allDeliveries()).map((r) => [r.id, r]));
    const view = (id: number) => {
      const r = byId.get(id)!;
      return [
        r.state,
        r.last_status,
        r.last_error,
        r.attempts,
        r.delivered_at === null ? null : Number(r.delivered_at),
        Number(r.next_attempt_at),
        r.claimed_until === null ? null : Number(r.claimed_until),
      ];
    };
    assert.deepEqual(view(a), ['delivered', 200, null, 1, NOW + 1, until_, null]);
    assert.deepEqual(view(b), ['delivered', 202, null, 1, NOW + 2, until_, null]);
    assert.deepEqual(view(c), ['retrying', 500, 'HTTP 500: down', 1, null, NOW + 5_000, null]);
    assert.deepEqual(view(d), ['failed', null, 'no answer within the timeout', 1, null, until_, null]);
    assert.deepEqual(view(e), ['sending', null, null, 0, null, until_, until_]);
    // a delivered one is written once: the same outcome again changes nothing
    assert.deepEqual(
      [...(await recordOutcomes(inst.db.kysely, [{ id: a, claimedUntil: until_, status: 204, error: null, retryAt: null, at: NOW + 9 }]))],
      [],
    );
  });
});
