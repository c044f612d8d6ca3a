// The admin area's reminder and contact fields (docs/reminders.md), in a real browser (Debian chromium through
// playwright-core) against a real server on a real port, on SQLite and on PostgreSQL: General settings saves
// the practice's phone, address and website and names a wrong one beside its field; the schedule page takes
// reminders as people write them ("24 hours, 2 hours"), shows them back, and refuses a wrong one in words.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { getSchedule } from '../../src/app/admin-schedules.js';
import { loadSettings } from '../../src/db/repos/installation.repository.js';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, servedInstallation, type ServedInstallation } from '../support/installation.js';
import { BROWSER_SKIP, launchBrowser, signedInPage, type LaunchedBrowser } from '../support/chromium.js';

describeEachDatabase('admin reminders and contact details in chromium', (dialect) => {
  describe('fields', { skip: BROWSER_SKIP }, () => {
    let site: ServedInstallation;
    let browser: LaunchedBrowser;
    let page: Page;
    let base: string;
    let scheduleId: number;

    before(async () => {
      const schedule = {
        name: 'Dr. Remind',
        weekly_hours: ALL_WEEK([['09:00', '17:00']]),
        reasons: [{ name: 'Check-up', duration_minutes: 30 }],
      };
      site = await servedInstallation(dialect, { setup: { name: 'Reminder practice' }, schedules: [schedule] });
      base = site.base;
      scheduleId = site.schedules[0]!.id;
      browser = await launchBrowser();
      page = await signedInPage(browser, base);
    });
    after(async () => {
      await browser?.close();
      await site?.close();
    });

    test('General settings: phone, address and website are saved; a wrong website is named beside its field', async () => {
      await page.goto(`${base}/admin/settings`);
      await page.getByLabel('Phone').fill('+49 30 1234567');
      await page.getByLabel('Address').fill('Hauptstraße 1, 10115 Berlin');
      await page.getByLabel('Website').fill('https://practice.example');
      await page.getByRole('button', { name: 'Save general settings' }).click();
      await page.waitForURL(/saved=general/);
      assert.equal(await page.getByLabel('Phone').inputValue(), '+49 30 1234567');
      assert.equal(await page.getByLabel('Address').inputValue(), 'Hauptstraße 1, 10115 Berlin');
      const saved = await loadSettings(site.db.kysely);
      assert.deepEqual(
        [saved.phone, saved.address, saved.website],
        ['+49 30 1234567', 'Hauptstraße 1, 10115 Berlin', 'https://practice.example'],
      );

      // a URL the browser accepts but the server does not: the page says why, beside the field, and keeps the rest
      await page.getByLabel('Website').fill('ftp://practice.example');
      await page.getByLabel('Phone').fill('+49 30 7654321');
      await page.getByRole('button', { name: 'Save general settings' }).click();
      const error = page.locator('#website-error');
      assert.equal(await error.textContent(), 'Must start with https:// or http://');
      assert.equal(await page.getByLabel('Website').getAttribute('aria-describedby'), 'website-error');
      assert.equal(await page.getByLabel('Phone').inputValue(), '+49 30 7654321', 'what was typed is kept');
      assert.equal((await loadSettings(site.db.kysely)).phone, '+49 30 1234567', 'nothing saved');
    });

    test('schedule page: reminders typed as "24 hours, 2 hours" are saved and shown back; a wrong one is refused in words', async () => {
      await page.goto(`${base}/admin/schedules/${scheduleId}`);
      const field = page.getByLabel('Reminders before the appointment');
      assert.equal(await field.inputValue(), '');
      await field.fill('2 hours, 24 hours');
      await page.getByRole('button', { name: 'Save schedule' }).click();
      await page.waitForURL(/saved/);
      assert.equal(await page.getByLabel('Reminders before the appointment').inputValue(), '24 hours, 2 hours');
      assert.deepEqual((await getSchedule(site.db, scheduleId)).reminderMinutesBefore, [1440, 120]);

      await page.getByLabel('Reminders before the appointment').fill('1 day, 2 fortnights');
      await page.getByRole('button', { name: 'Save schedule' }).click();
      assert.equal(
        await page.locator('#reminder_minutes_before-error').textContent(),
        '"2 fortnights" is not a time before the appointment: write e.g. 24 hours, 2 hours or 30 minutes.',
      );
      assert.match((await page.locator('main').textContent()) ?? '', /Reminders before the appointment/, 'named in the summary');
      assert.deepEqual((await getSchedule(site.db, scheduleId)).reminderMinutesBefore, [1440, 120], 'nothing changed');

      await page.getByLabel('Reminders before the appointment').fill('');
      await page.getByRole('button', { name: 'Save schedule' }).click();
      await page.waitForURL(/saved/);
      assert.deepEqual((await getSchedule(site.db, scheduleId)).reminderMinutesBefore, [], 'empty: none');
    });
  });
});
