// Issue 11 "Missing": the calendar (day, week, all schedules, jump to a date, the print list) on the two DST
// days of 2026 in Berlin, walked without JavaScript on a desktop and a phone viewport (the page itself never
// scrolls sideways; the week scrolls inside its box), and the E-mail page's fields and test e-mail against a
// real SMTP server. Real server on a real port, Debian chromium; SQLite and PostgreSQL.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, servedInstallation, type ServedInstallation } from '../support/installation.js';
import { BROWSER_SKIP, launchBrowser, signedInPage, type LaunchedBrowser } from '../support/chromium.js';
import { TestSmtpServer } from '../integration/mail-support.js';

const schedule = (name: string) => ({
  name,
  slot_interval_minutes: 30,
  horizon_days: 14,
  weekly_hours: ALL_WEEK([['01:00', '12:00']]),
  reasons: [{ name: 'Consultation', duration_minutes: 30 }],
});

describeEachDatabase('calendar and mail settings in chromium (issue 11)', (dialect) => {
  describe('walk', { skip: BROWSER_SKIP }, () => {
    let site: ServedInstallation;
    let base: string;
    let browser: LaunchedBrowser;
    let page: Page;
    let smtp: TestSmtpServer;

    before(async () => {
      site = await servedInstallation(dialect, { setup: { name: 'Calendar practice' }, schedules: [schedule('Desk'), schedule('Lab')] });
      base = site.base;
      smtp = await TestSmtpServer.start();
      browser = await launchBrowser({ javaScriptEnabled: false });
      page = await signedInPage(browser, base, { landing: /\/admin\// });
    });
    after(async () => {
      await browser?.close();
      await site?.close();
      await smtp?.down();
    });

    /** the page's own horizontal overflow: 0 when nothing but the calendar's box scrolls sideways */
    const pageOverflow = () => page.locator('html').evaluate((e) => e.scrollWidth - e.clientWidth);

    for (const [device, width] of [
      ['desktop', 1280],
      ['phone', 390],
    ] as const) {
      test(`calendar on a ${device}: jump to a DST day, day, week, all schedules, print list`, async () => {
        await page.setViewportSize({ width, height: 800 });
        await page.goto(`${base}/admin/bookings`);
        await page.getByRole('link', { name: 'Calendar', exact: true }).click();
        await page.getByLabel('Jump to date').fill('2026-03-29');
        await page.getByRole('button', { name: 'Go' }).click();
        await page.waitForURL(/date=2026-03-29/);
        assert.match((await page.locator('h1').textContent()) ?? '', /Sunday 2026-03-29: Desk/);
        assert.match((await page.locator('.cal .gap').textContent()) ?? '', /02:00–03:00 does not exist today/);
        assert.equal(await pageOverflow(), 0, 'the day view fits');

        await page.getByRole('link', { name: 'Next day →' }).click();
        assert.match((await page.locator('h1').textContent()) ?? '', /Monday 2026-03-30/);

        await page.getByLabel('Jump to date').fill('2026-10-25');
        await page.getByRole('button', { name: 'Go' }).click();
        await page.waitForURL(/date=2026-10-25/);
        assert.match((await page.locator('.cal .gap').textContent()) ?? '', /02:00–03:00 happens twice today/);

        await page.getByRole('link', { name: 'Week', exact: true }).click();
        assert.match((await page.locator('h1').textContent()) ?? '', /Week of 2026-10-19: Desk/);
        assert.equal(await page.locator('.cal-col').count(), 7);
        assert.equal(await pageOverflow(), 0, 'the page does not scroll sideways; the week scrolls in its box');
        const box = await page.locator('.cal-scroll').evaluate((e) => e.scrollWidth > e.clientWidth);
        assert.equal(box, width < 900, 'the week scrolls inside its box on a phone only');

        await page.getByRole('link', { name: 'All schedules' }).click();
        assert.deepEqual(await page.locator('.cal-col').evaluateAll((cols) => cols.map((c) => c.getAttribute('data-schedule'))), [
          'Desk',
          'Lab',
        ]);
        assert.equal(await pageOverflow(), 0);

        await page.getByRole('link', { name: 'Print day list' }).click();
        assert.match((await page.locator('h1').textContent()) ?? '', /Sunday 2026-10-25: all schedules/);
        await page.emulateMedia({ media: 'print' });
        assert.equal(await page.locator('header.top').isVisible(), false, 'the menu is left off paper');
        await page.emulateMedia({ media: 'screen' });
      });
    }

    test('E-mail page: the server as fields, Test connection, and a test e-mail that arrives', async () => {
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.goto(`${base}/admin/mail`);
      await page.getByLabel('Host').fill('127.0.0.1');
      await page.getByLabel('Security').selectOption('none');
      await page.getByLabel('Port').fill(String(smtp.port));
      await page.getByRole('button', { name: 'Save sending settings' }).click();
      await page.waitForURL(/saved=smtp/);
      await page.getByRole('button', { name: 'Test connection' }).click();
      assert.match((await page.locator('#smtp-result').textContent()) ?? '', /Connection test passed/);
      assert.equal(await page.getByLabel('Send to').inputValue(), 'desk@example.com');
      await page.getByLabel('Send to').fill('office@example.com');
      await page.getByRole('button', { name: 'Send a test e-mail' }).click();
      assert.match(
        (await page.locator('#test-send-result').textContent()) ?? '',
        /Accepted: the SMTP server took the test message to office@example\.com/,
      );
      assert.deepEqual(smtp.received.at(-1)?.envelopeTo, ['office@example.com']);
    });
  });
});
