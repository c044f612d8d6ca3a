// The manage link end to end: a booking through the API, the confirmation delivered by the outbox worker
// to a real SMTP server, the link parsed from the mail and followed over real HTTP; cancel and move through
// it, with the change mails (.ics SEQUENCE, UID, METHOD) and webhook rows they queue. SQLite and PostgreSQL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { describeEachDatabase } from '../support/databases.js';
import { deskSchedule, runningFrom, testInstallation, type TestInstallation } from '../support/installation.js';
import { buildApp } from '../../src/http/build-app.js';
import { startOutboxWorker, type OutboxWorker } from '../../src/app/outbox-delivery.js';
import { setOperatorSetting } from '../../src/app/installation.js';
import { addWebhookEndpoint } from '../../src/app/webhooks.js';
import { getSchedule, updateSchedule } from '../../src/app/admin-schedules.js';
import { findBookingDetails } from '../../src/db/repos/booking.repository.js';
import { TestSmtpServer, parseIcs, parseMime, partOf, until, type ReceivedMail } from './mail-support.js';

// Monday 2026-06-01 06:00Z = 08:00 in Berlin (summer time, UTC+02:00)
const NOW = Date.UTC(2026, 5, 1, 6, 0);

const SCHEDULE = deskSchedule({
  name: 'Dr. Ada',
  capacity: 1,
  reasons: [{ name: 'Check-up', duration_minutes: 45 }],
  form: {
    first_name: { label: 'First name', input_type: 'text', required: true },
    email: { label: 'E-mail', input_type: 'email', required: true },
  },
});

const textOf = (mail: ReceivedMail) => partOf(mail.raw, 'text/plain').body;
const icsOf = (mail: ReceivedMail) => parseIcs(partOf(mail.raw, 'text/calendar').body);
const subjectOf = (mail: ReceivedMail) => parseMime(mail.raw).headers.get('subject') ?? '';

