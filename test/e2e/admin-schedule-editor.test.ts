// The schedule editor (issue 11, "Confusing: make it clear") in a real browser (Debian chromium through
// playwright-core) against a real server, on SQLite and PostgreSQL, on a desktop and a phone viewport:
// opening hours as time inputs (add an interval, remove one, in place), three booking form fields added and
// saved at once, the warning that lists a booking the new hours leave outside, the saved-message beside the
// part saved; then the same hours and form editing without JavaScript.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { connect, type Db } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { generateToken, setApiEnabled, setup } from '../../src/app/installation.js';
import { importSchedules, type ImportedSchedule } from '../../src/app/schedules.js';
import { getSchedule } from '../../src/app/admin-schedules.js';
import { describeEachDatabase, freshDatabase, type TestDatabase } from '../support/databases.js';
import { ALL_WEEK, localDateFromToday, OWNER } from '../support/installation.js';
import { BROWSER_SKIP, launchBrowser } from '../support/chromium.js';

const ZONE = 'Europe/Berlin';
const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 900 },
  { name: 'phone', width: 390, height: 844 },
];
const schedule = (name: string) => ({
  name,
  slot_interval_minutes: 30,
  horizon_days: 14,
  weekly_hours: ALL_WEEK([['09:00', '17:00']]),
  reasons: [{ name: 'Consultation', duration_minutes: 30 }],
  form: { first_name: { label: 'First name', input_type: 'text', required: true } },
});
const WEEKDAY_IDS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
/** the weekday id (mon…sun) of a local date */
const weekdayOf = (date: string) => WEEKDAY_IDS[new Date(`${date}T12:00:00Z`).getUTCDay()]!;

type Browser = Awaited<ReturnType<typeof launchBrowser>>;

async function signIn(page: Page, base: string): Promise<void> {
  await page.goto(`${base}/admin/signin`);
  await page.getByLabel('E-mail').fill(OWNER.email);
  await page.getByLabel('Password').fill(OWNER.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/admin\/(bookings|schedules)/);
}

const noSidewaysScroll = async (page: Page, width: number) =>
  assert.ok(Number(await page.evaluate('document.scrollingElement.scrollWidth')) <= width, 'the page does not scroll sideways');

