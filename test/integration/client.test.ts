// The TypeScript client (clients/typescript) against a real server listening on a port, on SQLite and
// PostgreSQL: the six-call flow, typed errors, an Idempotency-Key on every booking, retries after a 429
// (honouring Retry-After) and after a network error. The client's waits advance the server's clock, so a
// Retry-After of many seconds costs the test none. Real TCP throughout; a relay stands in for a network
// that fails.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { once } from 'node:events';
import SQLite from 'better-sqlite3';
import { BookingApiError, BookingClient, type BookingClientOptions, type ErrorMessage } from '../../clients/typescript/src/index.js';
import { bookFirstFreeTime } from '../../clients/typescript/example.js';
import { setOperatorSetting } from '../../src/app/installation.js';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, deskSchedule, testInstallation, type TestInstallation } from '../support/installation.js';
import { TcpRelay } from '../support/tcp-relay.js';

// Monday 2026-06-01 08:00 in Berlin (06:00Z)
const NOW = Date.UTC(2026, 5, 1, 6, 0);

// compile-time: a message the document does not list for a status is a type error
const timeTaken: ErrorMessage<404> = 'Time not available';
// @ts-expect-error not a documented 404 message
const typo: ErrorMessage<404> = 'Time not availabel';
void [timeTaken, typo];

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describeEachDatabase('TypeScript client', (dialect) => {
  let inst: TestInstallation;
  let baseUrl: string;
  let port: number;
  /** every request the client sent, with its answer's status (observed on the way, not altered) */
  let sent: { method: string; path: string; key: string | null; status: number }[] = [];
  let waits: number[] = [];

  const client = (options: Partial<BookingClientOptions> = {}) =>
    new BookingClient({
      baseUrl,
      token: inst.token,
      fetch: async (request) => {
        const response = await fetch(request);
        sent.push({
          method: request.method,
          path: new URL(request.url).pathname,
          key: request.headers.get('idempotency-key'),
          status: response.status,
        });
        return response;
      },
      // waiting moves the server's clock instead of the test's time
      sleep: async (ms) => {
        waits.push(ms);
        inst.clock.now += ms;
      },
      ...options,
    });

  before(async () => {
    inst = await testInstallation(dialect, {
      now: NOW,
      schedules: [deskSchedule({ horizon_days: 14, weekly_hours: ALL_WEEK([['09:00', '17:00']]) })],
    });
    await inst.app.listen({ port: 0, host: '127.0.0.1' });
    port = (inst.app.server.address() as { port: number }).port;
    baseUrl = `http://127.0.0.1:${port}/api/`;
  });
  after(() => inst.close());

  const reset = () => {
    sent = [];
    waits = [];
  };

  test('the six-call flow books, with an Idempotency-Key; the time zone comes with the local times', async () => {
    reset();
    const api = client();
    const [schedule] = await api.schedules();
    assert.equal(schedule!.name, 'Desk');
    const [reason] = await api.reasons(schedule!.id);
    assert.equal(reason!.duration, 1800);
    assert.equal(api.timeZone, null);
    const days = await api.days(schedule!.id, reason!.id);
    assert.equal(days[0], '2026-06-01');
    assert.equal(api.timeZone, 'Europe/Berlin');
    const slots = await api.slots(schedule!.id, reason!.id, days[1]!);
    assert.equal(slots[0], '2026-06-02 09:00:00');
    const form = await api.form(schedule!.id, reason!.id, slots[0]);
    assert.equal(form.email!.required, true);
    const booked = await api.book({
      schedule: schedule!.id,
      reason: reason!.id,
      slot: slots[0],
      submission: { first_name: 'Ada', email: 'ada@example.com' },
    });
    assert.equal(booked.slot, '2026-06-02T07:00:00Z');
    assert.ok(booked.booking_details_id.length >= 20);

    const posts = sent.filter((s) => s.method === 'POST');
    assert.equal(posts.length, 1);
    assert.match(posts[0]!.key!, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.ok(
      sent.filter((s) => s.method === 'GET').every((s) => s.key === null),
      'only bookings carry a key',
    );

    // the same time again: a typed 404 that tells "just taken" from a configuration error
    const again = await api
      .book({ schedule: schedule!.id, reason: reason!.id, slot: slots[0], submission: { email: 'bob@example.com' } })
      .then(
        () => assert.fail('booked twice'),
        (error: unknown) => error,
      );
    assert.ok(again instanceof BookingApiError);
    assert.ok(again.is(404, 'Time not available'));
    assert.equal(again.field, undefined);
    const keys = sent.filter((s) => s.method === 'POST').map((s) => s.key);
    assert.notEqual(keys[0], keys[1], 'a new booking gets a new key');
  });

  test("the README's example books the first free time", async () => {
    const booked = await bookFirstFreeTime(baseUrl, inst.token, 'grace@example.com');
    // today's first free time: 09:00 Berlin, an hour after the clock's 08:00
    assert.equal(booked?.slot, '2026-06-01T07:00:00Z');
  });

  test('typed errors: 404 with its message on a GET, 400 with its field on a booking', async () => {
    reset();
    const api = client();
    await assert.rejects(api.reasons(999), (error: unknown) => {
      assert.ok(error instanceof BookingApiError);
      assert.equal(error.status, 404);
      assert.equal(error.message, 'Schedule not found');
      assert.ok(error.is(404));
      assert.ok(!error.is(404, 'Reason not found'));
      return true;
    });
    const [schedule] = await api.schedules();
    const [reason] = await api.reasons(schedule!.id);
    await assert.rejects(
      api.book({ schedule: schedule!.id, reason: reason!.id, slot: '2026-06-03 09:00:00', submission: { email: 'not an address' } }),
      (error: unknown) => error instanceof BookingApiError && error.is(400, 'Must be an e-mail address') && error.field === 'email',
    );
  });

  test('429: waits what Retry-After says and retries; a booking keeps its key across the retry', async () => {
    reset();
    await setOperatorSetting(inst.db, 'api.rate_limit_per_minute', '2');
    try {
      // a fresh window that opens now: two calls pass, the third is limited
      inst.clock.now += 120_000;
      const api = client();
      const [schedule] = await api.schedules();
      const [reason] = await api.reasons(schedule!.id);
      const booked = await api.book({
        schedule: schedule!.id,
        reason: reason!.id,
        slot: '2026-06-04 10:00:00',
        submission: { email: 'ada@example.com' },
      });
      assert.equal(booked.slot, '2026-06-04T08:00:00Z');
      const posts = sent.filter((s) => s.method === 'POST');
      assert.deepEqual(
        posts.map((s) => s.status),
        [429, 201],
      );
      assert.equal(posts[0]!.key, posts[1]!.key, 'the retry repeats the Idempotency-Key');
      assert.equal(waits.length, 1);
      // the window opened with the first call, so the wait is the rest of its 60 seconds
      assert.ok(waits[0]! >= 1000 && waits[0]! <= 60_000 && waits[0]! % 1000 === 0, `waited ${waits[0]} ms`);

      // a Retry-After longer than the client accepts: the 429 comes back at once, typed
      await api.schedules();
      reset();
      const impatient = client({ maxRetryAfterSeconds: 0 });
      await assert.rejects(
        impatient.schedules(),
        (error: unknown) => error instanceof BookingApiError && error.is(429, 'Too Many Requests'),
      );
      assert.deepEqual(waits, []);
    } finally {
      await setOperatorSetting(inst.db, 'api.rate_limit_per_minute', '300');
      inst.clock.now += 120_000;
    }
  });

  test('500 with Retry-After (SQLite write lock held elsewhere): the booking is retried after the wait, with its key', async (t) => {
    if (dialect !== 'sqlite') return t.skip('an SQLite lock');
    reset();
    const other = new SQLite(inst.url.slice('sqlite:'.length));
    other.exec('begin immediate');
    try {
      const api = client({
        sleep: async (ms) => {
          waits.push(ms);
          other.exec('rollback');
        },
      });
      const booked = await api.book({
        schedule: inst.schedules[0]!.id,
        reason: inst.schedules[0]!.reasons[0]!.id,
        slot: '2026-06-06 10:00:00',
        submission: { email: 'ada@example.com' },
      });
      assert.equal(booked.slot, '2026-06-06T08:00:00Z');
      assert.deepEqual(
        sent.map((s) => s.status),
        [500, 201],
      );
      assert.equal(sent[0]!.key, sent[1]!.key);
      assert.deepEqual(waits, [5000]);
    } finally {
      if (other.inTransaction) other.exec('rollback');
      other.close();
    }
  });

  test('a network error: a GET and a booking (it carries a key) are retried; a POST without a key is not', async () => {
    const relayPort = await freePort();
    const relay = new TcpRelay(relayPort, port);
    // nothing listens at the relay's port until the client's first wait opens it
    const api = client({
      baseUrl: `http://127.0.0.1:${relayPort}/api`,
      sleep: async (ms) => {
        waits.push(ms);
        await relay.open();
      },
    });
    try {
      reset();
      const [schedule] = await api.schedules();
      assert.equal(schedule!.name, 'Desk');
      assert.equal(waits.length, 1);
      await relay.cut();

      reset();
      const [reason] = await client().reasons(schedule!.id);
      const booked = await api.book({
        schedule: schedule!.id,
        reason: reason!.id,
        slot: '2026-06-05 10:00:00',
        submission: { email: 'ada@example.com' },
      });
      assert.equal(booked.slot, '2026-06-05T08:00:00Z');
      assert.equal(waits.length, 1);
      await relay.cut();

      reset();
      await assert.rejects(
        api.raw.POST('/bookings', {
          body: { schedule: schedule!.id, reason: reason!.id, slot: '2026-06-05 11:00:00', submission: { email: 'ada@example.com' } },
        }),
        TypeError,
      );
      assert.deepEqual(waits, [], 'a POST without an Idempotency-Key is never repeated');
    } finally {
      await relay.cut();
    }
  });
});
