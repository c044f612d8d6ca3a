// Invitations to the admin area (issue 11) beyond inviting and accepting (admin-users.test.ts): one open link
// per address (a new invitation replaces the open one), two links for one address accepted at the same moment
// give one account and a message (never a unique-violation error), an administrator withdraws an open
// invitation from the Users page, and a user's open invitations go when they are removed or demoted.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, testInstallation, type TestInstallation } from '../support/installation.js';
import { signedInAdmin } from '../support/admin-http.js';
import { acceptInvitation, changeUser, inviteUser, InvitationGone, openInvitation, removeUser } from '../../src/app/admin-users.js';
import { InvalidInput } from '../../src/core/errors.js';
import { insertAdminUser, insertInvitation } from '../../src/db/repos/admin-user.repository.js';
import type { Actor } from '../../src/app/audit.js';

const NOW = Date.UTC(2026, 5, 1, 6, 0);
const ACCEPT = { name: 'Twice', password: 'a long enough password', repeat: 'a long enough password' };

describeEachDatabase('admin invitations: one link per address, withdrawing', (dialect) => {
  let inst: TestInstallation;
  let base: string;
  before(async () => {
    inst = await testInstallation(dialect, {
      now: NOW,
      schedules: [{ name: 'Desk', weekly_hours: ALL_WEEK([['09:00', '12:00']]), reasons: [{ name: 'Visit', duration_minutes: 60 }] }],
    });
    await inst.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(inst.app.server.address() as AddressInfo).port}`;
  });
  after(() => inst.close());

  const administrator = async (email: string): Promise<Actor & { kind: 'admin' }> => {
    const adminId = await inst.db.write((trx) =>
      insertAdminUser(trx, { email, name: email, passwordHash: 'not used', role: 'administrator', scheduleIds: [] }, NOW),
    );
    return { kind: 'admin', adminId, label: email };
  };
  const invite = (email: string, by: Actor = { kind: 'cli' }) =>
    inviteUser(inst.db, { email, role: 'administrator', scheduleIds: [] }, by, NOW);
  const isOpen = async (token: string) => (await openInvitation(inst.db, token, NOW)) !== null;
  const unexpectedOf = (round: number, results: PromiseSettledResult<string>[]) =>
    results.flatMap((r) =>
      r.status === 'rejected' && !(r.reason instanceof InvalidInput) && !(r.reason instanceof InvitationGone)
        ? [`round ${round}: ${String(r.reason)}`]
        : [],
    );

  test('two invitations for one address accepted at once: one account, the other acceptance refused with a message', async () => {
    const unexpected: string[] = [];
    for (let round = 0; round < 10; round++) {
      const email = `twice${round}@example.com`;
      const a = await invite(email);
      const b = await invite(email);
      assert.equal(await isOpen(a.token), false, 'the second invitation replaces the open one');
      const results = await Promise.allSettled([
        acceptInvitation(inst.db, a.token, ACCEPT, NOW),
        acceptInvitation(inst.db, b.token, ACCEPT, NOW),
      ]);
      unexpected.push(...unexpectedOf(round, results));
    }
    assert.deepEqual(unexpected, []);
  });

  test('two open links for one address (issued before replacing was the rule) accepted at once: the unique index is a message', async () => {
    const unexpected: string[] = [];
    let accounts = 0;
    for (let round = 0; round < 20; round++) {
      const email = `earlier${round}@example.com`;
      const tokens = [randomBytes(32).toString('base64url'), randomBytes(32).toString('base64url')];
      await inst.db.write(async (trx) => {
        for (const token of tokens) {
          const tokenHash = createHash('sha256').update(token).digest('base64url');
          await insertInvitation(trx, { tokenHash, email, role: 'staff', scheduleIds: [], invitedBy: null }, NOW, NOW + 86_400_000);
        }
      });
      const results = await Promise.allSettled(tokens.map((token) => acceptInvitation(inst.db, token, ACCEPT, NOW)));
      unexpected.push(...unexpectedOf(round, results));
      accounts += results.filter((r) => r.status === 'fulfilled').length;
    }
    assert.deepEqual(unexpected, []);
    assert.equal(accounts, 20, 'one account per address');
  });

  test('an administrator withdraws an open invitation on the Users page: its link stops working', async () => {
    const admin = await signedInAdmin(base);
    const kept = await invite('kept@example.com');
    const withdrawn = await invite('withdrawn@example.com');
    const listed = await (await admin.get('/admin/users')).text();
    const action = new RegExp(`withdrawn@example\\.com[^<]*<form method="post" action="(/admin/users/invitations/\\d+/withdraw)"`).exec(
      listed,
    )?.[1];
    assert.ok(action, listed);
    const res = await admin.post(action, {}, '/admin/users');
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), '/admin/users?saved=withdrawn');
    assert.equal(await isOpen(withdrawn.token), false);
    assert.equal(await isOpen(kept.token), true, 'only that invitation');
    const after = await (await admin.get('/admin/users?saved=withdrawn')).text();
    assert.match(after, /Invitation withdrawn/);
    assert.doesNotMatch(after, /withdrawn@example\.com \(/);
    assert.equal((await fetch(`${base}${withdrawn.path}`)).status, 404, 'the link is gone');
    // a second submission (Back, a double click) ends the same way
    assert.equal((await admin.post(action, {}, '/admin/users')).status, 303);
    const activity = await (await admin.get('/admin/activity')).text();
    assert.match(activity, /Withdrew an invitation/);
  });

  test("a removed administrator's open invitations are withdrawn, a demoted one's too; others' stay", async () => {
    const removed = await administrator('leaving@example.com');
    const demoted = await administrator('demoted@example.com');
    const other = await administrator('staying@example.com');
    const byRemoved = await invite('invited-by-leaving@example.com', removed);
    const byDemoted = await invite('invited-by-demoted@example.com', demoted);
    const byOther = await invite('invited-by-staying@example.com', other);
    await removeUser(inst.db, removed.adminId, other, NOW);
    assert.equal(await isOpen(byRemoved.token), false, 'the removed administrator’s invitation still works');
    await changeUser(inst.db, demoted.adminId, { role: 'staff', scheduleIds: [inst.schedules[0]!.id] }, other, NOW);
    assert.equal(await isOpen(byDemoted.token), false, 'the demoted administrator’s invitation still works');
    assert.equal(await isOpen(byOther.token), true);
  });
});
