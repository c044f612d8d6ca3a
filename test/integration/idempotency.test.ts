// Idempotency-Key on POST /bookings (issue 12), through real HTTP on SQLite and PostgreSQL: a retry replays
// the first answer byte for byte, the same key with another body is refused, concurrent requests with one
// key book once (in one process, and across two `booking serve` processes on one database), a claim left
// by a dead request is taken over after its lease, and keys expire after 24 hours.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachDatabase, freshDatabase, type TestDatabase } from '../support/databases.js';
import { ALL_WEEK, deskSchedule, testInstallation, type TestInstallation } from '../support/installation.js';
import { readyInstallation, serve, type ServeProcess } from '../support/processes.js';
import { connect } from '../../src/db/connect.js';
import {
  CLAIM_LEASE_MS,
  IDEMPOTENCY_TTL_MS,
  KeyTakenOver,
  claimIdempotencyKey,
  recordAnswer,
  recordingAnswerIn,
  requestHash,
} from '../../src/app/idempotency.js';
import { createBooking, type BookingCreated, type BookingRequest } from '../../src/app/bookings.js';
import { SnapshotCache } from '../../src/app/snapshot.js';
import { findKey, reclaimKey } from '../../src/db/repos/idempotency.repository.js';

// Monday 2026-06-01 06:00Z = 08:00 in Berlin
const NOW = Date.UTC(2026, 5, 1, 6, 0);

