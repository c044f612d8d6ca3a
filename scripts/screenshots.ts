// Saves PNG screenshots of the admin area's main pages under docs/screenshots/: a throwaway demo
// installation (temporary SQLite file) on a real port, a few bookings made through the API, and Debian
// chromium taking the pictures. Run: node --import tsx scripts/screenshots.ts
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SMTPServer } from 'smtp-server';
import { loadConfig } from '../src/config.js';
import { startServer } from '../src/server.js';
import { demo, DEMO_ADMIN_EMAIL } from '../src/app/demo.js';
import { createBooking } from '../src/app/bookings.js';
import { listSlots } from '../src/app/availability.js';
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
// a local SMTP server that accepts everything: the E-mail page's connection test and test-send talk to it
const smtp = new SMTPServer({
  authOptional: true,
  allowInsecureAuth: true,
  disabledCommands: ['STARTTLS'],
  onAuth: (_auth, _session, callback) => callback(null, { user: 'office' }),
  onData: (stream, _session, callback) => {
    stream.resume();
    stream.on('end', () => callback());
  },
});
await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
const smtpPort = (smtp.server.address() as { port: number }).port;
const browser = await launchBrowser({ timezoneId: 'Europe/Berlin' });
const staffBrowser = await launchBrowser({ timezoneId: 'Europe/Berlin' });
try {
  const page = await browser.context.newPage();
  const saved = async (name: string, what: string, options: { fullPage?: boolean } = {}) => {
    await page.screenshot({ path: join(out, `${name}.png`), fullPage: options.fullPage ?? true });
    console.log(`docs/screenshots/${name}.png  <- ${what}`);
  };
  const shoot = async (name: string, path: string, options: { width?: number; fullPage?: boolean } = {}) => {
    await page.setViewportSize({ width: options.width ?? 1280, height: 800 });
    await page.goto(`${server.url}${path}`);
    await saved(name, path, options);
  };
  /** a part of the page: from the top of `from` to the bottom of `to` (a section under its heading) */
  const shootPart = async (name: string, from: string, to: string, what: string) => {
    const top = (await page.locator(from).boundingBox())!;
    const bottom = (await page.locator(to).boundingBox())!;
    const y = Math.max(0, top.y - 16);
    await page.screenshot({
      path: join(out, `${name}.png`),
      fullPage: true,
      clip: { x: 0, y, width: page.viewportSize()!.width, height: bottom.y + bottom.height + 16 - y },
    });
    console.log(`docs/screenshots/${name}.png  <- ${what}`);
  };
  const phoneOverflow = async (name: string) => {
    const wide = await page.evaluate<boolean>('document.documentElement.scrollWidth > window.innerWidth');
    if (wide) console.warn(`WARNING: ${name} scrolls sideways on a phone`);
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
    ['Grace', 'Hopper', '+49 30 9018 2201'],
    ['Alan', 'Turing', '+49 30 9018 2202'],
    ['Katherine', 'Johnson', '+49 30 9018 2203'],
    ['Edsger', 'Dijkstra', '+49 30 9018 2204'],
    ['Barbara', 'Liskov', '+49 30 9018 2205'],
  ];
  const days: string[] = (await api('/days?schedule=1&reason=1')).data;
  let booked = 0;
  for (const day of days.slice(0, 3)) {
    const slots: string[] = (await api(`/slots?schedule=1&reason=1&day=${day}`)).data;
    for (const slot of [slots[0], slots[4]]) {
      const [first, last, phone] = people[booked % people.length]!;
      if (!slot) continue;
      await api('/bookings', {
        method: 'POST',
        body: JSON.stringify({
          schedule: 1,
          reason: 1,
          slot,
          submission: { first_name: first, last_name: last, email: `${first!.toLowerCase()}@example.com`, phone },
        }),
      });
      booked++;
    }
  }
  // the meeting room (capacity 2): two teams at the same hour, side by side in the calendar, with notes
  const roomDay: string = (await api('/days?schedule=2&reason=3')).data[0];
  const roomSlot: string = (await api(`/slots?schedule=2&reason=3&day=${roomDay}`)).data[1];
  for (const [first, last, team, notes] of [
    ['Margaret', 'Hamilton', 'Engineering', 'Needs the projector'],
    ['Frances', 'Allen', 'Sales', 'Customer visit, 6 people'],
  ]) {
    await api('/bookings', {
      method: 'POST',
      body: JSON.stringify({
        schedule: 2,
        reason: 3,
        slot: roomSlot,
        submission: { first_name: first, last_name: last, email: `${first!.toLowerCase()}@example.com`, team, notes },
      }),
    });
  }

  await page.goto(`${server.url}/admin/signin`);
  await shoot('signin', '/admin/signin', { fullPage: false });
  await page.getByLabel('E-mail').fill(DEMO_ADMIN_EMAIL);
  await page.getByLabel('Password').fill(adminPassword!);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/admin\/bookings/);

  // a phone number typed another way than stored ("+49 30 9018 2203"): the digits are compared
  await shoot('bookings-search', `/admin/bookings?q=${encodeURIComponent('(30) 9018-2203')}&when=all`);
  await shoot('calendar', `/admin/calendar?view=week&schedule=1&date=${days[0]}`);
  await shoot('calendar-day', `/admin/calendar?view=day&schedule=1&date=${days[0]}`);
  await shoot('calendar-all', `/admin/calendar?view=all&date=${roomDay}`);
  await shoot('calendar-print', `/admin/calendar/print?date=${roomDay}`);
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
  // Dr. Ada Lovelace's (two reasons to reschedule between)
  const bookings: string[] = await page
    .locator('table.bookings tr', { hasText: 'Dr. Ada Lovelace' })
    .locator('a[href^="/admin/bookings/"]')
    .evaluateAll((links) => links.map((a) => a.getAttribute('href')!));
  await shoot('cancel-confirm', `${bookings[0]}/cancel`);
  // the customer's page after staff notes were saved
  await page.goto(`${server.url}/admin/customers/1`);
  await page.getByLabel('Notes (staff only)').fill('Prefers morning appointments. Allergic to latex.');
  await page.getByRole('button', { name: 'Save customer' }).click();
  await page.waitForURL(/saved/);
  await saved('customer', 'a customer, notes saved');
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
  await page.locator('input[name="time"]').first().check();
  await page.getByRole('button', { name: 'Confirm reschedule' }).click();
  await page.waitForURL(/saved/);
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
    await page.goto(`${server.url}/admin/bookings/${past.detailsId}`);
    await page.getByRole('button', { name: 'Mark completed' }).click();
    await page.waitForURL(/saved=completed/);
    await saved('booking-status', 'a begun booking marked completed');
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
  // book it (the customer found, a time only the override allows), then Back and submit again: refused
  await page.getByRole('button', { name: 'Use Grace Hopper' }).click();
  await page.getByRole('button', { name: 'Show free times' }).click();
  await page.locator('input[name="time"]').first().check();
  await page.getByRole('button', { name: 'Book', exact: true }).click();
  await page.waitForURL(/saved=booked/);
  await page.goto(`${server.url}/admin/schedules/1/book?reason=2&day=${days[1]}`);
  await page.locator('input[name="time"]').last().check();
  await page.getByLabel('First name').fill('John');
  await page.getByLabel('Last name').fill('von Neumann');
  await page.getByLabel('E-mail').fill('john@example.com');
  await page.getByRole('button', { name: 'Book', exact: true }).click();
  await page.waitForURL(/saved=booked/);
  await page.goBack();
  await page.getByRole('button', { name: 'Book', exact: true }).click();
  await saved('form-resubmitted', 'book by hand, Back and Book again', { fullPage: false });
  await shoot('bookings', '/admin/bookings');
  // the schedule form with several mistakes at once: the summary at the top
  await page.goto(`${server.url}/admin/schedules/new`);
  await page.getByLabel('Name', { exact: true }).fill('   ');
  await page.getByLabel('Monday').fill('12:00-09:00');
  await page.getByLabel('Date exceptions').fill('24.12.2026 closed');
  await page.getByRole('button', { name: 'Create schedule' }).click();
  await page.screenshot({ path: join(out, 'schedule-errors.png'), fullPage: false });
  console.log('docs/screenshots/schedule-errors.png  <- a new schedule with three mistakes');
  await shoot('settings', '/admin/settings');
  // another time zone: asked first, with how many upcoming appointments move in local time
  await page.getByLabel('Time zone').selectOption('Europe/London');
  await page.getByRole('button', { name: 'Save general settings' }).click();
  await saved('settings-zone-confirm', 'a new time zone, before saving', { fullPage: false });
  await page.getByRole('link', { name: 'Back, change nothing' }).click();
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
  const officeNotice = await page
    .locator('tr', { hasText: 'booking_cancellation_notification' })
    .first()
    .locator('a')
    .first()
    .getAttribute('href');
  await shoot('mail-office-notice', officeNotice!, { fullPage: false });
  await shoot('mail-discard-confirm', '/admin/mail/discard', { fullPage: false });
  // the SMTP server as fields, then the connection test's answer
  await page.goto(`${server.url}/admin/mail`);
  await page.getByLabel('Host').fill('127.0.0.1');
  await page.getByLabel('Security').selectOption('none');
  await page.getByLabel('Port').fill(String(smtpPort));
  await page.getByLabel('User').fill('office');
  await page.getByLabel('Password').fill('smtp password');
  await page.getByLabel('Sender address').fill('appointments@example.com');
  await page.getByRole('button', { name: 'Test connection' }).click();
  await shootPart('mail-smtp', '#smtp', '#smtp + section', 'SMTP fields and "Test connection" passed');
  await page.getByLabel('Password').fill('smtp password');
  await page.getByRole('button', { name: 'Save sending settings' }).click();
  await page.waitForURL(/saved=smtp/);
  await page.getByLabel('Send to').fill('office@example.com');
  await page.getByRole('button', { name: 'Send a test e-mail' }).click();
  await shootPart('mail-test-send', '#test-send', '#test-send + section', 'a test e-mail accepted by the SMTP server');
  // the outbox once a server is set: sent, and skipped where the moment has passed
  for (let tries = 0; tries < 50; tries++) {
    await page.goto(`${server.url}/admin/mail?state=queued`);
    if ((await page.locator('.table-wrap table tbody tr').count()) === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await shoot('mail-outbox', '/admin/mail#outbox');

  // a staff member of the first schedule, invited by link; and an invitation still open
  await page.goto(`${server.url}/admin/users/invite`);
  await page.getByLabel('E-mail').fill('sam@example.com');
  await page.getByLabel('Role').selectOption('staff');
  await page.getByLabel('Dr. Ada Lovelace').check();
  await saved('users-invite', 'Invite a user, filled in', { fullPage: false });
  await page.getByRole('button', { name: 'Invite', exact: true }).click();
  await page.waitForURL(/users\/invited$/);
  await saved('users-invited', 'the invitation link, shown once', { fullPage: false });
  const link = (await page.locator('#invitation-link').textContent())!;
  const staff = await staffBrowser.context.newPage();
  await staff.setViewportSize({ width: 1280, height: 800 });
  await staff.goto(link);
  await staff.getByLabel('Your name').fill('Sam Staff');
  await staff.getByLabel('Password', { exact: true }).fill('staff secret phrase');
  await staff.getByLabel('Repeat the password').fill('staff secret phrase');
  await staff.screenshot({ path: join(out, 'invitation.png') });
  console.log('docs/screenshots/invitation.png  <- the invited user chooses a name and password');
  await staff.getByRole('button', { name: 'Create account' }).click();
  await staff.waitForURL(/\/admin\/bookings/);
  // staff: their schedule's bookings only, and a menu without the administrators' pages
  await staff.screenshot({ path: join(out, 'staff-bookings.png'), fullPage: true });
  console.log("docs/screenshots/staff-bookings.png  <- a staff member's Bookings page and menu");
  await staff.goto(`${server.url}/admin/settings`);
  await staff.screenshot({ path: join(out, 'staff-refused.png') });
  console.log("docs/screenshots/staff-refused.png  <- staff opening an administrators' page");
  await page.goto(`${server.url}/admin/users/invite`);
  await page.getByLabel('E-mail').fill('lee@example.com');
  await page.getByLabel('Role').selectOption('staff');
  await page.getByLabel('Meeting room').check();
  await page.getByRole('button', { name: 'Invite', exact: true }).click();
  await page.waitForURL(/users\/invited$/);
  await shoot('users', '/admin/users');
  const samPage = await page
    .getByRole('row', { name: /sam@example.com/ })
    .getByRole('link', { name: 'Change' })
    .getAttribute('href');
  await shoot('users-change', samPage!, { fullPage: false });
  await shoot('activity', '/admin/activity');
  await shoot('bookings-phone', '/admin/bookings', { width: 390 });
  await phoneOverflow('bookings-phone');
  await shoot('book-phone', `/admin/schedules/1/book?reason=1&day=${days[1]}`, { width: 390 });
  await phoneOverflow('book-phone');
} finally {
  await staffBrowser.close();
  await browser.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
