// Several admin users (issue 11) through real HTTP on a real port, on SQLite and PostgreSQL: an administrator
// invites a staff member by a one-time link (shown once, stored only as a hash, usable once, expiring), staff
// see and act on their schedules' bookings and customers only and reach no settings page, the last
// administrator can be neither demoted nor removed, removing a user ends their sessions, and the CLI invites and lists.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, testInstallation, type TestInstallation } from '../support/installation.js';
import { browserClient, signedInAdmin, type AdminClient } from '../support/admin-http.js';
import { cli } from '../support/processes.js';

// Monday 2026-06-01 06:00Z = 08:00 in Berlin
const NOW = Date.UTC(2026, 5, 1, 6, 0);
const DAY = 86_400_000;
const schedule = (name: string) => ({
  name,
  slot_interval_minutes: 60,
  horizon_days: 30,
  weekly_hours: ALL_WEEK([['09:00', '12:00']]),
  reasons: [{ name: 'Visit', duration_minutes: 60 }],
  form: {
    first_name: { label: 'First name', input_type: 'text', required: true },
    email: { label: 'E-mail', input_type: 'email', required: false },
  },
});

describeEachDatabase('admin users: roles, invitations, staff limited to their schedules', (dialect) => {
  let inst: TestInstallation;
  let base: string;
  let admin: AdminClient;
  const booked: { detailsId: string; customerId: number }[] = [];

  const book = async (index: number, slot: string, name: string) => {
    const s = inst.schedules[index]!;
    const res = await inst.api({
      method: 'POST',
      url: '/api/bookings',
      payload: {
        schedule: s.id,
        reason: s.reasons[0]!.id,
        slot,
        submission: { first_name: name, email: `${name.toLowerCase()}@example.com` },
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json<{ booking_details_id: string; user_id: number }>();
    return { detailsId: created.booking_details_id, customerId: created.user_id };
  };

  /** Invites through the Users page; returns the link's path as the page showed it (once). */
  const invite = async (email: string, role: string, scheduleIndexes: number[]) => {
    const fields: Record<string, string> = { email, role };
    for (const i of scheduleIndexes) fields[`schedule.${inst.schedules[i]!.id}`] = 'on';
    const res = await admin.post('/admin/users/invite', fields);
    assert.equal(res.status, 303, await res.text());
    assert.equal(res.headers.get('location'), '/admin/users/invited');
    const shown = await (await admin.get('/admin/users/invited')).text();
    const link = /id="invitation-link">(http:\/\/[^<]+)</.exec(shown)?.[1];
    assert.ok(link, 'the link is shown');
    // once: a reload does not show it again
    assert.match(await (await admin.get('/admin/users/invited')).text(), /already shown/);
    return new URL(link).pathname;
  };

  // a link no longer valid shows no form: the CSRF token then comes from the sign-in page
  const accept = async (path: string, name: string, password: string, formPage = path) => {
    const invitee = browserClient(base);
    const res = await invitee.post(path, { name, password, repeat: password }, formPage);
    return { res, invitee };
  };

  before(async () => {
    inst = await testInstallation(dialect, { now: NOW, schedules: [schedule('North'), schedule('South')] });
    booked.push(await book(0, '2026-06-02 09:00:00', 'Nora'), await book(1, '2026-06-02 10:00:00', 'Sven'));
    await inst.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(inst.app.server.address() as AddressInfo).port}`;
    admin = await signedInAdmin(base);
  });
  after(() => inst.close());

  test('the first admin is an administrator; an invitation link is stored as a hash, works once, signs the new user in', async () => {
    const first = await inst.db.kysely
      .selectFrom('admins')
      .select('role')
      .where('email', '=', 'admin@example.com')
      .executeTakeFirstOrThrow();
    assert.equal(first.role, 'administrator');

    const path = await invite('sam@example.com', 'staff', [0]);
    const token = path.split('/').pop()!;
    const stored = await inst.db.kysely.selectFrom('admin_invitations').select('token_hash').execute();
    assert.deepEqual(
      stored.map((r) => r.token_hash),
      [createHash('sha256').update(token).digest('base64url')],
    );

    const opened = await browserClient(base).get(path);
    assert.equal(opened.status, 200);
    assert.match(await opened.text(), /sam@example\.com/);

    const short = await accept(path, 'Sam Staff', 'short');
    assert.equal(short.res.status, 400, 'a short password is refused, the link still works');
    const { res, invitee } = await accept(path, 'Sam Staff', 'staff password 1');
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), '/admin/bookings');
    assert.match(await (await invitee.get('/admin/bookings')).text(), /Sam Staff|sam@example\.com/);

    // used: neither opening nor submitting it again works
    assert.equal((await browserClient(base).get(path)).status, 404);
    assert.equal((await accept(path, 'Mallory', 'another password', '/admin/signin')).res.status, 404);
    assert.equal(
      Number(
        (
          await inst.db.kysely
            .selectFrom('admins')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
      2,
    );

    const users = await (await admin.get('/admin/users')).text();
    assert.match(users, /sam@example\.com<\/td><td>Sam Staff<\/td><td>staff<\/td>\s*<td>North<\/td>/);
  });

  test('an invitation link submitted twice at the same moment makes one account', async () => {
    const path = await invite('twice@example.com', 'staff', [0]);
    const results = await Promise.all([accept(path, 'First', 'twice password 1'), accept(path, 'Second', 'twice password 2')]);
    assert.deepEqual(results.map((r) => r.res.status).sort(), [303, 404]);
    const rows = await inst.db.kysely.selectFrom('admins').select('name').where('email', '=', 'twice@example.com').execute();
    assert.equal(rows.length, 1);
  });

  test('an invitation link expires after 7 days', async () => {
    const path = await invite('late@example.com', 'staff', [1]);
    const saved = inst.clock.now;
    try {
      inst.clock.now = saved + 7 * DAY + 1;
      assert.equal((await browserClient(base).get(path)).status, 404);
      assert.equal((await accept(path, 'Late', 'late password 1', '/admin/signin')).res.status, 404);
    } finally {
      inst.clock.now = saved;
    }
    assert.equal(
      await inst.db.kysely.selectFrom('admins').select('id').where('email', '=', 'late@example.com').executeTakeFirst(),
      undefined,
    );
  });

  test("staff see their schedule's bookings and customers only, and reach no settings page", async () => {
    const staff = await signedInAdmin(base, 'sam@example.com', 'staff password 1');
    const [north, south] = booked as [(typeof booked)[0], (typeof booked)[0]];
    const list = await (await staff.get('/admin/bookings')).text();
    assert.ok(list.includes(north.detailsId) && !list.includes(south.detailsId), 'the list holds North only');
    assert.ok(!list.includes('href="/admin/settings"') && !list.includes('href="/admin/users"'), 'the menu offers no settings');
    assert.ok(list.includes('href="/admin/customers"'));
    assert.equal((await staff.get(`/admin/bookings/${north.detailsId}`)).status, 200);
    for (const path of [
      `/admin/bookings/${south.detailsId}`,
      `/admin/bookings/${south.detailsId}/edit`,
      `/admin/customers/${south.customerId}`,
    ]) {
      assert.equal((await staff.get(path)).status, 404, path);
    }
    const csv = await (await staff.get('/admin/bookings.csv?when=all')).text();
    assert.ok(csv.includes('Nora') && !csv.includes('Sven'));
    const customers = await (await staff.get('/admin/customers')).text();
    assert.ok(customers.includes('Nora') && !customers.includes('Sven'));
    const calendar = await (await staff.get('/admin/calendar?view=all&date=2026-06-02')).text();
    assert.ok(calendar.includes('North') && !calendar.includes('South'));

    // cancelling another schedule's booking, with a valid form token of the session: refused, nothing changes
    const cancel = await staff.post(`/admin/bookings/${south.detailsId}/cancel`, {}, '/admin/bookings');
    assert.equal(cancel.status, 404);
    const southRow = await inst.db.kysely
      .selectFrom('bookings')
      .select('status')
      .where('details_id', '=', south.detailsId)
      .executeTakeFirstOrThrow();
    assert.equal(southRow.status, 'booked');

    for (const path of [
      '/admin/settings',
      '/admin/schedules',
      `/admin/schedules/${inst.schedules[0]!.id}`,
      '/admin/mail',
      '/admin/webhooks',
      '/admin/closures',
      '/admin/users',
      '/admin/activity',
      '/admin/settings/token',
    ]) {
      const res = await staff.get(path);
      assert.equal(res.status, 403, path);
      assert.match(await res.text(), /for administrators/);
    }
    const settings = await staff.post('/admin/settings/general', { name: 'Taken over' }, '/admin/bookings');
    assert.equal(settings.status, 403);
    assert.equal((await staff.get(`/admin/schedules/${inst.schedules[1]!.id}/book`)).status, 404);
    assert.equal((await staff.get(`/admin/schedules/${inst.schedules[0]!.id}/book`)).status, 200);

    // given South instead, the same session sees South (rights are read on every request)
    const samId = (await inst.db.kysely.selectFrom('admins').select('id').where('email', '=', 'sam@example.com').executeTakeFirstOrThrow())
      .id;
    const changed = await admin.post(`/admin/users/${samId}`, { role: 'staff', [`schedule.${inst.schedules[1]!.id}`]: 'on' });
    assert.equal(changed.status, 303);
    assert.equal((await staff.get(`/admin/bookings/${south.detailsId}`)).status, 200);
    assert.equal((await staff.get(`/admin/bookings/${north.detailsId}`)).status, 404);
    // staff without a schedule: refused
    assert.equal((await admin.post(`/admin/users/${samId}`, { role: 'staff' })).status, 400);
  });

  test('the last administrator can be neither demoted nor removed; removing a user ends their sessions', async () => {
    const adminId = (
      await inst.db.kysely.selectFrom('admins').select('id').where('email', '=', 'admin@example.com').executeTakeFirstOrThrow()
    ).id;
    const demote = await admin.post(`/admin/users/${adminId}`, { role: 'staff', [`schedule.${inst.schedules[0]!.id}`]: 'on' });
    assert.equal(demote.status, 400);
    assert.match(await demote.text(), /last administrator/);
    assert.equal((await admin.post(`/admin/users/${adminId}/remove`, {}, '/admin/users')).status, 400);
    const row = await inst.db.kysely.selectFrom('admins').select('role').where('id', '=', adminId).executeTakeFirstOrThrow();
    assert.equal(row.role, 'administrator');

    const staff = await signedInAdmin(base, 'sam@example.com', 'staff password 1');
    assert.equal((await staff.get('/admin/bookings')).status, 200);
    const samId = (await inst.db.kysely.selectFrom('admins').select('id').where('email', '=', 'sam@example.com').executeTakeFirstOrThrow())
      .id;
    assert.match(await (await admin.get(`/admin/users/${samId}/remove`)).text(), /Confirm removal/);
    assert.equal((await admin.post(`/admin/users/${samId}/remove`, {})).status, 303);
    const after = await staff.get('/admin/bookings');
    assert.equal(after.status, 303);
    assert.equal(after.headers.get('location'), '/admin/signin');
  });

  test('the CLI invites (the link works in the admin area) and lists the users', async () => {
    const invited = await cli(
      inst.url,
      'admin',
      'invite',
      '--email',
      'cli@example.com',
      '--role',
      'staff',
      '--schedules',
      String(inst.schedules[0]!.id),
    );
    assert.equal(invited.code, 0, invited.stderr);
    const path = /(\/admin\/invitation\/[A-Za-z0-9_-]{43})/.exec(invited.stdout)?.[1];
    assert.ok(path, invited.stdout);
    assert.equal((await accept(path, 'Cli User', 'cli password 1')).res.status, 303);
    const listed = await cli(inst.url, 'admin', 'list');
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /\tadmin@example\.com\tadministrator\t\*\t/);
    assert.match(listed.stdout, new RegExp(`\\tcli@example\\.com\\tstaff\\t${inst.schedules[0]!.id}\\tCli User\\t`));
    const bad = await cli(inst.url, 'admin', 'invite', '--email', 'x@example.com', '--role', 'owner');
    assert.equal(bad.code, 2);
  });
});
