// Webhooks as an operator runs them: `bin/booking webhook …` as a child process, and `bin/booking serve`
// SIGKILLed while a delivery is in flight: a `serve` started afterwards delivers it (at least once, nothing
// lost). A real receiver on loopback verifies every request with the documented snippet. SQLite and PostgreSQL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachDatabase, freshDatabase, type TestDatabase } from '../support/databases.js';
import { cli, readyInstallation, serve, type Ready, type ServeProcess } from '../support/processes.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { until } from './mail-support.js';
import { localDateFromToday } from '../support/installation.js';
import { connect } from '../../src/db/connect.js';

const localDate = (days: number) => localDateFromToday(days);

describeEachDatabase('webhooks with bin/booking', (dialect) => {
  let target: TestDatabase;
  let ready: Ready;
  let receiver: WebhookReceiver;
  const servers: ServeProcess[] = [];
  before(async () => {
    target = await freshDatabase(dialect);
    ready = await readyInstallation(target.url);
    receiver = await WebhookReceiver.start();
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop('SIGKILL')));
    await receiver.down();
    await target.drop();
  });

  const rows = async () => {
    const db = connect(target.url);
    try {
      return await db.kysely.selectFrom('webhook_deliveries').selectAll().orderBy('id').execute();
    } finally {
      await db.close();
    }
  };

  /** POST /bookings on a running serve; the answer's booking id (asserts the 201). */
  const bookAt = async (origin: string, slot: string) => {
    const res = await fetch(`${origin}/api/bookings`, {
      method: 'POST',
      headers: ready.headers,
      body: JSON.stringify({ schedule: ready.schedule, reason: 1, slot, submission: { email: 'ada@example.com' } }),
    });
    const text = await res.text();
    assert.equal(res.status, 201, text);
    return (JSON.parse(text) as { booking_id: number }).booking_id;
  };

  test('webhook add / list / remove; bad input: one line on stderr, non-zero, nothing stored', async () => {
    const bad = [
      ['webhook', 'add', 'ftp://example.com/hook'],
      ['webhook', 'add', 'https://user:secret@example.com/hook'],
      ['webhook', 'add', 'https://example.com/hook\u0007'],
      ['webhook', 'add', 'https://example.com/hook', '--events', 'booking.created,booking.moved'],
      ['webhook', 'add', 'https://example.com/hook', '--events', ''],
      ['webhook', 'add'],
      ['webhook', 'add', 'https://a.example/', 'https://b.example/'],
      ['webhook', 'remove', '99'],
      ['webhook', 'remove', 'one'],
      ['webhook', 'frobnicate'],
    ];
    for (const args of bad) {
      const r = await cli(target.url, ...args);
      assert.notEqual(r.code, 0, args.join(' '));
      assert.match(r.stderr, /^booking: \S.*\n/, `${args.join(' ')}: ${r.stderr}`);
    }
    assert.equal((await cli(target.url, 'webhook', 'list')).stdout, '', 'nothing was stored');

    const added = await cli(target.url, 'webhook', 'add', 'https://crm.example.com/in', '--events', 'booking.cancelled');
    assert.equal(added.code, 0, added.stderr);
    const [, id] = /^Webhook endpoint (\d+): https:\/\/crm\.example\.com\/in\n/.exec(added.stdout)!;
    assert.match(added.stdout, /\nEvents: booking\.cancelled\n/);
    const secret = /\nSecret: (whsec_\S+)\n/.exec(added.stdout)![1]!;
    assert.equal(Buffer.from(secret.slice(6), 'base64').length, 32);
    const listed = await cli(target.url, 'webhook', 'list');
    assert.equal(listed.stdout, `${id}\tenabled\thttps://crm.example.com/in\tbooking.cancelled\n`);
    assert.doesNotMatch(listed.stdout, /whsec_/, 'the secret is never listed');
    assert.equal((await cli(target.url, 'webhook', 'disable', id!)).code, 0);
    assert.match((await cli(target.url, 'webhook', 'list')).stdout, /\tdisabled\t/);
    const removed = await cli(target.url, 'webhook', 'remove', id!);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal((await cli(target.url, 'webhook', 'list')).stdout, '');
  });

  test('serve SIGKILLed while a delivery waits for the receiver: the next serve delivers it, signed with the CLI secret', async () => {
    const added = await cli(target.url, 'webhook', 'add', receiver.url('/hook'));
    assert.equal(added.code, 0, added.stderr);
    receiver.secrets.set('/hook', /\nSecret: (whsec_\S+)\n/.exec(added.stdout)![1]!);
    receiver.mode = { hang: true };
    // a short attempt timeout, so that the dead worker's claim (3 x timeout + 5 s) expires soon
    const env = { WEBHOOK_TIMEOUT_SECONDS: '1', LOG_LEVEL: 'warn' };
    const first = await serve(target.url, env);
    servers.push(first);
    await bookAt(first.origin, `${localDate(2)} 09:00:00`);
    await until('the delivery reached the receiver', () => receiver.hangingCount >= 1);
    const killed = await first.stop('SIGKILL');
    assert.equal(killed.signal, 'SIGKILL');
    const [held] = await rows();
    assert.equal(held!.state, 'sending', 'claimed by the process that died, not recorded');

    receiver.mode = { answer: 204 };
    const second = await serve(target.url, env);
    servers.push(second);
    await until('delivered by the second process', async () => (await rows())[0]!.state === 'delivered', 30_000);
    const events = receiver.received.filter((r) => r.event);
    assert.ok(events.length >= 2, 'sent again after the claim expired');
    assert.deepEqual(new Set(events.map((r) => r.event!.id)), new Set([held!.event_id]), 'one event, the same id each time');
    assert.ok(receiver.received.every((r) => r.error === null));
    const { code } = await second.stop('SIGTERM');
    assert.equal(code, 0, 'and a serve with a webhook worker still shuts down cleanly');
  });
  test('a running serve: an endpoint the CLI adds, disables or enables counts from the very next booking', async () => {
    // the serve keeps the subscriptions in its snapshot; the CLI's change bumps the config version it checks per request
    const first = await serve(target.url, { LOG_LEVEL: 'warn' });
    servers.push(first);
    let hour = 10;
    const book = () => bookAt(first.origin, `${localDate(3)} ${String(hour++).padStart(2, '0')}:00:00`);
    const queuedFor = async (bookingId: number) => (await rows()).filter((r) => r.booking_id === bookingId).map((r) => r.endpoint_id);
    for (const r of (await cli(target.url, 'webhook', 'list')).stdout.split('\n').filter(Boolean))
      assert.equal((await cli(target.url, 'webhook', 'remove', r.split('\t')[0]!)).code, 0);
    receiver.mode = { answer: 204 };

    assert.deepEqual(await queuedFor(await book()), [], 'no endpoint: nothing queued (and the snapshot is loaded)');
    const added = await cli(target.url, 'webhook', 'add', receiver.url('/next'));
    assert.equal(added.code, 0, added.stderr);
    const id = Number(/^Webhook endpoint (\d+):/.exec(added.stdout)![1]);
    assert.deepEqual(await queuedFor(await book()), [id], 'the very next booking queues for the new endpoint');
    assert.equal((await cli(target.url, 'webhook', 'disable', String(id))).code, 0);
    assert.deepEqual(await queuedFor(await book()), [], 'disabled: the next booking queues nothing');
    assert.equal((await cli(target.url, 'webhook', 'enable', String(id))).code, 0);
    assert.deepEqual(await queuedFor(await book()), [id], 'enabled again');
    assert.equal((await cli(target.url, 'webhook', 'remove', String(id))).code, 0);
    assert.deepEqual(await queuedFor(await book()), [], 'removed');
    await first.stop('SIGTERM');
  });
});
