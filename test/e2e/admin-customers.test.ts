// Issue 11's missing items "book by hand with staff overrides", "edit a booking's answers" and "customers"
// walked in a real browser (Debian chromium through playwright-core) against a real server on a real port,
// on SQLite and PostgreSQL, on a desktop viewport and one walk on a phone.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import type { Db } from '../../src/db/connect.js';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, CONTACT_FORM, localDateFromToday, servedInstallation, type ServedInstallation } from '../support/installation.js';
import { BROWSER_SKIP, launchBrowser, mainText, signedInPage, type LaunchedBrowser } from '../support/chromium.js';

const SCHEDULE = {
  name: 'Dr. Desk',
  slot_interval_minutes: 30,
  horizon_days: 14,
  capacity: 1,
  weekly_hours: ALL_WEEK([['09:00', '17:00']]),
  reasons: [{ name: 'Consultation', duration_minutes: 30 }],
  form: CONTACT_FORM,
};

describeEachDatabase('admin customers and overrides in chromium (issue 11)', (dialect) => {
  describe('walks', { skip: BROWSER_SKIP }, () => {
    let site: ServedInstallation;
    let db: Db;
    let browser: LaunchedBrowser;
    let page: Page;
    let base: string;
    let scheduleId: number;
    let reasonId: number;
    const day = localDateFromToday(2);

    before(async () => {
      site = await servedInstallation(dialect, { setup: { name: 'Desk practice' }, schedules: [SCHEDULE], api: true });
      ({ db, base } = site);
      scheduleId = site.schedules[0]!.id;
      reasonId = site.schedules[0]!.reasons[0]!.id;
      browser = await launchBrowser();
      page = await signedInPage(browser, base, { landing: /\/admin\/bookings/ });
    });
    after(async () => {
      await browser?.close();
      await site?.close();
    });

    test('book by hand over capacity for an existing customer, without e-mailing them; then edit the answers', async () => {
      await site.book(`${day} 09:00:00`, { first_name: 'Grace', last_name: 'Hopper', email: 'grace@example.com', phone: '01632 960 777' });
      await page.goto(`${base}/admin/schedules/${scheduleId}/book?reason=${reasonId}&day=${day}`);
      assert.equal(await page.getByLabel('09:00').count(), 0, 'full: not offered');
      await page.getByLabel('Book over capacity').check();
      await page.getByRole('button', { name: 'Show free times' }).click();
      assert.match((await page.locator('#times').textContent()) ?? '', /09:00 \*/);
      await page.getByLabel('09:00').check();
      await page.getByLabel('Find customer').fill('960 777');
      await page.getByRole('button', { name: 'Find customer' }).click();
      await page.getByRole('button', { name: 'Use Grace Hopper' }).click();
      assert.equal(await page.getByLabel('Last name').inputValue(), 'Hopper');
      assert.equal(await page.getByLabel('09:00').isChecked(), true, 'the chosen time is kept');
      await page.getByLabel('Send the customer a confirmation').uncheck();
      await page.getByRole('button', { name: 'Book', exact: true }).click();
      await page.waitForURL(/saved=booked/);
      assert.match(await mainText(page), /Rules set aside\s*over capacity/);
      const detailsUrl = page.url().split('?')[0]!;
      const id = detailsUrl.split('/').pop()!;
      const row = await db.kysely
        .selectFrom('bookings')
        .select(['id', 'staff_overrides'])
        .where('details_id', '=', id)
        .executeTakeFirstOrThrow();
      assert.equal(row.staff_overrides, 'capacity');
      const kinds = await db.kysely.selectFrom('outbox').select('kind').where('booking_id', '=', row.id).execute();
      assert.deepEqual(
        kinds.map((k) => k.kind),
        ['booking_notification'],
      );

      // edit the answers: every error at once, then saved
      await page.getByRole('link', { name: 'Edit answers' }).click();
      await page.getByLabel('First name').fill('');
      await page.getByLabel('E-mail').fill('not an address');
      await page.getByRole('button', { name: 'Save answers' }).click();
      const problems = await mainText(page);
      assert.match(problems, /There are 2 problems/);
      assert.match(problems, /Field is required/);
      await page.getByLabel('First name').fill('Grace');
      await page.getByLabel('E-mail').fill('grace@example.com');
      await page.getByLabel('Last name').fill('Brewster Hopper');
      await page.getByRole('button', { name: 'Save answers' }).click();
      await page.waitForURL(/saved=edited/);
      const details = await mainText(page);
      assert.match(details, /Answers saved\./);
      assert.match(details, /Brewster Hopper/);
      assert.match(details, /Last edited/);
    });

    test('a customer: e-mail clash refused, notes saved, data exported, erased after cancelling and confirming', async () => {
      const alan = await site.book(`${day} 11:00:00`, {
        first_name: 'Alan',
        last_name: 'Turing',
        email: 'alan@example.com',
        phone: '+44 161 555',
      });
      await page.goto(`${base}/admin/customers/${alan.user_id}`);
      await page.getByLabel('E-mail').fill('GRACE@example.com');
      await page.getByRole('button', { name: 'Save customer' }).click();
      assert.match(await mainText(page), /Another customer \(number \d+\) has the e-mail address GRACE@example\.com/);
      await page.getByLabel('E-mail').fill('alan@example.com');
      await page.getByLabel('Notes (staff only)').fill('Prefers mornings.');
      await page.getByRole('button', { name: 'Save customer' }).click();
      await page.waitForURL(/saved=edited/);
      assert.match(await mainText(page), /Customer saved\./);

      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export data (JSON)' }).click()]);
      const data = JSON.parse(await readFile(await download.path(), 'utf8'));
      assert.equal(data.customer.notes, 'Prefers mornings.');
      assert.equal(data.bookings[0].answers.last_name, 'Turing');

      await page.getByRole('link', { name: 'Erase personal data…' }).click();
      assert.match(await mainText(page), /has 1 upcoming appointment\. Cancel it first/);
      await page.goto(`${base}/admin/bookings/${alan.booking_details_id}/cancel`);
      await page.getByRole('button', { name: 'Confirm cancellation' }).click();
      await page.goto(`${base}/admin/customers/${alan.user_id}/erase`);
      assert.match(await mainText(page), /their bookings stay, without anyone's name/);
      await page.getByRole('button', { name: 'Confirm erasure' }).click();
      await page.waitForURL(/saved=erased/);
      const erased = await mainText(page);
      assert.match(erased, /personal data was erased on request/);
      assert.doesNotMatch(erased, /Turing|alan@example\.com/);
      const customer = await db.kysely.selectFrom('customers').selectAll().where('id', '=', alan.user_id).executeTakeFirstOrThrow();
      assert.deepEqual([customer.first_name, customer.last_name, customer.email, customer.phone, customer.notes], ['', '', null, '', '']);
    });

    test('on a phone: the customer page fits the screen and saves', async () => {
      const ada = await site.book(`${day} 13:00:00`, { first_name: 'Ada', email: 'ada@example.com' });
      await page.setViewportSize({ width: 390, height: 844 });
      try {
        await page.goto(`${base}/admin/customers/${ada.user_id}`);
        assert.ok(Number(await page.evaluate('document.scrollingElement.scrollWidth')) <= 390, 'no sideways scrolling');
        await page.getByLabel('Phone').fill('+49 30 555');
        await page.getByRole('button', { name: 'Save customer' }).click();
        await page.waitForURL(/saved=edited/);
        assert.equal(await page.getByLabel('Phone').inputValue(), '+49 30 555');
      } finally {
        await page.setViewportSize({ width: 1280, height: 900 });
      }
    });
  });
});
