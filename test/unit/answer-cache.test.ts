// The per-process cache of /days and /slots answers (src/app/answer-cache.ts): what it answers and how
// much it holds, and how it shares one computation among the requests that miss at once.
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

test('an answer computed at a later bookings version serves a request that read an earlier one', () => {
  const cache = new AnswerCache<string[]>(100, (v) => v.length);
  cache.set('a', 3, 7, 1_000, 2_000, ['x']);
  assert.deepEqual(cache.get('a', 3, 6, 1_500), ['x'], 'it holds every change the request must see');
  cache.set('a', 3, 6, 1_100, 2_000, ['older']);
  assert.deepEqual(cache.get('a', 3, 7, 1_500), ['x'], 'a late computation at an earlier version does not replace it');
});

/** A computation the test finishes by hand, counting how often it was started. */
function controlled() {
  const started: { previous: unknown; finish: (value: string[]) => void; fail: (error: Error) => void }[] = [];
  const compute = (previous: unknown) =>
    new Promise<{ value: string[]; validUntil: number }>((resolve, reject) =>
      started.push({ previous, finish: (value) => resolve({ value, validUntil: 10_000 }), fail: reject }),
    );
  return { started, compute };
}

test('one computation per answer: requests of the same or an earlier version wait for it', async () => {
  const cache = new AnswerCache<string[]>(100, (v) => v.length);
  const { started, compute } = controlled();
  const first = cache.obtain('a', 1, 5, 0, compute);
  const same = cache.obtain('a', 1, 5, 1, compute);
  const earlier = cache.obtain('a', 1, 4, 1, compute);
  assert.equal(started.length, 1);
  // a request that read a later bookings version must not take the running one's answer: it starts its own
  const later = cache.obtain('a', 1, 6, 1, compute);
  // another configuration neither
  const otherConfig = cache.obtain('a', 2, 5, 1, compute);
  assert.equal(started.length, 3);
  started[0]!.finish(['at 5']);
  started[1]!.finish(['at 6']);
  started[2]!.finish(['config 2']);
  assert.deepEqual(await Promise.all([first, same, earlier, later, otherConfig]), [['at 5'], ['at 5'], ['at 5'], ['at 6'], ['config 2']]);
  assert.deepEqual(await cache.obtain('a', 2, 5, 2, compute), ['config 2'], 'kept');
  assert.equal(started.length, 3);
});

test('a computation gets the answer held under the same config version, to update; a failed one is not kept', async () => {
  const cache = new AnswerCache<string[]>(100, (v) => v.length);
  const { started, compute } = controlled();
  cache.set('a', 1, 5, 0, 10_000, ['at 5']);
  const updated = cache.obtain('a', 1, 6, 1, compute);
  assert.equal((started[0]!.previous as { bookingsVersion: number }).bookingsVersion, 5);
  started[0]!.fail(new Error('database unavailable'));
  await assert.rejects(updated, /database unavailable/);
  const again = cache.obtain('a', 1, 6, 2, compute);
  assert.equal(started.length, 2, 'the failure is not shared with later requests');
  started[1]!.finish(['at 6']);
  assert.deepEqual(await again, ['at 6']);
  const otherConfig = cache.obtain('a', 2, 6, 3, compute);
  assert.equal(started[2]!.previous, undefined, 'an answer of another configuration is no base to update');
  started[2]!.finish(['config 2']);
  await otherConfig;
});
