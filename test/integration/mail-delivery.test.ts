// Notification e-mails end to end: bookings through the API queue them, the outbox worker delivers them
// to a real SMTP server on loopback, and what arrives is checked part by part. SQLite and PostgreSQL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachDatabase } from '../support/databases.js';
import { deskSchedule, runningFrom, testInstallation, type TestInstallation } from '../support/installation.js';
import { startOutboxWorker, type OutboxWorker } from '../../src/app/outbox-delivery.js';
import { cancelBooking } from '../../src/app/bookings.js';
import { listMessages, previewMessage, retryMessage } from '../../src/app/outbox.js';
import { TestSmtpServer, parseIcs, parseMime, partOf, until, type ReceivedMail } from './mail-support.js';

// Monday 2026-06-01 06:00Z = 08:00 in Berlin (summer time, UTC+02:00)
const NOW = Date.UTC(2026, 5, 1, 6, 0);

const SCHEDULE = deskSchedule({
  name: 'Dr. Ada',
  capacity: 5,
  reasons: [{ name: 'Check-up', duration_minutes: 45 }],
  form: {
    first_name: { label: 'First name', input_type: 'text', required: true },
    last_name: { label: 'Last name', input_type: 'text', required: false },
    email: { label: 'E-mail', input_type: 'email', required: true },
    notes: { label: 'Notes', form_type: 'textarea', input_type: 'text', required: false },
    consent: { label: 'I agree', form_type: 'checkbox', input_type: 'text', required: false },
  },
});

const headerOf = (mail: ReceivedMail, name: string) => parseMime(mail.raw).headers.get(name.toLowerCase()) ?? '';

