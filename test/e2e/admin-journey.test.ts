// The operator's journey in a real browser (Debian chromium through playwright-core) against a real
// server on a real port with a fresh database (SQLite, then PostgreSQL): setup, a schedule with hours, an exception and a
// reason, its form, the API switch and token, a booking made through /api, seen in the list and the
// calendar, cancelled, and the time free again through /api/slots.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import type { RunningServer } from '../../src/server.js';
import { describeEachDatabase, freshDatabase, type TestDatabase } from '../support/databases.js';
import { localDateFromToday, serveDatabase } from '../support/installation.js';
import { BROWSER_SKIP, launchBrowser, newPage, type LaunchedBrowser } from '../support/chromium.js';

const ZONE = 'Europe/Berlin';
/** a local date in the installation's zone, `days` after today */
const localDate = (days: number) => localDateFromToday(days, ZONE);

describeEachDatabase('admin journey in chromium', (dialect) => {
  describe('journey', { skip: BROWSER_SKIP }, () => {
    let server: RunningServer;
    let database: TestDatabase;
    let browser: LaunchedBrowser;
    let page: Page;

    before(async () => {
      database = await freshDatabase(dialect);
      // a fresh database, not even migrated: the server migrates it, and setup is the first page
      server = await serveDatabase(database.url);
      // the browser's zone under its old CLDR name: setup proposes it under its current one
      browser = await launchBrowser({ timezoneId: 'Asia/Calcutta' });
      page = await newPage(browser);
    });
    after(async () => {
      await browser?.close();
      await server?.stop();
      await database?.drop();
    });

    test('from a fresh installation to a cancelled booking', async () => {
      const base = server.url;
      const api = async (path: string, token: string, init: RequestInit = {}) => {
        const res = await fetch(`${base}/api${path}`, {
          ...init,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
        });
        return { status: res.status, body: (await res.json()) as any };
      };

      // setup
      await page.goto(`${base}/admin`);
      assert.match(page.url(), /\/admin\/setup$/);
      assert.equal(await page.getByLabel('Time zone').inputValue(), 'Asia/Kolkata');
      assert.match((await page.locator('#zone-proposal').textContent()) ?? '', /Proposed from this browser: Asia\/Kolkata/);
      await page.getByLabel('Installation name').fill('Journey practice');
      await page.getByLabel('Time zone').selectOption(ZONE);
      await page.getByLabel('Administrator e-mail').fill('owner@example.com');
      await page.getByLabel('Administrator password').fill('a long secret phrase');
      await page.getByRole('button', { name: 'Finish setup' }).click();
      await page.waitForURL(/\/admin\/schedules$/);

      // a schedule with weekly hours (two intervals a day) and an exception
      const closedDay = localDate(1);
      await page.getByRole('link', { name: 'New schedule' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Dr. Journey');
      await page.getByLabel('Latest booking (days ahead)').fill('14');
      for (const day of ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday']) {
        await page.getByLabel(day).fill('09:00-12:00, 13:00-17:00');
      }
      await page.getByLabel('Date exceptions').fill(`${closedDay} closed`);
      await page.getByRole('button', { name: 'Create schedule' }).click();
      await page.waitForURL(/\/admin\/schedules\/\d+\?saved=created/);
      const scheduleId = Number(/schedules\/(\d+)/.exec(page.url())![1]);

      // a reason
      const addReason = page.locator('form[action$="/reasons"]');
      await addReason.getByLabel('Name').fill('Consultation');
      await addReason.getByLabel('Duration (minutes)').fill('30');
      await addReason.getByRole('button', { name: 'Add reason' }).click();
      await page.waitForURL(/saved=reason/);
      assert.equal(await page.locator('input[id$="_name"][value="Consultation"]').count(), 1);

      // the booking form: first name becomes required, a "notes" textarea is added
      await page.locator('#f0_required').check();
      await page.getByLabel('New field name').fill('notes');
      await page.locator('#f4_label').fill('Notes');
      await page.locator('#f4_form_type').selectOption('textarea');
      await page.getByRole('button', { name: 'Save booking form' }).click();
      await page.waitForURL(/saved=form/);

      // the API: on, and a token shown once
      await page.getByRole('link', { name: 'Configuration' }).click();
      await page.getByRole('button', { name: 'Switch the API on' }).click();
      await page.waitForURL(/saved=api_on/);
      assert.equal(await page.locator('#api-state').textContent(), 'on');
      await page.getByRole('link', { name: 'Generate a new token' }).click();
      assert.match((await page.locator('main').textContent()) ?? '', /The token is shown once/);
      await page.getByRole('button', { name: 'Confirm: generate a new token' }).click();
      await page.waitForURL(/\/admin\/settings\/token\/new$/);
      const token = (await page.locator('#new-token').textContent())!.trim();
      assert.match(token, /^apm_[A-Za-z0-9]{64}$/);
      assert.match((await page.locator('[role=alert]').textContent()) ?? '', /shown only this once/);

      // the token against /api
      const schedules = await api('/schedules', token);
      assert.equal(schedules.status, 200);
      const reasons = await api(`/reasons?schedule=${scheduleId}`, token);
      assert.equal(reasons.status, 200, JSON.stringify(reasons.body));
      const reasonId = reasons.body.data[0].id as number;
      const days = await api(`/days?schedule=${scheduleId}&reason=${reasonId}`, token);
      assert.ok(!days.body.data.includes(closedDay), 'the exception closes its day');
      const day = localDate(2);
      assert.ok(days.body.data.includes(day));
      const slots = await api(`/slots?schedule=${scheduleId}&reason=${reasonId}&day=${day}`, token);
      const slot = slots.body.data[0] as string;
      assert.equal(slot, `${day} 09:00:00`);
      const form = await api(`/forms?schedule=${scheduleId}&reason=${reasonId}&slot=${encodeURIComponent(slot)}`, token);
      assert.equal(form.body.data.notes.form_type, 'textarea');
      assert.equal(form.body.data.first_name.required, true);
      const booked = await api('/bookings', token, {
        method: 'POST',
        body: JSON.stringify({
          schedule: scheduleId,
          reason: reasonId,
          slot,
          submission: { first_name: 'Grace', last_name: 'Hopper', email: 'grace@example.com', notes: 'Bring <files>' },
        }),
      });
      assert.equal(booked.status, 201, JSON.stringify(booked.body));

      // the booking in the list and in the calendar
      await page.goto(`${base}/admin/bookings`);
      const row = page.locator('table.bookings tr', { hasText: 'Grace Hopper' });
      assert.equal(await row.count(), 1);
      assert.match((await row.textContent()) ?? '', /API/);
      await page.goto(`${base}/admin/schedules/${scheduleId}/calendar?week=${day}`);
      const appointment = page.locator('a.appt', { hasText: 'Grace Hopper' });
      assert.match((await appointment.textContent()) ?? '', /09:00–09:30/);

      // cancel it; the time is free again through /api/slots
      await appointment.click();
      assert.match((await page.locator('main').textContent()) ?? '', /Bring <files>/);
      await page.getByRole('link', { name: 'Cancel this booking' }).click();
      assert.match((await page.locator('main').textContent()) ?? '', /the customer is e-mailed a cancellation at grace@example\.com/);
      await page.getByRole('button', { name: 'Confirm cancellation' }).click();
      await page.waitForURL(/saved=cancelled/);
      assert.match((await page.locator('#booking-status').textContent()) ?? '', /cancelled/);
      const again = await api(`/slots?schedule=${scheduleId}&reason=${reasonId}&day=${day}`, token);
      assert.ok(again.body.data.includes(slot), 'the cancelled time is free again');
    });
  });
});
