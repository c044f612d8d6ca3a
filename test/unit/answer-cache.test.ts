// The per-process cache of /days and /slots answers (src/app/answer-cache.ts): what it answers and how
// much it holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AnswerCache } from '../../src/app/answer-cache.js';

test('an answer holds only for its config version, bookings version and time span', () => {
  const cache = new AnswerCache<string[]>(100, (v) => v.length);
  cache.set('a', 3, 7, 1_000, 2_000, ['x']);
  assert.deepEqual(cache.get('a', 3, 7, 1_000), ['x']);
  assert.deepEqual(cache.get('a', 3, 7, 1_999), ['x']);
  assert.equal(cache.get('a', 3, 7, 2_000), undefined, 'expired');
  assert.equal(cache.get('a', 3, 7, 999), undefined, 'a clock before the answer was computed');
  assert.equal(cache.get('a', 4, 7, 1_500), undefined, 'configuration changed');
  assert.equal(cache.get('a', 3, 8, 1_500), undefined, 'booked or cancelled');
  assert.equal(cache.get('b', 3, 7, 1_500), undefined);
});

test('it holds at most its weight, dropping the oldest answers first', () => {
  // weight of an answer: 1 + its length
  const cache = new AnswerCache<string[]>(10, (v) => v.length);
  cache.set('a', 1, 1, 0, 10, ['1', '2', '3']); // 4
  cache.set('b', 1, 1, 0, 10, ['1', '2']); // 3, total 7
  cache.set('c', 1, 1, 0, 10, ['1', '2']); // 3, total 10
  assert.ok(cache.get('a', 1, 1, 0) && cache.get('b', 1, 1, 0) && cache.get('c', 1, 1, 0));
  cache.set('d', 1, 1, 0, 10, ['1']); // 2: 'a' goes
  assert.equal(cache.get('a', 1, 1, 0), undefined);
  assert.ok(cache.get('b', 1, 1, 0) && cache.get('c', 1, 1, 0) && cache.get('d', 1, 1, 0));
  cache.set('b', 1, 1, 0, 10, ['1', '2', '3', '4', '5']); // replacing 'b' (6): 'c' goes, b is newest
  assert.equal(cache.get('c', 1, 1, 0), undefined);
  assert.ok(cache.get('b', 1, 1, 0) && cache.get('d', 1, 1, 0));
  cache.set('e', 1, 1, 0, 10, ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11']); // heavier than the whole cache
  assert.deepEqual(cache.get('e', 1, 1, 0)?.length, 11, 'kept alone: an answer is never refused');
  assert.equal(cache.get('b', 1, 1, 0), undefined);
  assert.equal(cache.get('d', 1, 1, 0), undefined);
});
