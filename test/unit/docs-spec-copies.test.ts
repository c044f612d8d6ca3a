// docs/booking-api.md and docs/decisions.md are the repository's copies of the team's shared spec, which
// wins where they differ. Where the shared spec sits beside the project (as on every developer's machine
// and in CI), a copy that has drifted fails here, so it is corrected rather than silently out of date.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const shared = `${root}../shared/spec`;

/** The copy's text without its leading HTML comment (which says where it comes from). */
const body = (path: string) => readFileSync(path, 'utf8').replace(/^<!--[\s\S]*?-->\n\n/, '');

test(
  'docs/booking-api.md is the shared contract word for word',
  { skip: !existsSync(shared) && 'no ../shared/spec beside the project' },
  () => {
    assert.equal(body(`${root}docs/booking-api.md`), readFileSync(`${shared}/booking-api.md`, 'utf8'));
  },
);

test('docs/decisions.md is the shared decisions document', { skip: !existsSync(shared) && 'no ../shared/spec beside the project' }, () => {
  // one sentence differs on purpose: the shared copy points at a folder beside it that the repository does not have
  const normalise = (text: string) => text.replace(/the (black-box )?conformance suite \([^)]*\)/, 'the conformance suite');
  assert.equal(normalise(body(`${root}docs/decisions.md`)), normalise(readFileSync(`${shared}/decisions.md`, 'utf8')));
});
