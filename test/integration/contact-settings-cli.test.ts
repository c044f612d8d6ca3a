// `bin/booking set installation.phone|address|website` (docs/reminders.md), on SQLite and PostgreSQL: the
// value is stored as given; a bad one exits non-zero with one line and stores nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachDatabase, migratedDatabase } from '../support/databases.js';
import { cli } from '../support/processes.js';
import { loadSettings } from '../../src/db/repos/installation.repository.js';
import type { Db } from '../../src/db/connect.js';

describeEachDatabase('bin/booking set: contact details', (dialect) => {
  let db: Db;
  let url: string;
  let dispose: () => Promise<void>;
  before(async () => {
    const migrated = await migratedDatabase(dialect);
    db = migrated.db;
    url = migrated.target.url;
    dispose = migrated.dispose;
  });
  after(() => dispose());

  test('set stores each contact setting; bad values are refused with one line and change nothing', async () => {
    for (const [key, value] of [
      ['installation.phone', '+49 30 1234567'],
      ['installation.address', 'Hauptstraße 1, 10115 Berlin'],
      ['installation.website', 'https://practice.example'],
    ] as const) {
      const r = await cli(url, 'set', key, value);
      assert.equal(r.code, 0, r.stderr);
    }
    const expected = { phone: '+49 30 1234567', address: 'Hauptstraße 1, 10115 Berlin', website: 'https://practice.example' };
    const stored = async () => {
      const s = await loadSettings(db.kysely);
      return { phone: s.phone, address: s.address, website: s.website };
    };
    assert.deepEqual(await stored(), expected);
    for (const [key, value, reason] of [
      ['installation.website', 'ftp://practice.example', /installation\.website must start with https:\/\/ or http:\/\//],
      ['installation.phone', 'no digits', /installation\.phone must contain a phone number/],
      ['installation.address', 'a\nb', /installation\.address: must be a single line/],
    ] as const) {
      const r = await cli(url, 'set', key, value);
      assert.notEqual(r.code, 0, `${key} ${value}`);
      assert.match(r.stderr, /^booking: [^\n]+\n$/, r.stderr);
      assert.match(r.stderr, reason);
    }
    assert.deepEqual(await stored(), expected, 'nothing changed');
    assert.equal((await cli(url, 'set', 'installation.website', '')).code, 0, 'empty clears');
    assert.equal((await stored()).website, '');
  });
});