describeEachDatabase('manage link', (dialect) => {
  let inst: TestInstallation;
  let app: FastifyInstance;
  let base: string;
  let smtp: TestSmtpServer;
  let worker: OutboxWorker;
  let schedule: number, reason: number;

  before(async () => {
    inst = await testInstallation(dialect, { now: NOW, schedules: [SCHEDULE] });
    schedule = inst.schedules[0]!.id;
    reason = inst.schedules[0]!.reasons[0]!.id;
    smtp = await TestSmtpServer.start();
    app = await buildApp({ db: inst.db, clock: inst.clock, publicUrl: 'http://placeholder', manageRatePerMinute: 10_000 });
    // the public address is where this server listens: known only once it does
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    worker = startOutboxWorker({
      db: inst.db,
      smtpUrl: smtp.url,
      from: 'desk@example.com',
      giveUpAfterMs: 3_600_000,
      pollIntervalMs: 50,
      clock: runningFrom(NOW),
      publicUrl: base,
    });
    await addWebhookEndpoint(
      inst.db,
      { url: 'https://hooks.example.com/in', events: ['booking.cancelled', 'booking.rescheduled'] },
      NOW,
      true,
    );
  });
  after(async () => {
    await worker.stop();
    await smtp.down();
    await app.close();
    await inst.close();
  });

  const get = (path: string) => fetch(`${base}${path}`, { redirect: 'manual' });
  const post = (path: string, form: Record<string, string>) =>
    fetch(`${base}${path}`, { method: 'POST', redirect: 'manual', body: new URLSearchParams(form) });

  /** Books through the API and returns the manage path parsed from the confirmation that arrives. */
  async function bookAndFollowMail(slot: string, email: string): Promise<{ path: string; detailsId: string; mail: ReceivedMail }> {
    const res = await app.inject({
      method: 'POST',
      url: '/api/bookings',
      headers: { authorization: `Bearer ${inst.token}` },
      payload: { schedule, reason, slot, submission: { first_name: 'Eve', email } },
    });
    assert.equal(res.statusCode, 201, res.body);
    let mail: ReceivedMail | undefined;
    await until('the confirmation', () => (mail = smtp.received.find((m) => m.envelopeTo.includes(email))) !== undefined);
    const link = /(http:\/\/127\.0\.0\.1:\d+\/manage\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)/.exec(textOf(mail!));
    assert.ok(link, 'the confirmation carries the manage link');
    assert.ok(partOf(mail!.raw, 'text/html').body.includes(`href="${link[1]}"`), 'and the HTML part links it');
    const path = new URL(link[1]!).pathname;
    return { path, detailsId: path.slice('/manage/'.length).split('.')[0]!, mail: mail! };
  }

  const formTokenOf = (page: string) => /name="form_token" value="([^"]+)"/.exec(page)?.[1] ?? '';
  const mailsTo = (email: string) => smtp.received.filter((m) => m.envelopeTo.includes(email));
  const slotsOn = async (day: string) => {
    const res = await app.inject({
      method: 'GET',
      url: `/api/slots?schedule=${schedule}&reason=${reason}&day=${day}`,
      headers: { authorization: `Bearer ${inst.token}` },
    });
    return res.statusCode === 200 ? (JSON.parse(res.body) as { data: string[] }).data : [];
  };
  const webhookEvents = async (bookingId: number) =>
    (
      await inst.db.kysely.selectFrom('webhook_deliveries').select('event_type').where('booking_id', '=', bookingId).orderBy('id').execute()
    ).map((r) => r.event_type);

  let invalidBody = '';

  test('a made-up or altered token answers the one "not valid" page', async () => {
    const madeUp = await get('/manage/AAAAAAAAAAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB');
    assert.equal(madeUp.status, 404);
    invalidBody = await madeUp.text();
    assert.match(invalidBody, /This link is not valid/);
    assert.equal(madeUp.headers.get('referrer-policy'), 'no-referrer');
    assert.match(madeUp.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    const { path } = await bookAndFollowMail('2026-06-02 09:00:00', 'forged@example.com');
    const forged = await get(path.slice(0, -2) + (path.endsWith('AA') ? 'BB' : 'AA'));
    assert.equal(forged.status, 404);
    assert.equal(await forged.text(), invalidBody);
    // the reference alone (in the mail, read out on the phone) opens nothing
    const bare = await get(path.split('.')[0]!);
    assert.equal(bare.status, 404);
    assert.equal(await bare.text(), invalidBody);
  });

  test('the link from the mail shows the appointment; moving it sends the updated .ics and the office a notice', async () => {
    const { path, detailsId, mail } = await bookAndFollowMail('2026-06-03 09:00:00', 'move@example.com');
    const page = await get(path);
    assert.equal(page.status, 200);
    const body = await page.text();
    assert.match(body, /<html lang="en">/);
    for (const fact of ['Check-up', 'Dr. Ada', 'Test practice', '09:00–09:45', 'Europe/Berlin, UTC+02:00', 'Wednesday, 3 June 2026'])
      assert.ok(body.includes(fact), fact);
    assert.ok(!body.includes('move@example.com'), 'the page shows no customer data beyond the appointment');
    const firstIcs = icsOf(mail);
    assert.equal(firstIcs.get('SEQUENCE'), '0');

    const days = await (await get(`${path}/reschedule`)).text();
    assert.ok(days.includes(`${path}/reschedule?day=2026-06-03`), 'its own day is offered');
    const times = await (await get(`${path}/reschedule?day=2026-06-03`)).text();
    // 09:30 overlaps the booking's own span (09:00-09:45): with capacity 1 only excluding itself offers it
    assert.ok(times.includes('value="2026-06-03 09:30:00"'), '09:30 is offered though the booking itself occupies it');
    const moved = await post(`${path}/reschedule`, { form_token: formTokenOf(times), slot: '2026-06-03 09:30:00' });
    assert.equal(moved.status, 303);
    assert.equal(moved.headers.get('location'), `${path}?moved=1`);
    // submitted twice: nothing more happens
    assert.equal((await post(`${path}/reschedule`, { form_token: formTokenOf(times), slot: '2026-06-03 09:30:00' })).status, 303);
    const booking = (await findBookingDetails(inst.db.kysely, { detailsId }))!;
    assert.equal(booking.start, Date.UTC(2026, 5, 3, 7, 30));
    assert.equal(booking.sequence, 1);

    let change: ReceivedMail | undefined;
    await until(
      'the change confirmation',
      () => (change = mailsTo('move@example.com').find((m) => subjectOf(m).startsWith('Appointment moved'))) !== undefined,
    );
    const ics = icsOf(change!);
    assert.equal(ics.get('METHOD'), 'REQUEST');
    assert.equal(ics.get('UID'), firstIcs.get('UID'));
    assert.equal(ics.get('SEQUENCE'), '1');
    assert.equal(ics.get('DTSTART'), '20260603T073000Z');
    assert.ok(textOf(change!).includes(`${base}${path}`), 'the change confirmation carries the link again');
    let notice: ReceivedMail | undefined;
    await until(
      'the office notice',
      () => (notice = mailsTo('desk@example.com').find((m) => subjectOf(m).startsWith('Moved by the customer'))) !== undefined,
    );
    assert.match(textOf(notice!), /from Wednesday, 3 June 2026, 09:00–09:45 to Wednesday, 3 June 2026, 09:30–10:15/);
    await until('only one change mail', () => mailsTo('move@example.com').length === 2);
    assert.deepEqual(await webhookEvents(booking.id), ['booking.rescheduled']);

    // the old time is free again for others, the new one taken
    assert.ok(!(await slotsOn('2026-06-03')).includes('2026-06-03 09:00:00'), '09:00 still overlaps the moved booking (09:30-10:15)');
    const res = await (await get(`${path}/reschedule?day=2026-06-03`)).text();
    await post(`${path}/reschedule`, { form_token: formTokenOf(res), slot: '2026-06-03 11:00:00' });
    const slots = await slotsOn('2026-06-03');
    assert.ok(slots.includes('2026-06-03 09:00:00') && slots.includes('2026-06-03 09:30:00'), 'the old times are free again');
    assert.ok(!slots.includes('2026-06-03 11:00:00'), 'the new time is taken');
    const after = (await findBookingDetails(inst.db.kysely, { detailsId }))!;
    assert.equal(after.sequence, 2);
  });

  test('a form without its token (CSRF) changes nothing', async () => {
    const { path, detailsId } = await bookAndFollowMail('2026-06-04 09:00:00', 'csrf@example.com');
    const wrong = await post(`${path}/cancel`, { form_token: 'x'.repeat(32), reason: 'forged' });
    assert.equal(wrong.status, 403);
    const none = await post(`${path}/reschedule`, { slot: '2026-06-04 10:00:00' });
    assert.equal(none.status, 403);
    const booking = (await findBookingDetails(inst.db.kysely, { detailsId }))!;
    assert.equal(booking.status, 'booked');
    assert.equal(booking.start, Date.UTC(2026, 5, 4, 7, 0));
  });

  test('two moves to the last free place at once: one succeeds, the other is told the time is taken', async () => {
    const a = await bookAndFollowMail('2026-06-05 09:00:00', 'race-a@example.com');
    const b = await bookAndFollowMail('2026-06-05 10:00:00', 'race-b@example.com');
    const tokenA = formTokenOf(await (await get(`${a.path}/reschedule?day=2026-06-06`)).text());
    const tokenB = formTokenOf(await (await get(`${b.path}/reschedule?day=2026-06-06`)).text());
    const [ra, rb] = await Promise.all([
      post(`${a.path}/reschedule`, { form_token: tokenA, slot: '2026-06-06 11:00:00' }),
      post(`${b.path}/reschedule`, { form_token: tokenB, slot: '2026-06-06 11:00:00' }),
    ]);
    assert.deepEqual([ra.status, rb.status].sort(), [303, 409]);
    const loser = ra.status === 409 ? ra : rb;
    assert.match(await loser.text(), /That time is no longer free/);
    const rows = await inst.db.kysely
      .selectFrom('bookings')
      .select('id')
      .where('start_at', '=', Date.UTC(2026, 5, 6, 9, 0))
      .where('status', '=', 'booked')
      .execute();
    assert.equal(rows.length, 1, 'never double-booked');
  });

  test('cancel with a reason: METHOD:CANCEL with the next SEQUENCE, the office notice, a webhook row; the link then answers "not valid"', async () => {
    const { path, detailsId, mail } = await bookAndFollowMail('2026-06-07 09:00:00', 'cancel@example.com');
    const confirm = await get(`${path}/cancel`);
    const form = await confirm.text();
    assert.match(form, /<label for="reason">Reason \(optional\)<\/label>/);
    const done = await post(`${path}/cancel`, { form_token: formTokenOf(form), reason: 'Feeling better' });
    assert.equal(done.status, 303);
    assert.equal(done.headers.get('location'), '/manage/cancelled');
    // submitted twice: the link no longer works, nothing else happens
    const again = await post(`${path}/cancel`, { form_token: formTokenOf(form), reason: 'again' });
    assert.equal(again.status, 404);
    const booking = (await findBookingDetails(inst.db.kysely, { detailsId }))!;
    assert.equal(booking.status, 'cancelled');
    assert.equal(booking.cancelReason, 'Feeling better');
    assert.equal(booking.cancelledBy, 'customer');

    let cancel: ReceivedMail | undefined;
    await until(
      'the cancellation',
      () => (cancel = mailsTo('cancel@example.com').find((m) => icsOf(m).get('METHOD') === 'CANCEL')) !== undefined,
    );
    assert.equal(icsOf(cancel!).get('UID'), icsOf(mail).get('UID'));
    assert.equal(icsOf(cancel!).get('SEQUENCE'), '1');
    assert.ok(!textOf(cancel!).includes('/manage/'), 'a cancellation carries no link');
    let notice: ReceivedMail | undefined;
    await until(
      'the office notice',
      () => (notice = mailsTo('desk@example.com').find((m) => subjectOf(m).startsWith('Cancelled by the customer'))) !== undefined,
    );
    assert.match(textOf(notice!), /Feeling better/);
    assert.deepEqual(await webhookEvents(booking.id), ['booking.cancelled']);
    await until('no second cancellation', () => mailsTo('cancel@example.com').length === 2);

    const expired = await get(path);
    assert.equal(expired.status, 404);
    assert.equal(await expired.text(), invalidBody);
  });

  test('the cut-off: inside it the page says "please call" and refuses changes; after the start the link is not valid', async () => {
    const { path, detailsId } = await bookAndFollowMail('2026-06-02 11:00:00', 'cutoff@example.com');
    const form = formTokenOf(await (await get(`${path}/cancel`)).text());
    // as the admin area's schedule page saves it
    const setCutoff = async (minutes: number) => {
      const stored = await getSchedule(inst.db, schedule);
      await updateSchedule(inst.db, schedule, { ...stored, settings: { ...stored.settings, cancelCutoffMinutes: minutes } });
    };
    await setCutoff(48 * 60);
    // the practice's contact details, as every customer mail shows them, are where "please call" points
    await setOperatorSetting(inst.db, 'installation.phone', '+49 30 1234 567');
    await setOperatorSetting(inst.db, 'installation.website', 'https://practice.example.com');
    try {
      const page = await (await get(path)).text();
      assert.match(page, /Please call the practice/);
      assert.ok(page.includes('<a href="tel:+49301234567">+49 30 1234 567</a>'), 'the phone, to call');
      assert.ok(page.includes('<a href="https://practice.example.com">https://practice.example.com</a>'), 'the website');
      assert.ok(!page.includes(`${path}/cancel"`), 'no cancel button inside the cut-off');
      const refused = await post(`${path}/cancel`, { form_token: form, reason: '' });
      assert.equal(refused.status, 303);
      assert.equal((await findBookingDetails(inst.db.kysely, { detailsId }))!.status, 'booked');
    } finally {
      await setCutoff(0);
    }
    assert.doesNotMatch(await (await get(path)).text(), /Please call the practice/);
    const saved = inst.clock.now;
    inst.clock.now = Date.UTC(2026, 5, 2, 9, 0);
    try {
      const begun = await get(path);
      assert.equal(begun.status, 404);
      assert.equal(await begun.text(), invalidBody);
    } finally {
      inst.clock.now = saved;
    }
  });

  test('rate-limited per client address', async () => {
    const limited = await buildApp({ db: inst.db, clock: inst.clock, manageRatePerMinute: 3 });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await limited.inject({ method: 'GET', url: '/manage/nothing.here', remoteAddress: '203.0.113.9' })).statusCode);
      assert.deepEqual(statuses, [404, 404, 404, 429]);
      const other = await limited.inject({ method: 'GET', url: '/manage/nothing.here', remoteAddress: '203.0.113.10' });
      assert.equal(other.statusCode, 404, 'another address has its own count');
    } finally {
      await limited.close();
    }
  });
});
