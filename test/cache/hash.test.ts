import assert from 'node:assert/strict';
import { test } from 'node:test';
import { finishHash, fnv1a, mixInt } from '../../src/cache/hash.js';

test('fnv1a is the published 32-bit FNV-1a', () => {
  assert.equal(fnv1a(''), 0x811c9dc5);
  assert.equal(fnv1a('a'), 0xe40c292c);
  assert.equal(fnv1a('foobar'), 0xbf9cf968);
});

test('keys made of small numbers hash apart: no collision among 200,000 page windows, bits evenly used', () => {
  // What entity tags are made of: a run's hash, page, size, the window's records and the set of fields.
  const seen = new Set<number>();
  const ones = new Array<number>(32).fill(0);
  const base = fnv1a('S00042|36.09|100.19|2026112000|7');
  for (let from = 0; from < 1000; from++) {
    for (let len = 1; len <= 200; len++) {
      const h = finishHash(mixInt(mixInt(mixInt(mixInt(base, 1), 48), from), from + len));
      seen.add(h);
      for (let b = 0; b < 32; b++) ones[b]! += (h >>> b) & 1;
    }
  }
  // 200,000 random 32-bit values would collide about 5 times.
  assert.ok(seen.size >= 200_000 - 20, `${200_000 - seen.size} collisions`);
  for (const n of ones) assert.ok(Math.abs(n / 200_000 - 0.5) < 0.01, `a bit set in ${n} of 200,000`);
});

test('the order of the mixed values matters', () => {
  assert.notEqual(finishHash(mixInt(mixInt(0, 1), 2)), finishHash(mixInt(mixInt(0, 2), 1)));
});