describeEachDatabase('mail delivery', (dialect) => {
  let inst: TestInstallation;
  let smtp: TestSmtpServer;
  let worker: OutboxWorker | null = null;
  let schedule: number, reason: number;

  before(async () => {
    inst = await testInstallation(dialect, { now: NOW, schedules: [SCHEDULE] });
    schedule = inst.schedules[0]!.id;
    reason = inst.schedules[0]!.reasons[0]!.id;
    smtp = await TestSmtpServer.start();
  });
  after(async () => {
    await worker?.stop();
    await smtp.down();
    await inst.close();
  });

  const book = (slot: string, submission: Record<string, unknown>) =>
    inst.api({ method: 'POST', url: '/api/bookings', payload: { schedule, reason, slot, submission } });

  test('without a mail server the messages wait in the outbox; the admin preview renders them', async () => {
    const res = await book('2026-06-02 09:00:00', {
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'ada@example.com',
      notes: 'Bring <b>the</b> "notes" & more',
      consent: true,
    });
    assert.equal(res.statusCode, 201, res.body);
    const detailsId = res.json().booking_details_id as string;
    const messages = await listMessages(inst.db, { detailsId });
    assert.deepEqual(messages.map((m) => [m.kind, m.recipient, m.state]).sort(), [
      ['booking_confirmation', 'ada@example.com', 'queued'],
      ['booking_notification', 'desk@example.com', 'queued'],
    ]);
    assert.equal((await listMessages(inst.db, { state: 'sent' })).length, 0);
    assert.equal((await listMessages(inst.db, { state: 'queued' })).length, 2);

    const operatorCopy = await previewMessage(inst.db, messages.find((m) => m.kind === 'booking_notification')!.id);
    assert.match(operatorCopy.text, /Notes: Bring <b>the<\/b> "notes" & more/);
    assert.match(operatorCopy.html, /Bring &lt;b&gt;the&lt;\/b&gt; &quot;notes&quot; &amp; more/);
    assert.doesNotMatch(operatorCopy.html, /<b>the/);
    assert.equal(operatorCopy.replyTo, 'ada@example.com');
    // a queued message can be made due now; that changes nothing else about it
    assert.equal(await retryMessage(inst.db, operatorCopy.message.id, NOW), true);
    assert.equal((await listMessages(inst.db, { detailsId }))[0]!.state, 'queued');
  });

  test('with a mail server both messages arrive once, to the right recipients, in local time, with a valid .ics', async () => {
    worker = startOutboxWorker({ db: inst.db, smtpUrl: smtp.url, giveUpAfterMs: 3_600_000, pollIntervalMs: 50, clock: runningFrom(NOW) });
    const received = await smtp.waitFor(2);
    const [detailsId] = (await listMessages(inst.db)).map((m) => m.detailsId);

    const confirmation = received.find((m) => m.envelopeTo[0] === 'ada@example.com')!;
    const notification = received.find((m) => m.envelopeTo[0] === 'desk@example.com')!;
    assert.ok(confirmation && notification, JSON.stringify(received.map((m) => m.envelopeTo)));
    assert.deepEqual(confirmation.envelopeTo, ['ada@example.com']);
    assert.deepEqual(notification.envelopeTo, ['desk@example.com']);
    assert.match(headerOf(confirmation, 'from'), /"?Test practice"? <desk@example\.com>/);
    assert.match(headerOf(confirmation, 'to'), /ada@example\.com/);

    const customerText = partOf(confirmation.raw, 'text/plain').body;
    assert.match(customerText, /Hello Ada,/);
    assert.match(customerText, /Tuesday, 2 June 2026, 09:00–09:45 \(Europe\/Berlin, UTC\+02:00\)/);
    assert.match(customerText, /Check-up \(45 minutes\)/);
    assert.match(customerText, /Schedule: +Dr\. Ada/);
    assert.doesNotMatch(customerText, /Bring/, 'the customer copy does not list the answers');
    assert.match(partOf(confirmation.raw, 'text/html').body, /09:00–09:45/);

    const ics = parseIcs(partOf(confirmation.raw, 'text/calendar').body);
    assert.equal(ics.lines[0]!.name, 'BEGIN');
    assert.equal(ics.get('METHOD'), 'REQUEST');
    assert.equal(ics.get('UID'), detailsId);
    assert.equal(ics.get('DTSTART'), '20260602T070000Z');
    assert.equal(ics.get('DTEND'), '20260602T074500Z');
    assert.equal(ics.get('SEQUENCE'), '0');
    assert.ok(ics.get('DTSTAMP'));
    assert.match(ics.get('ORGANIZER')!, /^mailto:desk@example\.com$/);

    const operatorText = partOf(notification.raw, 'text/plain').body;
    assert.match(operatorText, /Customer's answers:/);
    assert.match(operatorText, /First name: Ada/);
    assert.match(operatorText, /Last name: Lovelace/);
    assert.match(operatorText, /E-mail: ada@example\.com/);
    assert.match(operatorText, /Notes: Bring <b>the<\/b> "notes" & more/);
    assert.match(operatorText, /I agree: Yes/);
    assert.match(partOf(notification.raw, 'text/html').body, /Bring &lt;b&gt;the&lt;\/b&gt;/);
    assert.equal(parseIcs(partOf(notification.raw, 'text/calendar').body).get('UID'), detailsId);

    // the server has both; each 'sent' is written right after its server's answer, which can trail it
    await until('both messages recorded as sent', async () =>
      (await listMessages(inst.db, { detailsId: detailsId! })).every((r) => r.state === 'sent'),
    );
    const rows = await listMessages(inst.db, { detailsId: detailsId! });
    assert.deepEqual(
      rows.map((r) => r.state),
      ['sent', 'sent'],
    );
    assert.ok(rows.every((r) => r.sentAt !== null && r.attempts === 1 && r.claimedUntil === null));
    // a sent message is never sent again
    assert.equal(await retryMessage(inst.db, rows[0]!.id, NOW), false);
  });

  test('a cancellation sends METHOD:CANCEL with the same UID and a higher SEQUENCE, and the office a notice', async () => {
    const [detailsId] = (await listMessages(inst.db)).map((m) => m.detailsId);
    assert.equal(await cancelBooking(inst.db, detailsId!, NOW), true);
    const received = (await smtp.waitFor(4)).slice(2);
    const cancellation = received.find((m) => m.envelopeTo[0] === 'ada@example.com')!;
    const notice = received.find((m) => m.envelopeTo[0] === 'desk@example.com');
    assert.ok(notice, 'the office is told of the cancellation');
    assert.match(headerOf(notice, 'subject'), /^Cancelled: Ada Lovelace, Check-up/);
    assert.match(headerOf(notice, 'reply-to'), /ada@example\.com/);
    assert.match(partOf(notice.raw, 'text/plain').body, /^Booking cancelled\r?\n\r?\nThe appointment of Ada Lovelace was cancelled/);
    assert.equal(parseIcs(partOf(notice.raw, 'text/calendar').body).get('METHOD'), 'CANCEL');
    assert.deepEqual(cancellation.envelopeTo, ['ada@example.com']);
    assert.match(headerOf(cancellation, 'subject'), /cancelled/i);
    const ics = parseIcs(partOf(cancellation.raw, 'text/calendar').body);
    assert.equal(ics.get('METHOD'), 'CANCEL');
    assert.equal(ics.get('UID'), detailsId);
    assert.equal(ics.get('STATUS'), 'CANCELLED');
    assert.ok(Number(ics.get('SEQUENCE')) > 0);
    assert.equal(ics.get('DTSTART'), '20260602T070000Z');
  });

  test('CR/LF in a name adds no header and no recipient; long lines in the .ics are folded', async () => {
    const before = smtp.received.length;
    // a line break in a one-line field is refused on entry (docs/security.md); the rendering keeps it one line anyway (test/unit/security-mail-rendering.test.ts)
    const refused = await book('2026-06-03 10:00:00', { first_name: 'Eve\r\nBcc: victim@example.org', email: 'eve@example.com' });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(JSON.parse(refused.body).field, 'first_name');
    const res = await book('2026-06-03 10:00:00', {
      first_name: 'Eve Bcc: victim@example.org',
      last_name: `X To: other@example.org body ${'é'.repeat(60)}`,
      email: 'eve@example.com',
    });
    assert.equal(res.statusCode, 201, res.body);
    const received = (await smtp.waitFor(before + 2)).slice(before);
    const all = received.flatMap((m) => m.envelopeTo).sort();
    assert.deepEqual(all, ['desk@example.com', 'eve@example.com']);
    for (const mail of received) {
      const headerBlock = mail.raw.slice(0, mail.raw.indexOf('\r\n\r\n'));
      assert.doesNotMatch(headerBlock, /^(bcc|to): .*(victim|other)@/im, headerBlock);
      assert.doesNotMatch(headerBlock, /victim@example\.org|other@example\.org/, 'no raw customer address in any header');
      const ics = partOf(mail.raw, 'text/calendar').body;
      for (const line of ics.split('\r\n')) assert.ok(Buffer.byteLength(line) <= 75, `ics line over 75 octets: ${line}`);
      assert.ok(parseIcs(ics).get('UID'));
    }
    const subject = headerOf(
      received.find((m) => m.envelopeTo[0] === 'desk@example.com')!,
      'subject',
    );
    assert.ok(subject.length > 0);
  });
});
