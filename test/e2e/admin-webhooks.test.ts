// The Webhooks page in a real browser (Debian chromium through playwright-core) against a real server (its
// webhook worker running) and a real receiver on loopback: add an endpoint (a bad URL first), the secret shown
// once, a booking through /api delivered and shown, a failing delivery with its error, Resend, and removing
// the endpoint after a confirmation page.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { ALL_WEEK, localDateFromToday, servedInstallation, type ServedInstallation } from '../support/installation.js';
import { BROWSER_SKIP, launchBrowser, newPage, signIn, type LaunchedBrowser } from '../support/chromium.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { until } from '../integration/mail-support.js';

const localDate = (days: number) => localDateFromToday(days);

describe('admin webhooks in chromium', { skip: BROWSER_SKIP }, () => {
  let site: ServedInstallation;
  let receiver: WebhookReceiver;
  let browser: LaunchedBrowser;
  let page: Page;

  before(async () => {
    const schedule = {
      name: 'Desk',
      capacity: 100,
      weekly_hours: ALL_WEEK([['08:00', '18:00']]),
      reasons: [{ name: 'Talk', duration_minutes: 30 }],
    };
    // no name and no notification address: setup's own defaults
    site = await servedInstallation('sqlite', { setup: { name: undefined, notifyEmail: undefined }, schedules: [schedule], api: true });
    receiver = await WebhookReceiver.start();
    browser = await launchBrowser();
    page = await newPage(browser);
  });
  after(async () => {
    await browser?.close();
    await site?.close();
    await receiver?.down();
  });

  const book = (slot: string) => site.book(slot, { email: 'grace@example.com' });
  /** reloads the endpoint page until the newest delivery's row matches */
  const newestDelivery = async (expected: RegExp) => {
    let text = '';
    await until(`the newest delivery shows ${expected} (last seen: ${text})`, async () => {
      await page.reload();
      text = (await page.locator('#deliveries tbody tr').first().textContent()) ?? '';
      return expected.test(text);
    });
    return text;
  };

  test('add (secret once), deliveries, a failure, resend, remove with confirmation', async () => {
    const base = site.base;
    // /admin leads to the sign-in page, and signing in to the bookings
    await signIn(page, base, { from: '/admin', landing: /\/admin\/bookings/ });

    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.waitForURL(/\/admin\/webhooks\?form=[A-Za-z0-9_-]+$/);
    assert.equal(await page.locator('#no-endpoints').count(), 1);

    // a refused URL: the error beside the field, what was typed kept, nothing stored
    await page.getByLabel('Endpoint URL').fill('ftp://example.com/hook');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    assert.match((await page.locator('#url-error').textContent()) ?? '', /https:\/\/ or http:\/\//);
    assert.equal(await page.getByLabel('Endpoint URL').inputValue(), 'ftp://example.com/hook');
    assert.equal(await page.locator('#no-endpoints').count(), 1);

    // added: redirected to the page that shows the secret, once
    await page.getByLabel('Endpoint URL').fill(receiver.url('/hook'));
    await page.getByLabel('booking.cancelled').uncheck();
    const once = await page.locator('form[action="/admin/webhooks"] input[name=_once]').inputValue();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.waitForURL(/\/admin\/webhooks\/\d+\/secret$/);
    const secret = (await page.locator('#webhook-secret').textContent())!.trim();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.match((await page.locator('[role=alert]').textContent()) ?? '', /shown only this once/);
    receiver.secrets.set('/hook', secret);
    await page.reload();
    assert.equal(await page.locator('#secret-gone').count(), 1);
    assert.doesNotMatch(await page.content(), /whsec_/, 'a reload does not show the secret again');

    // the same form again (as Back brings it: the token is in its address) and submitted: recognised as a
    // resubmission by its one-time token, no second endpoint
    await page.goto(`${base}/admin/webhooks?form=${once}`);
    await page.getByLabel('Endpoint URL').fill(receiver.url('/hook'));
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    assert.match((await page.locator('main').textContent()) ?? '', /already submitted/);
    await page.goto(`${base}/admin/webhooks`);
    assert.equal(await page.locator('#endpoints tbody tr').count(), 1, 'one endpoint, however often the form was sent');
    await page.goto(
      `${base}/admin/webhooks/${/\/admin\/webhooks\/(\d+)/.exec((await page.locator('#endpoints a').first().getAttribute('href')) ?? '')![1]}/secret`,
    );

    await page.getByRole('link', { name: 'Go to the endpoint' }).click();
    assert.match((await page.locator('main').textContent()) ?? '', /booking\.created, booking\.rescheduled/);
    assert.equal(await page.locator('#no-deliveries').count(), 1);

    // a booking through the API: delivered, verified by the receiver, shown as delivered
    await book(`${localDate(2)} 09:00:00`);
    await until('the receiver got the event', () => receiver.received.length >= 1);
    assert.equal(receiver.received[0]!.error, null);
    assert.match(await newestDelivery(/delivered/), /booking\.created.*delivered\s*1\s*204/s);

    // a receiver that fails: the delivery waits for its retry with the status and the error shown
    receiver.mode = { answer: 500 };
    await book(`${localDate(2)} 10:00:00`);
    assert.match(await newestDelivery(/retrying/), /retrying\s*1\s*500\s*HTTP 500: ok/);
    const failedEventId = (await page.locator('#deliveries tbody tr').first().locator('code').textContent())!;

    // Resend: due at once (not after the backoff), the same event id
    receiver.mode = { answer: 204 };
    await page.locator('#deliveries tbody tr').first().getByRole('button', { name: 'Resend' }).click();
    await page.waitForURL(/saved=resent/);
    assert.match(await newestDelivery(/delivered/), /delivered\s*2\s*204/);
    const ids = receiver.received.map((r) => r.event?.id);
    assert.deepEqual(
      ids.filter((id) => id === failedEventId),
      [failedEventId, failedEventId],
    );

    // removing asks first; keeping it changes nothing
    await page.getByRole('link', { name: 'Remove…' }).click();
    assert.match((await page.locator('main').textContent()) ?? '', /cannot be undone/);
    await page.getByRole('link', { name: 'Keep it' }).click();
    assert.match((await page.locator('#endpoint-state').textContent()) ?? '', /enabled/);
    await page.getByRole('link', { name: 'Remove…' }).click();
    await page.getByRole('button', { name: 'Remove endpoint' }).click();
    await page.waitForURL(/\/admin\/webhooks\?saved=removed&form=[A-Za-z0-9_-]+$/);
    assert.equal(await page.locator('#no-endpoints').count(), 1);
  });
});
