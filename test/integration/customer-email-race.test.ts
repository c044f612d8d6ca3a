// Issue 11: two admins giving two customers the same e-mail address at the same moment. Both edits check
// that no other customer has it before either commits (PostgreSQL, read committed), so the unique index
// refuses the second update: that must be the same clash the check gives ("another customer (number N)
// has the e-mail address …", a form error in the admin area), never a 500. Two connections, as two
// processes or instances would have; SQLite's write lock orders them, so there it is the check that answers.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachDatabase } from '../support/databases.js';
import { testInstallation, type TestInstallation } from '../support/installation.js';
import { connect, type Db } from '../../src/db/connect.js';
import { editCustomer } from '../../src/app/admin-customers.js';
import { saveCustomer } from '../../src/db/repos/customer.repository.js';
import { InvalidInput } from '../../src/core/errors.js';

const NOW = Date.UTC(2026, 5, 1, 6, 0);
const ROUNDS = 25;

describeEachDatabase('two admins set the same customer e-mail at once', (dialect) => {
  let inst: TestInstallation;
  let second: Db;
  before(async () => {
    inst = await testInstallation(dialect, { now: NOW });
    second = connect(inst.url);
  });
  after(async () => {
    await second.close();
    await inst.close();
  });

  const newCustomer = async (name: string) =>
    (await inst.db.write((trx) => saveCustomer(trx, { email: null, firstName: name, lastName: '', phone: '' }, NOW))).id;
  const edit = (email: string) => ({ firstName: 'Ada', lastName: '', email, phone: '', notes: '' });

  test('each round: exactly one edit saves, the other gets the clash naming the winner; no other error', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const a = await newCustomer(`a${round}`);
      const b = await newCustomer(`b${round}`);
      const email = `Shared${round}@Example.com`;
      const results = await Promise.allSettled([
        editCustomer(inst.db, a, edit(email), NOW),
        editCustomer(second, b, edit(email.toLowerCase()), NOW),
      ]);
      const saved = results.flatMap((r, i) => (r.status === 'fulfilled' ? [[a, b][i]!] : []));
      assert.equal(saved.length, 1, `round ${round}: ${JSON.stringify(results)}`);
      const [winner] = saved;
      const loser = results.findIndex((r) => r.status === 'rejected');
      const error = (results[loser] as PromiseRejectedResult).reason as unknown;
      assert.ok(error instanceof InvalidInput, `round ${round}: ${String(error)}`);
      assert.equal(error.path, 'email');
      assert.equal(error.reason, `another customer (number ${winner}) has the e-mail address ${loser === 0 ? email : email.toLowerCase()}`);
      const rows = await inst.db.kysely.selectFrom('customers').select(['id', 'email']).where('id', 'in', [a, b]).orderBy('id').execute();
      assert.deepEqual(
        rows.map((r) => r.email !== null),
        [a, b].map((id) => id === winner),
        'only the winner has the address',
      );
    }
  });
});
