// Several admin users (issue 11) walked in a real browser (Debian chromium through playwright-core) against a
// real server on a real port, on SQLite and PostgreSQL: an administrator invites a staff member, the staff
// member opens the link, sets a password, sees only their schedule's bookings, books by hand, and the
// administrator reads "Booked by <staff>" in the booking's History and on the Activity page. On a desktop
// viewport, and the invitation walked again on a phone.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { connect, type Db } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { generateToken, setApiEnabled, setup } from '../../src/app/installation.js';
import { importSchedules, type ImportedSchedule } from '../../src/app/schedules.js';
import { describeEachDatabase, freshDatabase, type TestDatabase } from '../support/databases.js';
import { ALL_WEEK, localDateFromToday, OWNER } from '../support/installation.js';
import { BROWSER_SKIP, launchBrowser, mainText } from '../support/chromium.js';

const schedule = (name: string) => ({
  name,
  slot_interval_minutes: 60,
  horizon_days: 14,
  weekly_hours: ALL_WEEK([['09:00', '17:00']]),
  reasons: [{ name: 'Consultation', duration_minutes: 60 }],
  form: {
    first_name: { label: 'First name', input_type: 'text', required: true },
    email: { label: 'E-mail', input_type: 'email', required: false },
  },
});

describeEachDatabase('admin users in chromium (issue 11)', (dialect) => {
  describe('walks', { skip: BROWSER_SKIP }, () => {
    let server: RunningServer;
    let database: TestDatabase;
    let db: Db;
    let browser: Awaited<ReturnType<typeof launchBrowser>>;
    let page: Page;
    let base: string;
    let schedules: ImportedSchedule[];
    let token: string;
    const day = localDateFromToday(2);

    const apiBook = async (index: number, slot: string, name: string) => {
      const s = schedules[index]!;
      const res = await fetch(`${base}/api/bookings`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ schedule: s.id, reason: s.reasons[0]!.id, slot, submission: { first_name: name } }),
      });
      assert.equal(res.status, 201);
      return (await res.json()) as { booking_details_id: string };
    };

    const signIn = async (email: string, password: string) => {
      await page.goto(`${base}/admin/signin`);
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/admin\/bookings/);
    };
    const signOut = async () => {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/admin\/signin/);
    };

    /** The administrator invites on the Users page; returns the link the next page shows once. */
    const invite = async (email: string, scheduleName: string) => {
      await page.goto(`${base}/admin/users`);
      await page.getByRole('link', { name: 'Invite a user' }).click();
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Role').selectOption('staff');
      await page.getByLabel(scheduleName).check();
      await page.getByRole('button', { name: 'Invite' }).click();
      await page.waitForURL(/\/admin\/users\/invited/);
      const link = ((await page.locator('#invitation-link').textContent()) ?? '').trim();
      assert.match(link, /^http:\/\/127\.0\.0\.1:\d+\/admin\/invitation\/[A-Za-z0-9_-]{43}$/);
      await page.reload();
      assert.match(await mainText(page), /already shown/);
      return link;
    };

    const acceptInvitation = async (link: string, name: string, password: string) => {
      await page.goto(link);
      assert.match(await mainText(page), /Create your account/);
      await page.getByLabel('Your name').fill(name);
      await page.getByLabel('Password', { exact: true }).fill(password);
      await page.getByLabel('Repeat the password').fill(password);
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.waitForURL(/\/admin\/bookings/);
    };

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
          name: 'Two desks',
          notifyEmail: 'desk@example.com',
        },
        Date.now(),
      );
      schedules = (await importSchedules(db, { schedules: [schedule('North desk'), schedule('South desk')] }, Date.now())).schedules;
      await setApiEnabled(db, true);
      token = await generateToken(db);
      server = await startServer(loadConfig({ DATABASE_URL: database.url, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent' }));
      base = server.url;
      browser = await launchBrowser();
      page = await browser.context.newPage();
      page.setDefaultTimeout(10_000);
    });
    after(async () => {
      await browser?.close();
      await server?.stop();
      await db?.close();
      await database?.drop();
    });

    test('invite a staff member; they see only their schedule, book by hand; the administrator sees who booked', async () => {
      const north = await apiBook(0, `${day} 09:00:00`, 'Nora');
      const south = await apiBook(1, `${day} 10:00:00`, 'Sven');
      await signIn(OWNER.email, OWNER.password);
      const link = await invite('sam@example.com', 'North desk');
      await signOut();

      await acceptInvitation(link, 'Sam Staff', 'staff secret phrase');
      const list = await mainText(page);
      assert.match(list, /Nora/);
      assert.doesNotMatch(list, /Sven/);
      const menu = (await page.getByRole('navigation', { name: 'Main' }).textContent()) ?? '';
      assert.doesNotMatch(menu, /Configuration|Users|Schedules|Webhooks/);
      // another schedule's booking, by its address: not found
      const other = await page.goto(`${base}/admin/bookings/${south.booking_details_id}`);
      assert.equal(other?.status(), 404);
      const settings = await page.goto(`${base}/admin/settings`);
      assert.equal(settings?.status(), 403);

      // booking by hand on their schedule
      await page.goto(`${base}/admin/bookings`);
      await page.getByRole('link', { name: 'Book by hand: North desk' }).click();
      await page.getByLabel('Day').fill(day);
      await page.getByRole('button', { name: 'Show free times' }).click();
      await page.getByLabel('11:00').check();
      await page.getByLabel('First name').fill('Olga');
      await page.getByRole('button', { name: 'Book', exact: true }).click();
      await page.waitForURL(/saved=booked/);
      const byHand = page.url().split('?')[0]!;
      assert.match(await page.locator('#booking-history').textContent().then(String), /Booked by Sam Staff/);
      // the link opened once: a second visit finds it used
      await signOut();
      const reused = await page.goto(link);
      assert.equal(reused?.status(), 404);

      await signIn(OWNER.email, OWNER.password);
      await page.goto(byHand);
      assert.match((await page.locator('#booking-history').textContent()) ?? '', /Booked by Sam Staff/);
      await page.goto(`${base}/admin/bookings/${north.booking_details_id}`);
      assert.match((await page.locator('#booking-history').textContent()) ?? '', /Booked through the API/);
      await page.getByRole('link', { name: 'Activity', exact: true }).first().click();
      await page.getByLabel('User').selectOption({ label: 'Sam Staff' });
      await page.getByRole('button', { name: 'Show' }).click();
      const activity = (await page.locator('#activity').textContent()) ?? '';
      assert.match(activity, /Booked by Sam Staff/);
      assert.match(activity, /Sam Staff joined/);
      assert.doesNotMatch(activity, /through the API/);
      await signOut();
    });

    test('on a phone: the Users page, the invitation and the staff bookings fit the screen', async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      const fits = async () =>
        assert.ok(Number(await page.evaluate('document.scrollingElement.scrollWidth')) <= 390, `no sideways scrolling on ${page.url()}`);
      try {
        await signIn(OWNER.email, OWNER.password);
        await page.goto(`${base}/admin/users`);
        await fits();
        const link = await invite('pia@example.com', 'South desk');
        await fits();
        await signOut();
        await acceptInvitation(link, 'Pia Phone', 'phone secret phrase');
        await fits();
        const list = await mainText(page);
        assert.match(list, /Sven/);
        assert.doesNotMatch(list, /Nora/);
      } finally {
        await page.setViewportSize({ width: 1280, height: 900 });
      }
    });
  });
});
