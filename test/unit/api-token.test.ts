// The API token check (src/app/api-token.ts): only the hash is stored; once a token has been accepted it is
// compared with itself instead of being hashed again (issue 13), and that must change no answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hashToken, newToken, tokenMatches } from '../../src/app/api-token.js';

test('the token whose hash is stored is accepted, on its first request and on every later one', () => {
  const token = newToken();
  const stored = hashToken(token);
  for (let i = 0; i < 3; i++) assert.equal(tokenMatches(token, stored), true, `request ${i + 1}`);
});

test('any other token is refused, before and after the right one was accepted', () => {
  const token = newToken();
  const stored = hashToken(token);
  const other = newToken();
  // the same length and prefix, one character off at the end
  const almost = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
  const refused = [
    other,
    almost,
    token.slice(0, -1),
    `${token}x`,
    '',
    token.toLowerCase() === token ? token.toUpperCase() : token.toLowerCase(),
  ];
  for (const presented of refused) assert.equal(tokenMatches(presented, stored), false, `before: ${JSON.stringify(presented)}`);
  assert.equal(tokenMatches(token, stored), true);
  for (const presented of refused) assert.equal(tokenMatches(presented, stored), false, `after: ${JSON.stringify(presented)}`);
  assert.equal(tokenMatches(token, stored), true, 'still accepted after the refusals');
});

test('a new token replaces the old one at once, also after the old one was accepted', () => {
  const old = newToken();
  assert.equal(tokenMatches(old, hashToken(old)), true);
  const fresh = newToken();
  const stored = hashToken(fresh);
  assert.equal(tokenMatches(old, stored), false, 'the old token, accepted a moment ago');
  assert.equal(tokenMatches(fresh, stored), true);
  assert.equal(tokenMatches(old, stored), false, 'the old token, after the new one was accepted');
  // and back: a stored hash that is the old one's again accepts the old token, not the new one
  assert.equal(tokenMatches(fresh, hashToken(old)), false);
  assert.equal(tokenMatches(old, hashToken(old)), true);
});

test('no stored hash (no token generated yet) accepts nothing', () => {
  const token = newToken();
  assert.equal(tokenMatches(token, hashToken(token)), true);
  assert.equal(tokenMatches(token, ''), false);
});
