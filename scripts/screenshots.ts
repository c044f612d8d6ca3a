// Saves PNG screenshots of the admin area's main pages under docs/screenshots/: a throwaway demo
// installation (temporary SQLite file) on a real port, a few bookings made through the API, and Debian
// chromium taking the pictures. Run: node --import tsx scripts/screenshots.ts
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config.js';
import { startServer } from '../src/server.js';
import { demo, DEMO_ADMIN_EMAIL } from '../src/app/demo.js';
import { acceptInvitation, inviteUser } from '../src/app/admin-users.js';
import { CLI_ACTOR } from '../src/app/audit.js';
import { createBooking } from '../src/app/bookings.js';
import { listSlots } from '../src/app/availability.js';
import { markAttendance } from '../src/app/booking-status.js';
import { SnapshotCache } from '../src/app/snapshot.js';
import { BROWSER_SKIP, launchBrowser } from '../test/support/chromium.js';

if (BROWSER_SKIP) {
  console.error(`cannot take screenshots: ${BROWSER_SKIP}`);
  process.exit(1);
}

const out = fileURLToPath(new URL('../docs/screenshots/', import.meta.url));
mkdirSync(out, { recursive: true });
const dir = mkdtempSync(join(tmpdir(), 'booking-screens-'));
const server = await startServer(
  loadConfig({ DATABASE_URL: `sqlite:${join(dir, 'booking.db')}`, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent' }),
);
const browser = await launchBrowser();
try {
  const page = await browser.context.newPage();
  const shoot = async (name: string, path: string, options: { width?: number; fullPage?: boolean } = {}) => {
    await page.setViewportSize({ width: options.width ?? 1280, height: 800 });
    await page.goto(`${server.url}${path}`);
    await page.screenshot({ path: join(out, `${name}.png`), fullPage: options.fullPage ?? true });
    console.log(`docs/screenshots/${name}.png  <- ${path}`);
  };

  await shoot('setup', '/admin/setup');
  const { token, adminPassword } = await demo(server.db, 'Europe/Berlin', Date.now());

  // a few bookings through the API, as a customer's website would make them
  const api = async (path: string, init: RequestInit = {}) =>
    (
      await fetch(`${server.url}/api${path}`, {
        ...init,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      })
    ).json() as Promise<any>;
  const people = [
    ['Grace', 'Hopper'],
    ['Alan', 'Turing'],
    ['Katherine', 'Johnson'],
    ['Edsger', 'Dijkstra'],
    ['Barbara', 'Liskov'],
  ];
  const days: string[] = (await api('/days?schedule=1&reason=1')).data;
  let booked = 0;
  for (const day of days.slice(0, 3)) {
    const slots: string[] = (await api(`/slots?schedule=1&reason=1&day=${day}`)).data;
    for (const slot of [slots[0], slots[4]]) {
      const [first, last] = people[booked % people.length]!;
      if (!slot) continue;
      await api('/bookings', {
        method: 'POST',
        body: JSON.stringify({
          schedule: 1,
          reason: 1,
          slot,
          submission: { first_name: first, last_name: last, email: `${first!.toLowerCase()}@example.com`, phone: '+49 30 1234567' },
        }),
      });
      booked++;
    }
  }

  await page.goto(`${server.url}/admin/signin`);
  await shoot('signin', '/admin/signin', { fullPage: false });
  await page.getByLabel('E-mail').fill(DEMO_ADMIN_EMAIL);
  await page.getByLabel('Password').fill(adminPassword!);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/admin\/bookings/);

  await shoot('bookings', '/admin/bookings');
  await shoot('bookings-search', `/admin/bookings?q=${encodeURIComponent('30 123')}&when=all`);
  await shoot('calendar', `/admin/calendar?view=week&schedule=1&date=${days[0]}`);
  await shoot('calendar-day', `/admin/calendar?view=day&schedule=1&date=${days[0]}`);
  await shoot('calendar-all', `/admin/calendar?view=all&date=${days[0]}`);
  await shoot('calendar-print', `/admin/calendar/print?date=${days[0]}`);
  await shoot('calendar-week-phone', `/admin/calendar?view=week&schedule=1&date=${days[0]}`, { width: 390, fullPage: false });
  await shoot('schedules', '/admin/schedules');
  await shoot('schedule-edit', '/admin/schedules/1');
  await shoot('schedule-form-phone', '/admin/schedules/1#form', { width: 390, fullPage: false });
  // hours that would leave the first booking outside: the warning before saving ("Back" saves nothing)
  const weekday = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'][new Date(`${days[0]}T12:00:00Z`).getUTCDay()]!;
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${server.url}/admin/schedules/1`);
  await page.locator(`[id="weekly_hours.${weekday}"]`).fill('20-21');
  await page.getByRole('button', { name: 'Save schedule' }).click();
  await page.screenshot({ path: join(out, 'hours-warning.png'), fullPage: true });
  console.log('docs/screenshots/hours-warning.png  <- new hours that leave bookings outside, before saving');
  await page.getByRole('button', { name: 'Back, change nothing' }).click();
  await shoot('book', `/admin/schedules/1/book?reason=1&day=${days[0]}`);
  await page.goto(`${server.url}/admin/bookings`);
  const bookings: string[] = await page
    .locator('table.bookings a[href^="/admin/bookings/"]')
    .evaluateAll((links) => links.map((a) => a.getAttribute('href')!));
  await shoot('cancel-confirm', `${bookings[0]}/cancel`);
  await shoot('customer', '/admin/customers/1');
  await shoot('customer-erase-refused', '/admin/customers/1/erase', { fullPage: false });
  // a customer whose only appointment was cancelled: erasure is offered, after this confirmation
  const cancelled = await api('/bookings', {
    method: 'POST',
    body: JSON.stringify({
      schedule: 1,
      reason: 1,
      slot: (await api(`/slots?schedule=1&reason=1&day=${days[2]}`)).data[1],
      submission: { first_name: 'Ida', last_name: 'Rhodes', email: 'ida@example.com' },
    }),
  });
  await page.goto(`${server.url}/admin/bookings/${cancelled.booking_details_id}/cancel`);
  await page.getByRole('button', { name: 'Confirm cancellation' }).click();
  await shoot('customer-erase-confirm', `/admin/customers/${cancelled.user_id}/erase`, { fullPage: false });
  // Undo cancellation asks first, saying the customer is e-mailed a new confirmation
  await shoot('booking-restore-confirm', `/admin/bookings/${cancelled.booking_details_id}/restore`, { fullPage: false });
  // Reschedule: the times of another reason and day
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${server.url}${bookings[1]}/reschedule`);
  await page.getByLabel('Reason').selectOption({ index: 1 });
  await page.getByLabel('Day').fill(days[3] ?? days[1]!);
  await page.getByRole('button', { name: 'Show free times' }).click();
  await page.screenshot({ path: join(out, 'booking-reschedule.png'), fullPage: true });
  console.log('docs/screenshots/booking-reschedule.png  <- Reschedule, another reason and day shown');
  // a begun appointment marked completed: booked a week ago for the last open day before today
  const snapshot = await new SnapshotCache(server.db).current();
  const weekAgo = Date.now() - 8 * 86_400_000;
  const localDay = (offset: number) =>
    new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin', year: 'numeric', month: '2-digit', day: '2-digit' }).format(
      new Date(Date.now() - offset * 86_400_000),
    );
  for (let back = 1; back <= 7; back++) {
    const slot = (await listSlots(server.db, snapshot, 1, 1, localDay(back), weekAgo)).items[2];
    if (!slot) continue;
    const past = await createBooking(
      server.db,
      snapshot,
      {
        scheduleId: 1,
        reasonId: 1,
        slot,
        submission: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' },
        source: 'api',
      },
      weekAgo,
    );
    await markAttendance(server.db, past.detailsId, 'completed', Date.now());
    await shoot('booking-status', `/admin/bookings/${past.detailsId}?saved=completed`);
    break;
  }
  await shoot('booking-edit', `${bookings[0]}/edit`);
  // booking by hand with a rule set aside: the full times are offered, marked
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${server.url}/admin/schedules/1/book?reason=1&day=${days[0]}`);
  await page.getByLabel('Book over capacity').check();
  await page.getByRole('button', { name: 'Show free times' }).click();
  await page.getByLabel('Find customer').fill('Hopper');
  await page.getByRole('button', { name: 'Find customer' }).click();
  await page.screenshot({ path: join(out, 'book-overrides.png'), fullPage: true });
  console.log('docs/screenshots/book-overrides.png  <- book by hand, over capacity ticked, a customer searched');
  // the schedule form with several mistakes at once: the summary at the top
  await page.goto(`${server.url}/admin/schedules/new`);
  await page.getByLabel('Name', { exact: true }).fill('   ');
  await page.getByLabel('Monday').fill('12:00-09:00');
  await page.getByLabel('Date exceptions').fill('24.12.2026 closed');
  await page.getByRole('button', { name: 'Create schedule' }).click();
  await page.screenshot({ path: join(out, 'schedule-errors.png'), fullPage: false });
  console.log('docs/screenshots/schedule-errors.png  <- a new schedule with three mistakes');
  await shoot('settings', '/admin/settings');
  await shoot('token-confirm', '/admin/settings/token');
  await page.getByRole('button', { name: 'Confirm: generate a new token' }).click();
  await page.waitForURL(/token\/new$/);
  await page.screenshot({ path: join(out, 'token.png'), fullPage: true });
  console.log("docs/screenshots/token.png  <- a freshly generated token (this throwaway installation's)");
  await shoot('customers', '/admin/customers');
  // a closure over a booked day: the warning lists the bookings inside it
  await page.goto(`${server.url}/admin/closures`);
  await page.getByLabel('First day').fill(days[0]!);
  await page.getByLabel('Label').fill('Staff training');
  await page.getByRole('button', { name: 'Add closure' }).click();
  await page.waitForURL(/saved=added/);
  await page.screenshot({ path: join(out, 'closures.png'), fullPage: true });
  console.log('docs/screenshots/closures.png  <- a closure over a booked day');
  await shoot('mail', '/admin/mail');
  // a staff member of the first schedule who joined and booked, and an invitation still open
  const joined = await inviteUser(server.db, { email: 'sam@example.com', role: 'staff', scheduleIds: [1] }, CLI_ACTOR, Date.now());
  await acceptInvitation(
    server.db,
    joined.token,
    { name: 'Sam Staff', password: 'staff secret phrase', repeat: 'staff secret phrase' },
    Date.now(),
  );
  await inviteUser(server.db, { email: 'lee@example.com', role: 'staff', scheduleIds: [1] }, CLI_ACTOR, Date.now());
  await shoot('users', '/admin/users');
  await shoot('activity', '/admin/activity');
  await shoot('bookings-phone', '/admin/bookings', { width: 390 });
  await shoot('book-phone', `/admin/schedules/1/book?reason=1&day=${days[1]}`, { width: 390 });
} finally {
  await browser.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
