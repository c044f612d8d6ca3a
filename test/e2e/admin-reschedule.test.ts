// Issue 11's "Reschedule" and "Statuses" walked in a real browser (Debian chromium through playwright-core)
// against a real server on a real port sending to a real SMTP server, on SQLite and PostgreSQL: Reschedule on
// a desktop and on a phone (another reason and day; the customer is e-mailed a change with the same calendar
// UID and a higher SEQUENCE), marking a begun booking completed, and undoing a cancellation.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { connect, type Db } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { generateToken, setApiEnabled, setup } from '../../src/app/installation.js';
import { importSchedules } from '../../src/app/schedules.js';
import { createBooking } from '../../src/app/bookings.js';
import { SnapshotCache } from '../../src/app/snapshot.js';
import { describeEachDatabase, freshDatabase, type TestDatabase } from '../support/databases.js';
import { ALL_WEEK, localDateFromToday, OWNER } from '../support/installation.js';
import { BROWSER_SKIP, launchBrowser, mainText } from '../support/chromium.js';
import { TestSmtpServer, parseIcs, parseMime, partOf, until, type ReceivedMail } from '../integration/mail-support.js';

const SCHEDULE = {
  name: 'Dr. Desk',
  slot_interval_minutes: 30,
  horizon_days: 14,
  capacity: 1,
  weekly_hours: ALL_WEEK([['09:00', '17:00']]),
  reasons: [
    { name: 'Consultation', duration_minutes: 30 },
    { name: 'Long visit', duration_minutes: 60 },
  ],
  form: {
    first_name: { label: 'First name', input_type: 'text', required: true },
    email: { label: 'E-mail', input_type: 'email', required: false },
  },
};

/** what a customer's mail says: subject, calendar method, UID and SEQUENCE */
function mailFacts(mail: ReceivedMail) {
  const ics = parseIcs(partOf(mail.raw, 'text/calendar').body);
  return {
    subject: parseMime(mail.raw).headers.get('subject') ?? '',
    method: ics.get('METHOD'),
    uid: ics.get('UID'),
    sequence: Number(ics.get('SEQUENCE')),
    start: ics.get('DTSTART'),
  };
}

