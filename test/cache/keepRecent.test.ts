import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keepRecent } from '../../src/cache/keepRecent.js';

test('computes once per key, keeps the last `limit` keys computed, and computes a dropped key again', () => {
  const calls: number[] = [];
  const square = keepRecent(2, (n: number) => (calls.push(n), { n: n * n }));
  const first = square(3);
  assert.equal(square(3), first, 'the same value, not computed again');
  square(4);
  assert.deepEqual(calls, [3, 4]);
  square(5); // drops 3, the oldest computed
  assert.equal(square(4).n, 16);
  assert.equal(square(5).n, 25);
  assert.deepEqual(calls, [3, 4, 5]);
  assert.notEqual(square(3), first, 'computed afresh after it was dropped');
  assert.deepEqual(calls, [3, 4, 5, 3]);
});
