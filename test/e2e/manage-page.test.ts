// The customer's manage page walked in a real browser (Debian chromium through playwright-core) on a phone's
// viewport, against a real server on a real port, on SQLite and on PostgreSQL: the link opens the appointment
// without sideways scrolling, the keyboard reaches the actions with a visible focus, a move and a
// cancellation go through the page's own forms (it has no script), and the link then says "not valid".
// The screenshot of the page is kept in docs/screenshots/manage-phone.png.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import type { Page } from 'playwright-core';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, localDateFromToday, testInstallation, type TestInstallation } from '../support/installation.js';
import { buildApp } from '../../src/http/build-app.js';
import { manageToken } from '../../src/app/manage-link.js';
import { findBookingDetails } from '../../src/db/repos/booking.repository.js';
import { BROWSER_SKIP, launchBrowser, type LaunchedBrowser } from '../support/chromium.js';

const SCHEDULE = {
  name: 'Dr. Phone',
  slot_interval_minutes: 30,
  horizon_days: 14,
  capacity: 1,
  weekly_hours: ALL_WEEK([['09:00', '17:00']]),
  reasons: [{ name: 'Consultation', duration_minutes: 30 }],
  form: {
    first_name: { label: 'First name', input_type: 'text', required: true },
    email: { label: 'E-mail', input_type: 'email', required: true },
  },
};

describeEachDatabase('manage page in chromium on a phone', (dialect) => {
  describe('walk', { skip: BROWSER_SKIP }, () => {
    let inst: TestInstallation;
    let app: FastifyInstance;
    let base: string;
    let browser: LaunchedBrowser;
    let page: Page;

    before(async () => {
      inst = await testInstallation(dialect, { schedules: [SCHEDULE] });
      app = await buildApp({ db: inst.db, clock: () => Date.now(), publicUrl: 'http://unused' });
      await app.listen({ host: '127.0.0.1', port: 0 });
      const address = app.server.address();
      base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
      browser = await launchBrowser({ timezoneId: 'Europe/Berlin' });
      page = await browser.context.newPage();
      await page.setViewportSize({ width: 375, height: 740 });
    });
    after(async () => {
      await browser?.close();
      await app?.close();
      await inst?.close();
    });

    async function book(slot: string): Promise<{ detailsId: string; link: string }> {
      const res = await app.inject({
        method: 'POST',
        url: '/api/bookings',
        headers: { authorization: `Bearer ${inst.token}` },
        payload: {
          schedule: inst.schedules[0]!.id,
          reason: inst.schedules[0]!.reasons[0]!.id,
          slot,
          submission: { first_name: 'Eve', email: 'eve@example.com' },
        },
      });
      assert.equal(res.statusCode, 201, res.body);
      const detailsId = (JSON.parse(res.body) as { booking_details_id: string }).booking_details_id;
      return { detailsId, link: `${base}/manage/${await manageToken(inst.db, detailsId)}` };
    }

    const noSidewaysScroll = async () =>
      Boolean(await page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth'));

    test('move, then cancel, then the link is not valid', async () => {
      const day = localDateFromToday(3);
      const { detailsId, link } = await book(`${day} 10:00:00`);
      await page.goto(link);
      assert.equal(await page.locator('html').getAttribute('lang'), 'en');
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Your appointment');
      assert.ok(await noSidewaysScroll(), 'no sideways scrolling on a phone');
      if (dialect === 'sqlite') await page.screenshot({ path: 'docs/screenshots/manage-phone.png', fullPage: true });

      // the keyboard reaches the first action first, and its focus is visible
      await page.keyboard.press('Tab');
      const focused = await page.evaluate<{ text: string; outline: string }>(
        '({ text: document.activeElement.textContent, outline: getComputedStyle(document.activeElement).outlineStyle })',
      );
      assert.equal(focused.text, 'Move to another time');
      assert.notEqual(focused.outline, 'none');

      await page.getByRole('link', { name: 'Move to another time' }).click();
      assert.ok(await noSidewaysScroll());
      await page.locator(`a[href$="day=${day}"]`).click();
      assert.ok(await noSidewaysScroll());
      await page.getByLabel('11:00').check();
      await page.getByRole('button', { name: 'Move my appointment' }).click();
      await page.waitForURL(/moved=1/);
      assert.match((await page.getByRole('status').textContent()) ?? '', /was moved/);
      assert.match((await page.locator('main').textContent()) ?? '', /11:00–11:30/);
      assert.equal(
        new Date((await findBookingDetails(inst.db.kysely, { detailsId }))!.start).toISOString().slice(11, 16),
        await utcOf(day, '11:00'),
      );

      await page.getByRole('link', { name: 'Cancel this appointment' }).click();
      await page.getByLabel('Reason (optional)').fill('Back to work');
      await page.getByRole('button', { name: 'Yes, cancel the appointment' }).click();
      await page.waitForURL(/\/manage\/cancelled$/);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Your appointment is cancelled');
      const booking = (await findBookingDetails(inst.db.kysely, { detailsId }))!;
      assert.equal(booking.status, 'cancelled');
      assert.equal(booking.cancelReason, 'Back to work');

      const expired = await page.goto(link);
      assert.equal(expired?.status(), 404);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'This link is not valid');
      assert.ok(await noSidewaysScroll());
    });

    /** HH:MM in UTC of a Berlin wall time on `day` */
    async function utcOf(day: string, time: string): Promise<string> {
      for (const offset of [1, 2]) {
        const instant = new Date(`${day}T${time}:00Z`).getTime() - offset * 3_600_000;
        const wall = new Intl.DateTimeFormat('en-GB', {
          timeZone: 'Europe/Berlin',
          hour: '2-digit',
          minute: '2-digit',
          hourCycle: 'h23',
        }).format(instant);
        if (wall === time) return new Date(instant).toISOString().slice(11, 16);
      }
      throw new Error('no such wall time');
    }
  });
});
