// Reviewer's reproduction (wip/review): two open invitations for one e-mail address (inviting does not look
// at open invitations), accepted at the same moment: the second should get the "already has an account"
// answer (InvalidInput) or InvitationGone, never an unexpected error (a 500 in the admin area).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachDatabase } from '../support/databases.js';
import { testInstallation, type TestInstallation } from '../support/installation.js';
import { acceptInvitation, inviteUser, InvitationGone } from '../../src/app/admin-users.js';
import { InvalidInput } from '../../src/core/errors.js';

const NOW = Date.UTC(2026, 5, 1, 6, 0);

describeEachDatabase('review: two invitations for one address accepted at once', (dialect) => {
  let inst: TestInstallation;
  before(async () => {
    inst = await testInstallation(dialect, { now: NOW });
  });
  after(() => inst.close());

  test('one account, and the other acceptance is refused with a message', async () => {
    const unexpected: string[] = [];
    for (let round = 0; round < 10; round++) {
      const email = `twice${round}@example.com`;
      const a = await inviteUser(inst.db, { email, role: 'administrator', scheduleIds: [] }, { kind: 'cli' }, NOW);
      const b = await inviteUser(inst.db, { email, role: 'administrator', scheduleIds: [] }, { kind: 'cli' }, NOW);
      const input = { name: 'Twice', password: 'a long enough password', repeat: 'a long enough password' };
      const results = await Promise.allSettled([
        acceptInvitation(inst.db, a.token, input, NOW),
        acceptInvitation(inst.db, b.token, input, NOW),
      ]);
      for (const r of results)
        if (r.status === 'rejected' && !(r.reason instanceof InvalidInput) && !(r.reason instanceof InvitationGone))
          unexpected.push(`round ${round}: ${String(r.reason)}`);
    }
    assert.deepEqual(unexpected, []);
  });
});