describeEachDatabase('admin schedule editor in chromium (issue 11)', (dialect) => {
  describe('editor', { skip: BROWSER_SKIP }, () => {
    let server: RunningServer;
    let database: TestDatabase;
    let db: Db;
    let browser: Browser;
    let noScript: Browser;
    let page: Page;
    let plain: Page;
    let base: string;
    let token: string;
    // one schedule per run (desktop, phone, without JavaScript), so each starts from the same hours
    const schedules = new Map<string, ImportedSchedule>();

    const hoursOf = async (s: ImportedSchedule) => (await getSchedule(db, s.id)).weeklyHours;

    before(async () => {
      database = await freshDatabase(dialect);
      db = connect(database.url);
      await migrate(db);
      await setup(
        db,
        {
          timezone: ZONE,
          adminEmail: OWNER.email,
          adminPassword: OWNER.password,
          name: 'Editor practice',
          notifyEmail: 'desk@example.com',
        },
        Date.now(),
      );
      const names = ['desktop', 'phone', 'plain'];
      const imported = (await importSchedules(db, { schedules: names.map((n) => schedule(`Room ${n}`)) }, Date.now())).schedules;
      names.forEach((n, i) => schedules.set(n, imported[i]!));
      await setApiEnabled(db, true);
      token = await generateToken(db);
      server = await startServer(loadConfig({ DATABASE_URL: database.url, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent' }));
      base = server.url;
      browser = await launchBrowser();
      noScript = await launchBrowser({ javaScriptEnabled: false });
      page = await browser.context.newPage();
      plain = await noScript.context.newPage();
      page.setDefaultTimeout(10_000);
      plain.setDefaultTimeout(10_000);
      await signIn(page, base);
      await signIn(plain, base);
    });
    after(async () => {
      await browser?.close();
      await noScript?.close();
      await server?.stop();
      await db?.close();
      await database?.drop();
    });

    for (const viewport of VIEWPORTS) {
      describe(viewport.name, () => {
        let s: ImportedSchedule;
        before(async () => {
          s = schedules.get(viewport.name)!;
          await page.setViewportSize({ width: viewport.width, height: viewport.height });
        });

        test('hours as time inputs: an interval added and one removed in place, saved; the message beside the hours', async () => {
          await page.goto(`${base}/admin/schedules/${s.id}`);
          await noSidewaysScroll(page, viewport.width);
          // a marker that a reload would lose: add and remove happen in place
          await page.evaluate('window.stillHere = true');
          const monday = page.locator('#hours-mon');
          assert.equal(await monday.locator('.interval').count(), 2, 'the interval and an empty pair');
          await monday.getByRole('button', { name: 'Add interval' }).click();
          assert.equal(await monday.locator('.interval').count(), 3);
          const from = monday.getByLabel('From');
          const to = monday.getByLabel('To', { exact: true });
          await from.nth(0).fill('08:00');
          await to.nth(0).fill('12:00');
          await from.nth(2).fill('13:00');
          await to.nth(2).fill('18:00');
          const tuesday = page.locator('#hours-tue');
          await tuesday.getByRole('button', { name: 'Remove' }).first().click();
          assert.equal(await tuesday.locator('.interval').count(), 1);
          assert.equal(await tuesday.getByLabel('From').inputValue(), '', 'only the empty pair is left');
          assert.equal(await page.evaluate('window.stillHere'), true, 'no reload');
          await page.getByRole('button', { name: 'Save schedule' }).click();
          await page.waitForURL(/saved=hours&.*#hours$/);
          const hours = await hoursOf(s);
          assert.deepEqual(hours.mon, [
            { start: 480, end: 720 },
            { start: 780, end: 1080 },
          ]);
          assert.deepEqual(hours.tue, []);
          const status = page.locator('h2#hours + p.flash[role=status]');
          assert.equal(await status.textContent(), 'Schedule saved, with the new opening hours.');
          assert.ok(await status.isVisible());
          assert.ok(await status.isVisible());
          await noSidewaysScroll(page, viewport.width);
        });

        test('three booking form fields added and saved at once; on a phone the rows stack', async () => {
          await page.goto(`${base}/admin/schedules/${s.id}#form`);
          await page.evaluate('window.stillHere = true');
          const editor = page.locator('#form-editor');
          for (let i = 0; i < 2; i++) await editor.getByRole('button', { name: 'Add field' }).click();
          assert.equal(await editor.locator('tbody tr').count(), 4, 'first_name and three empty rows');
          assert.equal(await page.evaluate('window.stillHere'), true, 'no reload');
          const fields = [
            ['phone', 'Phone'],
            ['notes', 'Notes'],
            ['city', 'City'],
          ];
          for (const [i, [name, label]] of fields.entries()) {
            await editor.locator(`#f${i + 1}_name`).fill(name!);
            await editor.locator(`#f${i + 1}_label`).fill(label!);
          }
          await editor.locator('#f2_form_type').selectOption('textarea');
          if (viewport.name === 'phone') {
            assert.equal(
              await editor
                .locator('tbody tr')
                .first()
                .evaluate(
                  (tr) => (globalThis as unknown as { getComputedStyle(e: unknown): { display: string } }).getComputedStyle(tr).display,
                ),
              'block',
              'rows stack',
            );
            await noSidewaysScroll(page, viewport.width);
          }
          await editor.getByRole('button', { name: 'Save booking form' }).click();
          await page.waitForURL(/saved=form&.*#form$/);
          const form = (await getSchedule(db, s.id)).form;
          assert.deepEqual(
            form.map((f) => [f.name, f.formType]),
            [
              ['first_name', 'textbox'],
              ['phone', 'textbox'],
              ['notes', 'textarea'],
              ['city', 'textbox'],
            ],
          );
          assert.equal(await page.locator('#form-editor p.flash[role=status]').textContent(), 'Booking form saved.');
        });

        test('hours that leave a booking outside: a warning lists it; Back keeps the typed hours; Confirm saves', async () => {
          const day = localDateFromToday(2, ZONE);
          const res = await fetch(`${base}/api/bookings`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              schedule: s.id,
              reason: s.reasons[0]!.id,
              slot: `${day} 10:00:00`,
              submission: { first_name: `Ada ${viewport.name}` },
            }),
          });
          assert.equal(res.status, 201, await res.text());
          const weekday = weekdayOf(day);
          await page.goto(`${base}/admin/schedules/${s.id}`);
          const hours = page.locator(`#hours-${weekday}`);
          // the first interval of that day now starts at 11:00 (on a Monday, the 08:00-12:00 of the first test)
          await hours.getByLabel('From').first().fill('11:00');
          await page.getByRole('button', { name: 'Save schedule' }).click();
          const warning = page.locator('#hours-warning');
          assert.match((await warning.textContent()) ?? '', /1 upcoming booking would be outside the new opening hours/);
          assert.match((await warning.locator('li').textContent()) ?? '', new RegExp(`${day} 10:00 Ada ${viewport.name}, Consultation`));
          assert.match(
            (await warning.textContent()) ?? '',
            /It stays booked: nobody is e-mailed. The calendar .* flag it "outside the opening hours"/,
          );
          await noSidewaysScroll(page, viewport.width);
          const before = await hoursOf(s);

          await page.getByRole('button', { name: 'Back, change nothing' }).click();
          assert.equal(await page.locator(`#hours-${weekday}`).getByLabel('From').first().inputValue(), '11:00', 'the typed hours kept');
          assert.deepEqual(await hoursOf(s), before, 'nothing saved');

          await page.getByRole('button', { name: 'Save schedule' }).click();
          await page.getByRole('button', { name: 'Confirm: save the hours' }).click();
          await page.waitForURL(/saved=hours&.*#hours$/);
          assert.equal((await hoursOf(s))[weekday as 'mon']![0]!.start, 660);
          assert.match((await page.locator('#outside-hours').textContent()) ?? '', /1 upcoming booking is outside the opening hours/);
          assert.equal(await page.locator('h2#hours + p.flash[role=status]').count(), 1);
        });
      });
    }

    describe('without JavaScript', () => {
      let s: ImportedSchedule;
      before(() => {
        s = schedules.get('plain')!;
      });

      test('"Add interval" and "Remove" show the form again keeping what was typed; then saved', async () => {
        await plain.goto(`${base}/admin/schedules/${s.id}`);
        const monday = () => plain.locator('#hours-mon');
        await monday().getByLabel('From').first().fill('08:00');
        await monday().getByLabel('To', { exact: true }).first().fill('12:00');
        await plain.locator('#name').fill('Room typed');
        await monday().getByRole('button', { name: 'Add interval' }).click();
        assert.equal(await monday().locator('.interval').count(), 3, 'the interval, the empty pair and one more');
        assert.ok(plain.url().endsWith('#hours-mon'), 'the page opens at the day');
        assert.equal(await monday().getByLabel('From').first().inputValue(), '08:00', 'typed value kept');
        assert.equal(await plain.locator('#name').inputValue(), 'Room typed');
        await monday().getByLabel('From').nth(1).fill('13:00');
        await monday().getByLabel('To', { exact: true }).nth(1).fill('15:00');
        await monday().getByLabel('From').nth(2).fill('16:00');
        await monday().getByLabel('To', { exact: true }).nth(2).fill('17:00');
        await monday().getByRole('button', { name: 'Remove' }).nth(1).click();
        assert.equal(await monday().getByLabel('From').nth(1).inputValue(), '16:00', '13:00-15:00 removed');
        assert.equal((await getSchedule(db, s.id)).name, 'Room plain', 'nothing saved yet');
        // Enter in a field saves (the first submit button is the hidden "Save")
        await plain.locator('#name').press('Enter');
        await plain.waitForURL(/saved=hours&.*#hours$/);
        const saved = await getSchedule(db, s.id);
        assert.equal(saved.name, 'Room typed');
        assert.deepEqual(saved.weeklyHours.mon, [
          { start: 480, end: 720 },
          { start: 960, end: 1020 },
        ]);
      });

      test('"Add field" shows one more empty row keeping what was typed; all rows saved at once', async () => {
        await plain.goto(`${base}/admin/schedules/${s.id}#form`);
        const editor = () => plain.locator('#form-editor');
        await editor().locator('#f1_name').fill('phone');
        await editor().getByRole('button', { name: 'Add field' }).click();
        assert.ok(plain.url().endsWith('#form-editor'), 'the page opens at the editor');
        assert.equal(await editor().locator('#f1_name').inputValue(), 'phone');
        await editor().locator('#f2_name').fill('notes');
        await editor().getByRole('button', { name: 'Add field' }).click();
        await editor().locator('#f3_name').fill('city');
        await editor().getByRole('button', { name: 'Save booking form' }).click();
        await plain.waitForURL(/saved=form&.*#form$/);
        assert.deepEqual(
          (await getSchedule(db, s.id)).form.map((f) => f.name),
          ['first_name', 'phone', 'notes', 'city'],
        );
      });
    });
  });
});