describeEachDatabase('admin reschedule, statuses and undo in chromium (issue 11)', (dialect) => {
  describe('walks', { skip: BROWSER_SKIP }, () => {
    let server: RunningServer;
    let database: TestDatabase;
    let db: Db;
    let smtp: TestSmtpServer;
    let browser: Awaited<ReturnType<typeof launchBrowser>>;
    let page: Page;
    let base: string;
    let scheduleId: number;
    let reasonId: number;
    let token: string;

    const apiBook = async (slot: string, firstName: string) => {
      const res = await fetch(`${base}/api/bookings`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          schedule: scheduleId,
          reason: reasonId,
          slot,
          submission: { first_name: firstName, email: `${firstName.toLowerCase()}@example.com` },
        }),
      });
      assert.equal(res.status, 201);
      return ((await res.json()) as { booking_details_id: string }).booking_details_id;
    };
    const mailsTo = (address: string) => smtp.received.filter((m) => m.envelopeTo.includes(address)).map(mailFacts);
    const arrived = (address: string, subject: RegExp) =>
      until(`a mail to ${address} matching ${subject}`, () => mailsTo(address).some((m) => subject.test(m.subject)));
    const pageOverflow = () => page.locator('html').evaluate((e) => e.scrollWidth - e.clientWidth);

    before(async () => {
      database = await freshDatabase(dialect);
      db = connect(database.url);
      await migrate(db);
      await setup(
        db,
        {
          timezone: 'Europe/Berlin',
          adminEmail: OWNER.email,
          adminPassword: OWNER.password,
          name: 'Desk practice',
          notifyEmail: 'desk@example.com',
        },
        Date.now(),
      );
      const imported = (await importSchedules(db, { schedules: [SCHEDULE] }, Date.now())).schedules[0]!;
      scheduleId = imported.id;
      reasonId = imported.reasons[0]!.id;
      await setApiEnabled(db, true);
      token = await generateToken(db);
      smtp = await TestSmtpServer.start();
      server = await startServer(
        loadConfig({
          DATABASE_URL: database.url,
          HOST: '127.0.0.1',
          PORT: '0',
          LOG_LEVEL: 'silent',
          SMTP_URL: smtp.url,
          MAIL_FROM: 'desk@example.com',
        }),
      );
      base = server.url;
      browser = await launchBrowser();
      page = await browser.context.newPage();
      page.setDefaultTimeout(10_000);
      await page.goto(`${base}/admin/signin`);
      await page.getByLabel('E-mail').fill(OWNER.email);
      await page.getByLabel('Password').fill(OWNER.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/admin\/bookings/);
    });
    after(async () => {
      await browser?.close();
      await server?.stop();
      await smtp?.down();
      await db?.close();
      await database?.drop();
    });

    for (const [device, width, name, offset] of [
      ['desktop', 1280, 'Anna', 2],
      ['phone', 390, 'Boris', 4],
    ] as const) {
      test(`Reschedule on a ${device}: another reason and day; the customer is e-mailed the change`, async () => {
        await page.setViewportSize({ width, height: 844 });
        const from = localDateFromToday(offset);
        const to = localDateFromToday(offset + 1);
        const ref = await apiBook(`${from} 09:00:00`, name);
        const address = `${name.toLowerCase()}@example.com`;
        await arrived(address, /^Appointment confirmed/);

        await page.goto(`${base}/admin/bookings/${ref}`);
        await page.getByRole('link', { name: 'Reschedule' }).click();
        await page.waitForURL(/\/reschedule$/);
        assert.match(await mainText(page), /09:00 \(its time now\)/);
        await page.getByLabel('Reason').selectOption({ label: 'Long visit (60 min)' });
        await page.getByLabel('Day').fill(to);
        // the times listed were those of the reason and day shown before: set aside until shown again
        assert.equal(await page.locator('#times input[name=time]:enabled').count(), 0);
        await page.getByRole('button', { name: 'Show free times' }).click();
        assert.match((await page.locator('#times legend').textContent()) ?? '', new RegExp(`Free times on ${to} for Long visit`));
        assert.equal(await pageOverflow(), 0, 'the page fits the screen');
        await page.getByLabel('10:00').check();
        await page.getByRole('button', { name: 'Confirm reschedule' }).click();
        await page.waitForURL(/saved=moved/);
        assert.match(await mainText(page), /Rescheduled\. The customer is e-mailed the new time\./);
        assert.match(await mainText(page), new RegExp(`Moved\\s*from ${from} 09:00`));
        assert.match(await mainText(page), /Reason\s*Long visit/);
        assert.equal(page.url().split('?')[0], `${base}/admin/bookings/${ref}`, 'the same booking');

        await arrived(address, /^Appointment moved: Long visit/);
        const mails = mailsTo(address);
        const confirmation = mails.find((m) => /^Appointment confirmed/.test(m.subject))!;
        const moved = mails.find((m) => /^Appointment moved/.test(m.subject))!;
        assert.equal(moved.method, 'REQUEST');
        assert.equal(moved.uid, confirmation.uid, 'the calendar entry is updated, not added');
        assert.ok(moved.sequence > confirmation.sequence);
        assert.match(moved.start!, new RegExp(`^${to.replaceAll('-', '')}T`));
        assert.ok(!mails.some((m) => m.method === 'CANCEL'), 'a change, not a cancellation and a new booking');
      });
    }

    test('a begun appointment is marked completed and found by the status filter', async () => {
      await page.setViewportSize({ width: 1280, height: 900 });
      const yesterday = localDateFromToday(-1);
      // made three days ago, for yesterday 10:00 (a booking cannot be made in the past today)
      const made = await createBooking(
        db,
        await new SnapshotCache(db).current(),
        { scheduleId, reasonId, slot: `${yesterday} 10:00:00`, submission: { first_name: 'Cleo' }, source: 'api' },
        Date.now() - 3 * 86_400_000,
      );
      await page.goto(`${base}/admin/bookings/${made.detailsId}`);
      await page.getByRole('button', { name: 'Mark completed' }).click();
      await page.waitForURL(/saved=completed/);
      assert.match((await page.locator('#booking-status').textContent()) ?? '', /^completed \(marked /);
      await page.getByRole('link', { name: 'Bookings', exact: true }).click();
      await page.getByLabel('Show').selectOption('past');
      await page.getByLabel('Status').selectOption({ label: 'Completed' });
      await page.getByRole('button', { name: 'Show', exact: true }).click();
      await page.waitForURL(/status=completed/);
      assert.match((await page.locator('#booking-count').textContent()) ?? '', /1–1 of 1 booking/);
      assert.match((await page.locator('table.bookings tbody').textContent()) ?? '', /Cleo.*completed/s);
    });

    test('Undo cancellation: confirmed, booked again, the customer is e-mailed a new confirmation', async () => {
      const ref = await apiBook(`${localDateFromToday(6)} 11:00:00`, 'Dora');
      // the customer has it in their calendar (a confirmation still waiting when cancelled is never sent)
      await arrived('dora@example.com', /^Appointment confirmed/);
      await page.goto(`${base}/admin/bookings/${ref}`);
      await page.getByRole('link', { name: 'Cancel this booking' }).click();
      await page.getByRole('button', { name: 'Confirm cancellation' }).click();
      await page.waitForURL(/saved=cancelled/);
      await arrived('dora@example.com', /^Appointment cancelled/);

      await page.getByRole('link', { name: 'Undo cancellation' }).click();
      assert.match(await mainText(page), /the customer is e-mailed a new confirmation at dora@example.com/);
      await page.getByRole('button', { name: 'Confirm undo' }).click();
      await page.waitForURL(/saved=restored/);
      assert.match(await mainText(page), /Cancellation undone: booked again/);
      assert.equal((await page.locator('#booking-status').textContent())?.trim(), 'booked');

      await until(
        'the second confirmation',
        () => mailsTo('dora@example.com').filter((m) => /^Appointment confirmed/.test(m.subject)).length === 2,
      );
      const mails = mailsTo('dora@example.com');
      const cancellation = mails.find((m) => m.method === 'CANCEL')!;
      const again = mails.filter((m) => /^Appointment confirmed/.test(m.subject)).at(-1)!;
      assert.equal(again.method, 'REQUEST');
      assert.equal(again.uid, cancellation.uid);
      assert.ok(again.sequence > cancellation.sequence, 'the calendar takes the event back over the cancellation');
    });
  });
});