describeEachDatabase('Idempotency-Key on POST /bookings', (dialect) => {
  let inst: TestInstallation;
  let origin: string;
  let desk: number, talk: number;
  before(async () => {
    inst = await testInstallation(dialect, {
      now: NOW,
      schedules: [
        deskSchedule({
          weekly_hours: ALL_WEEK([['09:00', '18:00']]),
          form: { email: { label: 'E-mail', input_type: 'email', required: true } },
        }),
      ],
    });
    desk = inst.schedules[0]!.id;
    talk = inst.schedules[0]!.reasons[0]!.id;
    origin = await inst.listen();
  });
  after(() => inst.close());

  const body = (slot: string, email = 'ada@example.com') => ({ schedule: desk, reason: talk, slot, submission: { email } });
  async function post(payload: unknown, key?: string) {
    const res = await fetch(`${origin}/api/bookings`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${inst.token}`,
        'content-type': 'application/json',
        ...(key === undefined ? {} : { 'idempotency-key': key }),
      },
      body: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });
    return { status: res.status, replayed: res.headers.get('idempotent-replayed'), text: await res.text() };
  }
  const bookingsAt = async (slotUtc: string) =>
    (await inst.db.kysely.selectFrom('bookings').select('id').where('start_at', '=', Date.parse(slotUtc)).execute()).length;
  /** a claim by another request, without an answer yet */
  const holdKey = (key: string, payload: unknown, startedAt: number) =>
    inst.db.kysely
      .insertInto('idempotency_keys')
      .values({
        key,
        claim: 'another request',
        request_hash: requestHash(payload),
        status: null,
        body: null,
        started_at: startedAt,
        expires_at: startedAt + IDEMPOTENCY_TTL_MS,
      })
      .execute();
  const keyRows = async () => (await inst.db.kysely.selectFrom('idempotency_keys').select('key').execute()).map((r) => r.key);

  test('a retry with the same key and body gets the same status and body, marked as a replay, and books once', async () => {
    const first = await post(body('2026-06-02 09:00:00'), 'order-1001');
    assert.equal(first.status, 201, first.text);
    assert.equal(first.replayed, null);
    const retry = await post(body('2026-06-02 09:00:00'), 'order-1001');
    assert.deepEqual(retry, { ...first, replayed: 'true' });
    // the same JSON with other whitespace is the same request
    const spaced = await post(JSON.stringify(body('2026-06-02 09:00:00'), null, 2), 'order-1001');
    assert.deepEqual(spaced, { ...first, replayed: 'true' });
    assert.equal(await bookingsAt('2026-06-02T07:00:00Z'), 1);
    // without the key, the same request finds its own booking in the way (the contract's behaviour)
    const unkeyed = await post(body('2026-06-02 09:00:00'));
    assert.equal(unkeyed.status, 404);
    assert.deepEqual(JSON.parse(unkeyed.text), { error: 'Time not available' });
  });

  test('the same key with a different body answers 400 and changes nothing', async () => {
    const first = await post(body('2026-06-02 10:00:00'), 'order-1002');
    assert.equal(first.status, 201, first.text);
    const other = await post(body('2026-06-02 10:30:00'), 'order-1002');
    assert.equal(other.status, 400);
    assert.deepEqual(JSON.parse(other.text), { error: 'Idempotency-Key reused with a different request' });
    assert.equal(await bookingsAt('2026-06-02T08:30:00Z'), 0);
  });

  test('a 404 and a submission 400 are final: stored and replayed', async () => {
    const invalid = await post(body('2026-06-02 11:00:00', 'not an address'), 'order-1003');
    assert.equal(invalid.status, 400);
    assert.equal(JSON.parse(invalid.text).field, 'email');
    assert.deepEqual(await post(body('2026-06-02 11:00:00', 'not an address'), 'order-1003'), { ...invalid, replayed: 'true' });
    const closed = await post(body('2026-06-02 20:00:00'), 'order-1004');
    assert.equal(closed.status, 404);
    assert.deepEqual(await post(body('2026-06-02 20:00:00'), 'order-1004'), { ...closed, replayed: 'true' });
  });

  test('a key that is empty, too long or not printable ASCII answers 400 and books nothing', async () => {
    for (const key of ['', 'k'.repeat(256), 'schlüssel']) {
      const res = await post(body('2026-06-02 12:00:00'), key);
      assert.equal(res.status, 400, `key ${JSON.stringify(key)}`);
      assert.match(JSON.parse(res.text).error, /^Invalid Idempotency-Key/);
    }
    assert.equal((await post(body('2026-06-02 12:00:00'), 'k'.repeat(255))).status, 201);
  });

  test('without the header no key is stored', async () => {
    const before = await keyRows();
    assert.equal((await post(body('2026-06-02 12:30:00'))).status, 201);
    assert.deepEqual(await keyRows(), before);
  });

  test('ten concurrent requests with one key book once and all get the same answer', async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, () => post(body('2026-06-02 13:00:00'), 'burst-1')));
    assert.equal(await bookingsAt('2026-06-02T11:00:00Z'), 1);
    assert.ok(
      answers.every((a) => a.status === 201 && a.text === answers[0]!.text),
      JSON.stringify(answers),
    );
    assert.equal(answers.filter((a) => a.replayed === 'true').length, 9);
  });

  test('a request waits for the owner of its key and replays the answer it records', async () => {
    const payload = body('2026-06-02 14:00:00');
    // another request (another instance, say) holds the key and has not answered yet
    await holdKey('held', payload, inst.clock());
    const waiting = post(payload, 'held');
    await new Promise((r) => setTimeout(r, 300));
    await inst.db.kysely
      .updateTable('idempotency_keys')
      .set({ status: 201, body: '{"booking_id":42}' })
      .where('key', '=', 'held')
      .execute();
    assert.deepEqual(await waiting, { status: 201, replayed: 'true', text: '{"booking_id":42}' });
    assert.equal(await bookingsAt('2026-06-02T12:00:00Z'), 0);
  });

  test('a claim abandoned past its lease (its process died) is taken over by the next request', async () => {
    const payload = body('2026-06-02 15:00:00');
    await holdKey('orphan', payload, inst.clock() - CLAIM_LEASE_MS);
    const res = await post(payload, 'orphan');
    assert.equal(res.status, 201, res.text);
    assert.equal(res.replayed, null);
    assert.equal(await bookingsAt('2026-06-02T13:00:00Z'), 1);
  });

  test('after 24 hours a key is forgotten: expired keys are purged and the key can be used anew', async () => {
    const first = await post(body('2026-06-03 09:00:00'), 'order-2001');
    assert.equal(first.status, 201);
    inst.clock.now += IDEMPOTENCY_TTL_MS - 1000;
    assert.equal((await post(body('2026-06-03 09:00:00'), 'order-2001')).replayed, 'true', 'kept for 24 hours');
    // past the expiry, and past the purge's interval since the last request with a key purged
    inst.clock.now += 11 * 60_000;
    const reused = await post(body('2026-06-03 10:00:00'), 'order-2001');
    assert.equal(reused.status, 201, reused.text);
    assert.equal(reused.replayed, null);
    // every key stored a day before is gone; the reused one is there, and a new key now
    assert.deepEqual((await keyRows()).sort(), ['order-2001']);
    inst.clock.now = NOW;
  });
});

describeEachDatabase('Idempotency-Key across two serve processes on one database', (dialect) => {
  let target: TestDatabase;
  const servers: ServeProcess[] = [];
  let headers: Record<string, string>;
  let schedule: number;
  before(async () => {
    target = await freshDatabase(dialect);
    const ready = await readyInstallation(target.url);
    headers = ready.headers;
    schedule = ready.schedule;
    servers.push(await serve(target.url), await serve(target.url));
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await target.drop();
  });

  test('twenty requests with one key, spread over both instances, book once and get one answer', async () => {
    const reasons = (await (await fetch(`${servers[0]!.origin}/api/reasons?schedule=${schedule}`, { headers })).json()) as {
      data: { id: number }[];
    };
    const days = (await (
      await fetch(`${servers[0]!.origin}/api/days?schedule=${schedule}&reason=${reasons.data[0]!.id}`, { headers })
    ).json()) as {
      data: string[];
    };
    const payload = JSON.stringify({
      schedule,
      reason: reasons.data[0]!.id,
      slot: `${days.data[1]} 12:00:00`,
      submission: { email: 'race@example.com' },
    });
    const answers = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const res = await fetch(`${servers[i % 2]!.origin}/api/bookings`, {
          method: 'POST',
          headers: { ...headers, 'idempotency-key': 'two-instances' },
          body: payload,
        });
        return { status: res.status, replayed: res.headers.get('idempotent-replayed'), text: await res.text() };
      }),
    );
    assert.ok(
      answers.every((a) => a.status === 201 && a.text === answers[0]!.text),
      JSON.stringify(answers),
    );
    assert.equal(answers.filter((a) => a.replayed === null).length, 1);
    const db = connect(target.url);
    try {
      assert.equal((await db.kysely.selectFrom('bookings').select('id').execute()).length, 1);
    } finally {
      await db.close();
    }
  });
});

describeEachDatabase('Idempotency-Key: an owner outliving its lease', (dialect) => {
  let inst: TestInstallation;
  let request: BookingRequest;
  const body = { slot: '2026-06-02 09:00:00', submission: { email: 'slow@example.com' } };
  before(async () => {
    inst = await testInstallation(dialect, {
      now: NOW,
      schedules: [
        deskSchedule({
          // capacity 2: a second booking of the same time would succeed, so only the key can prevent it
          capacity: 2,
          weekly_hours: ALL_WEEK([['09:00', '18:00']]),
          form: { email: { label: 'E-mail', input_type: 'email', required: true } },
        }),
      ],
    });
    const schedule = inst.schedules[0]!;
    request = { scheduleId: schedule.id, reasonId: schedule.reasons[0]!.id, ...body, source: 'api' };
  });
  after(() => inst.close());

  const answerOf = (created: BookingCreated) => ({ status: 201, body: JSON.stringify({ booking_id: created.bookingId }) });

  test('a key taken over while its first owner still works books once: the late owner is rolled back', async () => {
    const snapshot = await new SnapshotCache(inst.db).current();
    const hash = requestHash(body);
    const first = await claimIdempotencyKey(inst.db, 'slow-owner', hash, inst.clock);
    assert.equal(first.kind, 'owner');
    // the first owner stalls past its lease (a paused process, clocks apart): another request takes over and books
    inst.clock.now += CLAIM_LEASE_MS + 1_000;
    const second = await claimIdempotencyKey(inst.db, 'slow-owner', hash, inst.clock);
    assert.equal(second.kind, 'owner');
    if (second.kind !== 'owner' || first.kind !== 'owner') return;
    await createBooking(inst.db, snapshot, request, inst.clock(), recordingAnswerIn(second, answerOf));
    // the first owner wakes up and books: its answer can no longer be recorded, so its booking must not stand
    await assert.rejects(createBooking(inst.db, snapshot, request, inst.clock(), recordingAnswerIn(first, answerOf)), KeyTakenOver);
    const bookings = await inst.db.kysely.selectFrom('bookings').select('id').where('schedule_id', '=', request.scheduleId).execute();
    assert.equal(bookings.length, 1, 'one key, one booking');
    // and the key answers what the booking that stands answered
    const again = await claimIdempotencyKey(inst.db, 'slow-owner', hash, inst.clock);
    assert.equal(again.kind, 'replay');
    if (again.kind === 'replay') assert.equal(again.answer.body, JSON.stringify({ booking_id: bookings[0]!.id }));
  });

  test('a takeover decided on a stale read does not wipe an answer recorded meanwhile', async () => {
    const hash = requestHash(body);
    const owner = await claimIdempotencyKey(inst.db, 'answered-meanwhile', hash, inst.clock);
    assert.equal(owner.kind, 'owner');
    if (owner.kind !== 'owner') return;
    inst.clock.now += CLAIM_LEASE_MS + 1_000;
    // another request read the row while it was pending and past its lease ...
    const seen = await findKey(inst.db.kysely, 'answered-meanwhile');
    // ... then the owner recorded its answer
    await recordAnswer(inst.db, owner, { status: 404, body: '{"error":"Time not available"}' });
    const now = inst.clock();
    const taken = await inst.db.write((trx) =>
      reclaimKey(trx, 'answered-meanwhile', seen!.claim, 'late', hash, now, now + IDEMPOTENCY_TTL_MS, now - CLAIM_LEASE_MS),
    );
    assert.equal(taken, false);
    assert.equal((await findKey(inst.db.kysely, 'answered-meanwhile'))!.status, 404);
  });
});
