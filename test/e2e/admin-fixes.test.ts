// Issue 11's broken items, each walked in a real browser (Debian chromium through playwright-core) against a
// real server on a real port, on SQLite and on PostgreSQL: book by hand saves what the page shows; a form
// submitted twice creates nothing twice; the new API token is asked for, then shown once; cancelling and
// retiring ask first and keep history; "Copy token" falls back to selecting; unsent mail is visible on the
// Bookings page and can be discarded. Each test fails on the code before its fix. Then the "confusing" items:
// every form error at once at the top, in human words; the menu marks the page; / leads to the admin area.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import type { Db } from '../../src/db/connect.js';
import { countRows, describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, localDateFromToday, servedInstallation, type ServedInstallation } from '../support/installation.js';
import { BROWSER_SKIP, launchBrowser, mainText, signedInPage, type LaunchedBrowser } from '../support/chromium.js';

const ZONE = 'Europe/Berlin';

/** a local date in the installation's zone, `days` after today */
const localDate = (days: number) => localDateFromToday(days, ZONE);

const SCHEDULE = {
  name: 'Dr. Fix',
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
    last_name: { label: 'Last name', input_type: 'text', required: false },
    email: { label: 'E-mail', input_type: 'email', required: false },
  },
};

describeEachDatabase('admin fixes in chromium (issue 11)', (dialect) => {
  describe('fixes', { skip: BROWSER_SKIP }, () => {
    let site: ServedInstallation;
    let db: Db;
    let browser: LaunchedBrowser;
    let noScript: LaunchedBrowser;
    let page: Page;
    let plain: Page;
    let base: string;
    let apiToken: string;
    let scheduleId: number;
    let consultation: number;

    const bookingCount = () => countRows(db, 'bookings');
    const api = async (path: string, token = apiToken) => {
      const res = await fetch(`${base}/api${path}`, { headers: { authorization: `Bearer ${token}` } });
      return { status: res.status, body: (await res.json()) as any };
    };

    before(async () => {
      site = await servedInstallation(dialect, { setup: { timezone: ZONE, name: 'Fixes practice' }, schedules: [SCHEDULE], api: true });
      ({ db, base, token: apiToken } = site);
      const imported = site.schedules[0]!;
      scheduleId = imported.id;
      consultation = imported.reasons.find((r) => r.name === 'Consultation')!.id;
      browser = await launchBrowser();
      noScript = await launchBrowser({ javaScriptEnabled: false });
      page = await signedInPage(browser, base);
      plain = await signedInPage(noScript, base);
    });
    after(async () => {
      await browser?.close();
      await noScript?.close();
      await site?.close();
    });

    test('1. book by hand saves the reason and day the page shows; a time not free for them is refused', async () => {
      const day = localDate(2);
      const otherDay = localDate(3);
      // without JavaScript: the times of Consultation on `day` are listed, then the reason is changed without "Show free times"
      await plain.goto(`${base}/admin/schedules/${scheduleId}/book?reason=${consultation}&day=${day}`);
      await plain.getByLabel('16:30').check();
      await plain.getByLabel('Reason').selectOption({ label: 'Long visit (60 min)' });
      await plain.getByLabel('First name').fill('Shown');
      await plain.getByRole('button', { name: 'Book', exact: true }).click();
      assert.match(await mainText(plain), new RegExp(`16:30 on ${day} is not a free time for Long visit`));
      assert.equal(await bookingCount(), 0, 'nothing booked for the reason of the last "Show free times"');
      // the day changed too: the booking is for the day and reason on the page
      await plain.getByLabel('Day').fill(otherDay);
      await plain.getByLabel('09:00').check();
      await plain.getByRole('button', { name: 'Book', exact: true }).click();
      await plain.waitForURL(/\/admin\/bookings\/[\w-]+\?saved=booked/);
      const details = await mainText(plain);
      assert.match(details, /Long visit/);
      assert.match(details, new RegExp(`${otherDay} 09:00`));
      assert.equal(await bookingCount(), 1);

      // with JavaScript, the times of the previous reason are set aside as soon as the reason changes
      await page.goto(`${base}/admin/schedules/${scheduleId}/book?reason=${consultation}&day=${day}`);
      await page.getByLabel('10:00').check();
      await page.getByLabel('Reason').selectOption({ label: 'Long visit (60 min)' });
      assert.equal(await page.locator('.stale-note').isVisible(), true);
      assert.equal(await page.getByLabel('10:00').isChecked(), false);
      await page.getByRole('button', { name: 'Show free times' }).click();
      assert.match((await page.locator('#times legend').textContent()) ?? '', /Long visit/);

      // on a phone: the page fits the screen and the booking goes through
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(`${base}/admin/schedules/${scheduleId}/book?reason=${consultation}&day=${day}`);
      assert.ok(Number(await page.evaluate('document.scrollingElement.scrollWidth')) <= 390, 'no sideways scrolling');
      await page.getByLabel('10:30').check();
      await page.getByLabel('First name').fill('Phone');
      await page.getByRole('button', { name: 'Book', exact: true }).click();
      await page.waitForURL(/saved=booked/);
      assert.match(await mainText(page), new RegExp(`${day} 10:30`));
      await page.setViewportSize({ width: 1280, height: 900 });
    });

    test('2. Back and submit again: "already submitted", nothing created twice (booking, schedule, reason)', async () => {
      const before = await bookingCount();
      await page.goto(`${base}/admin/schedules/${scheduleId}/book?reason=${consultation}&day=${localDate(4)}`);
      await page.getByLabel('11:00').check();
      await page.getByLabel('First name').fill('Twice');
      await page.getByRole('button', { name: 'Book', exact: true }).click();
      await page.waitForURL(/saved=booked/);
      const first = page.url();
      await page.goBack();
      await page.getByRole('button', { name: 'Book', exact: true }).click();
      assert.match(await mainText(page), /This form was already submitted/);
      await page.getByRole('link', { name: 'See what the first submission created' }).click();
      assert.equal(page.url().split('?')[0], first.split('?')[0]);
      assert.equal(await bookingCount(), before + 1);

      await page.goto(`${base}/admin/schedules/new`);
      await page.getByLabel('Name', { exact: true }).fill('Room Twice');
      await page.getByRole('button', { name: 'Create schedule' }).click();
      await page.waitForURL(/saved=created/);
      await page.goBack();
      await page.getByRole('button', { name: 'Create schedule' }).click();
      assert.match(await mainText(page), /This form was already submitted/);
      const named = await db.kysely.selectFrom('schedules').select('id').where('name', '=', 'Room Twice').execute();
      assert.equal(named.length, 1);
    });

    test('3. a new API token is asked for, shown once after a redirect; a reload shows "already shown"', async () => {
      await page.goto(`${base}/admin/settings`);
      await page.getByRole('link', { name: 'Generate a new token' }).click();
      assert.match(await mainText(page), /website's booking integration .* stops working until it is updated/);
      // "Back, change nothing" changes nothing
      assert.equal((await api('/schedules')).status, 200);
      await page.getByRole('button', { name: 'Confirm: generate a new token' }).click();
      await page.waitForURL(/\/admin\/settings\/token\/new$/);
      const token = (await page.locator('#new-token').textContent())!.trim();
      assert.equal((await api('/schedules', token)).status, 200);
      assert.equal((await api('/schedules')).status, 401, 'the old token stopped');
      await page.reload();
      assert.match(await mainText(page), /already shown/);
      assert.equal(await page.locator('#new-token').count(), 0);
      assert.equal((await api('/schedules', token)).status, 200, 'the reload made no new token');
      // Back to the confirmation and Confirm again: refused, the token shown stays the one that works
      await page.goBack();
      assert.match(page.url(), /\/admin\/settings\/token\?form=/);
      await page.getByRole('button', { name: 'Confirm: generate a new token' }).click();
      assert.match(await mainText(page), /This form was already submitted/);
      assert.equal((await api('/schedules', token)).status, 200, 'no second token replaced it');
      apiToken = token;
    });

    test('4. cancelling and retiring ask first; a retired reason keeps its bookings in the customer history', async () => {
      // a reason added through the admin area (Back and submit again adds it once), then a booking of it
      await page.goto(`${base}/admin/schedules/${scheduleId}`);
      const addReason = page.locator('form[action$="/reasons"]');
      await addReason.getByLabel('Name').fill('Short check');
      await addReason.getByLabel('Duration (minutes)').fill('30');
      await addReason.getByRole('button', { name: 'Add reason' }).click();
      await page.waitForURL(/saved=reason/);
      await page.goBack();
      await page.locator('form[action$="/reasons"]').getByRole('button', { name: 'Add reason' }).click();
      assert.match(await mainText(page), /This form was already submitted/);
      const short = await db.kysely.selectFrom('reasons').select('id').where('name', '=', 'Short check').execute();
      assert.equal(short.length, 1, 'one reason, not two');
      const shortId = short[0]!.id;

      await page.goto(`${base}/admin/schedules/${scheduleId}/book?reason=${shortId}&day=${localDate(5)}`);
      await page.getByLabel('09:30').check();
      await page.getByLabel('First name').fill('Historic');
      await page.getByLabel('E-mail').fill('historic@example.com');
      await page.getByRole('button', { name: 'Book', exact: true }).click();
      await page.waitForURL(/saved=booked/);
      const bookingUrl = page.url().split('?')[0]!;
      await page.getByRole('link', { name: 'Cancel this booking' }).click();
      assert.match(await mainText(page), /the customer is e-mailed a cancellation at historic@example\.com/);
      const status = await db.kysely.selectFrom('bookings').select('status').where('reason_id', '=', shortId).executeTakeFirstOrThrow();
      assert.equal(status.status, 'booked', 'nothing is cancelled before "Confirm cancellation"');
      await page.getByRole('button', { name: 'Confirm cancellation' }).click();
      await page.waitForURL(/saved=cancelled/);
      const customerLink = page.locator('dd a[href^="/admin/customers/"]');
      const customerUrl = `${base}${await customerLink.getAttribute('href')}`;

      // retire the reason: asked first, then gone from the API; the cancelled booking stays in the history
      await page.goto(`${base}/admin/schedules/${scheduleId}`);
      await page.locator(`a[href$="/reasons/${shortId}/retire"]`).click();
      assert.match(await mainText(page), /past and cancelled bookings stay/);
      await page.getByRole('button', { name: 'Confirm: retire this reason' }).click();
      await page.waitForURL(/saved=reason_retired/);
      assert.match((await page.locator('.retired').first().textContent()) ?? '', /Short check/);
      const reasons = await api(`/reasons?schedule=${scheduleId}`);
      assert.deepEqual(
        (reasons.body.data as { name: string }[]).map((r) => r.name),
        ['Consultation', 'Long visit'],
      );
      await page.goto(customerUrl);
      const history = page.locator('table.bookings tr', { hasText: 'Short check' });
      assert.equal(await history.count(), 1, 'the cancelled booking of the retired reason is kept');
      assert.match((await history.textContent()) ?? '', /cancelled/);
      await page.goto(bookingUrl);
      assert.match(await mainText(page), /Short check/);
    });

    test('5. "Copy token" without the clipboard API selects the token and says so', async () => {
      const bare = await browser.context.newPage();
      // as on plain HTTP at a network address: no navigator.clipboard at all
      await bare.addInitScript({ content: 'delete Navigator.prototype.clipboard;' });
      await bare.goto(`${base}/admin/settings/token`);
      await bare.getByRole('button', { name: 'Confirm: generate a new token' }).click();
      await bare.waitForURL(/token\/new$/);
      const token = (await bare.locator('#new-token').textContent())!.trim();
      assert.equal(await bare.evaluate("'clipboard' in navigator"), false);
      await bare.getByRole('button', { name: 'Copy token' }).click();
      assert.equal(await bare.evaluate('window.getSelection().toString().trim()'), token);
      assert.match((await bare.locator('#copy-status').textContent()) ?? '', /The token is selected: press Ctrl\+C/);
      await bare.close();
      apiToken = token;
    });

    test('6. unsent mail is shown on the Bookings page; waiting messages can be discarded after confirming', async () => {
      await page.goto(`${base}/admin/bookings`);
      assert.match((await page.locator('#mail-warning').textContent()) ?? '', /E-mail is not being sent: no SMTP server is configured/);
      await page.getByRole('link', { name: 'review the outbox' }).click();
      await page.getByRole('link', { name: /Discard all \d+ waiting messages/ }).click();
      assert.match(await mainText(page), /will never be sent/);
      await page.getByRole('button', { name: 'Confirm: discard all waiting messages' }).click();
      await page.waitForURL(/saved=discarded/);
      const states = await db.kysely.selectFrom('outbox').select(['state', 'skip_reason']).execute();
      assert.ok(states.length > 0);
      assert.ok(states.every((m) => m.state === 'skipped' && m.skip_reason === 'discarded by the operator'));
      assert.match(await mainText(page), /Skipped: discarded by the operator/);
    });

    test('every error of a form at once, summarised at the top with links to the fields, in human words', async () => {
      await page.goto(`${base}/admin/schedules/new`);
      // three mistakes the browser's own checks let through
      await page.getByLabel('Name', { exact: true }).fill('   ');
      await page.getByLabel('Monday').fill('12:00-09:00');
      await page.getByLabel('Date exceptions').fill('24.12.2026 closed');
      await page.getByRole('button', { name: 'Create schedule' }).click();
      const summary = page.locator('#error-summary');
      assert.match((await summary.locator('h2').textContent()) ?? '', /There are 3 problems/);
      const items = await summary.locator('li a').allTextContents();
      assert.deepEqual(
        items.map((t) => t.split(':')[0]),
        ['Name', 'Weekly hours, Monday', 'Date exceptions'],
      );
      assert.ok(
        items.every((t) => !/non-empty string|f\d+_|must be an integer/.test(t)),
        items.join(' | '),
      );
      assert.equal(
        await page.evaluate('document.activeElement && document.activeElement.id'),
        'error-summary',
        'the page opens on the summary',
      );
      await summary.getByRole('link', { name: /Weekly hours, Monday/ }).click();
      assert.ok(page.url().endsWith('#weekly_hours.mon'));
      assert.equal(await db.kysely.selectFrom('schedules').select('id').where('name', '=', '').executeTakeFirst(), undefined);
    });

    test('the menu marks the current page; / leads to the admin area, never JSON', async () => {
      await page.goto(`${base}/admin/customers`);
      assert.equal(await page.locator('nav a[aria-current="page"]').textContent(), 'Customers');
      await page.goto(`${base}/admin/schedules/${scheduleId}`);
      assert.equal(await page.locator('nav a[aria-current="page"]').textContent(), 'Schedules');
      await page.goto(`${base}/admin/schedules/${scheduleId}/calendar`);
      assert.equal(await page.locator('nav a[aria-current="page"]').textContent(), 'Calendar');
      await page.goto(`${base}/`);
      assert.match(page.url(), /\/admin\/bookings$/);
      assert.equal(await page.locator('h1').textContent(), 'Bookings');
    });

    test("changing the installation's zone warns that appointments keep their moment and says how many move", async () => {
      const upcoming = await countRows(db, 'bookings', { status: 'booked' });
      assert.ok(upcoming > 0);
      await page.goto(`${base}/admin/settings`);
      await page.getByLabel('Time zone').selectOption('Asia/Kolkata');
      await page.getByRole('button', { name: 'Save general settings' }).click();
      assert.match(await mainText(page), /Every appointment keeps its moment/);
      assert.equal(
        await page.locator('#moved-count').textContent(),
        `${upcoming} of ${upcoming} upcoming appointment${upcoming === 1 ? '' : 's'}`,
      );
      await page.getByRole('link', { name: 'Back, change nothing' }).click();
      assert.equal(await page.getByLabel('Time zone').inputValue(), ZONE, 'nothing changed');
      await page.getByLabel('Time zone').selectOption('Asia/Kolkata');
      await page.getByRole('button', { name: 'Save general settings' }).click();
      await page.getByRole('button', { name: 'Confirm: change the time zone' }).click();
      await page.waitForURL(/saved=general/);
      assert.equal(await page.getByLabel('Time zone').inputValue(), 'Asia/Kolkata');
    });

    test('after the hours change, the schedule page lists the bookings now outside them and the calendar flags them', async () => {
      const upcoming = await countRows(db, 'bookings', { status: 'booked', schedule_id: scheduleId });
      await page.goto(`${base}/admin/schedules/${scheduleId}`);
      assert.equal(await page.locator('#outside-hours').count(), 0);
      for (const day of ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday']) {
        await page.getByLabel(day).fill('06:00-07:00');
      }
      await page.getByRole('button', { name: 'Save schedule' }).click();
      // saving asks first, listing the bookings the new hours leave outside
      await page.getByRole('button', { name: 'Confirm: save the hours' }).click();
      await page.waitForURL(/saved=hours/);
      assert.match(
        (await page.locator('#outside-hours').textContent()) ?? '',
        new RegExp(`${upcoming} upcoming bookings are outside the opening hours`),
      );
      assert.equal(await page.locator('#outside-hours li').count(), upcoming);
      await page.goto(`${base}/admin/schedules/${scheduleId}/calendar?week=${localDate(3)}`);
      assert.ok((await page.locator('a.appt.outside').count()) > 0);
      assert.match((await page.locator('a.appt.outside').first().textContent()) ?? '', /outside the opening hours/);
    });
  });
});
