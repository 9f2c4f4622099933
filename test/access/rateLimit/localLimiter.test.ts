import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Decision } from '../../../src/access/rateLimit/decision.js';
import { limitHeader, policyHeader } from '../../../src/access/rateLimit/headers.js';
import { localLimiter } from '../../../src/access/rateLimit/localLimiter.js';

const T0 = 1_800_000_000_000;
const copy = (d: Decision): Decision => ({ ...d });

test('a full bucket lets B requests through, remaining counts down, reset grows; the B+1th is refused', () => {
  const l = localLimiter();
  const seen = Array.from({ length: 11 }, () => copy(l.take('key', 'k1', 1, 10, T0)));
  assert.deepEqual(
    seen.map((d) => d.allowed),
    [...Array(10).fill(true), false],
  );
  assert.deepEqual(
    seen.map((d) => d.remaining),
    [9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0],
  );
  assert.deepEqual(
    seen.map((d) => d.resetS),
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10],
  );
  assert.deepEqual(
    seen.map((d) => d.retryAfterS),
    [...Array(10).fill(0), 1],
  );
  assert.equal(limitHeader(seen[0]!), '"default";r=9;t=1');
  assert.equal(limitHeader(seen[10]!), '"default";r=0;t=10');
  assert.equal(policyHeader(10, 1), '"default";q=10;w=10');
});

test('a refused request costs nothing; after Retry-After one request passes, and only one', () => {
  const l = localLimiter();
  for (let i = 0; i < 5; i++) l.take('key', 'k', 2, 5, T0);
  for (let i = 0; i < 20; i++) assert.equal(l.take('key', 'k', 2, 5, T0 + 10).allowed, false);
  const refused = copy(l.take('key', 'k', 2, 5, T0 + 100));
  assert.equal(refused.retryAfterS, 1);
  assert.equal(l.take('key', 'k', 2, 5, T0 + 499).allowed, false);
  const d = copy(l.take('key', 'k', 2, 5, T0 + 500));
  assert.equal(d.allowed, true);
  assert.equal(d.remaining, 0);
  assert.equal(d.resetS, 3); // 5 tokens at 2/s
  assert.equal(l.take('key', 'k', 2, 5, T0 + 500).allowed, false);
});

test('fractional rates: 0.5/s gives Retry-After 2, and the token is there exactly then', () => {
  const l = localLimiter();
  for (let i = 0; i < 3; i++) assert.equal(l.take('key', 'slow', 0.5, 3, T0).allowed, true);
  const d = copy(l.take('key', 'slow', 0.5, 3, T0));
  assert.equal(d.allowed, false);
  assert.equal(d.retryAfterS, 2);
  assert.equal(d.resetS, 6);
  assert.equal(l.take('key', 'slow', 0.5, 3, T0 + 1999).retryAfterS, 1);
  assert.equal(l.take('key', 'slow', 0.5, 3, T0 + 2000).allowed, true);
  // 0.3/s: Retry-After 4 (3.33 s rounded up), and the request passes at 3.334 s, not before.
  for (let i = 0; i < 2; i++) l.take('key', 'odd', 0.3, 2, T0);
  assert.equal(l.take('key', 'odd', 0.3, 2, T0).retryAfterS, 4);
  assert.equal(l.take('key', 'odd', 0.3, 2, T0 + 3333).allowed, false);
  assert.equal(l.take('key', 'odd', 0.3, 2, T0 + 3334).allowed, true);
});

test('refill is continuous and capped at the burst; a clock going back refills nothing', () => {
  const l = localLimiter();
  for (let i = 0; i < 4; i++) l.take('key', 'k', 10, 4, T0);
  assert.equal(l.take('key', 'k', 10, 4, T0 + 250).remaining, 1); // 2.5 tokens back, one taken
  assert.equal(l.take('key', 'k', 10, 4, T0 + 100_000).remaining, 3); // full (4), one taken
  assert.equal(l.take('key', 'k', 10, 4, T0).remaining, 2);
});

test('namespaces and ids are separate buckets; the caller can pass its own decision object', () => {
  const l = localLimiter();
  const out: Decision = { allowed: false, remaining: -1, resetS: -1, retryAfterS: -1 };
  assert.equal(l.take('key', 'a', 1, 1, T0, out), out);
  assert.equal(out.allowed, true);
  assert.equal(l.take('key', 'a', 1, 1, T0).allowed, false);
  assert.equal(l.take('key', 'b', 1, 1, T0).allowed, true);
  assert.equal(l.take('authfail', 'a', 1, 1, T0).allowed, true);
  assert.equal(l.take('anon', 'a', 1, 1, T0).allowed, true);
  const d = l.acquire('anon', 'a', 1, 1, T0);
  assert.ok(!(d instanceof Promise));
  assert.equal(d.allowed, false);
  assert.equal(l.size, 4);
  assert.equal(l.shared, false);
  assert.equal(l.faults, 0);
});

test('a key whose rate or burst changes keeps its level, capped at the new burst', () => {
  const l = localLimiter();
  for (let i = 0; i < 5; i++) l.take('key', 'k', 1, 10, T0);
  assert.equal(l.take('key', 'k', 1, 10, T0).remaining, 4);
  assert.equal(l.take('key', 'k', 1, 3, T0).remaining, 2);
  assert.equal(l.take('key', 'k', 100, 3, T0 + 5).remaining, 1); // half a token back at 100/s
});

test('memory: 200,000 distinct addresses keep the bucket count within the cap', () => {
  const l = localLimiter();
  let max = 0;
  for (let i = 0; i < 200_000; i++) {
    const addr = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    l.take('anon', addr, 5, 100, T0);
    if (l.size > max) max = l.size;
  }
  assert.ok(max <= 100_000, `max ${max}`);
  // An address still being limited is kept while room is made from full buckets.
  const small = localLimiter({ maxBuckets: 1000 });
  for (let i = 0; i < 10; i++) small.take('anon', 'abuser', 1, 10, T0);
  for (let i = 0; i < 5000; i++) small.take('anon', `a${i}`, 1e6, 1, T0 + i * 0.002); // each full again 1 us later
  assert.ok(small.size <= 1000);
  assert.equal(small.take('anon', 'abuser', 1, 10, T0 + 10).allowed, false);
});

test('sweep drops buckets that are full again and keeps the others', () => {
  const l = localLimiter();
  l.take('anon', 'x', 1, 2, T0);
  l.take('anon', 'y', 1, 2, T0);
  l.take('anon', 'y', 1, 2, T0);
  assert.equal(l.sweep(T0 + 1000), 1); // x is full again after 1 s; y needs 2 s
  assert.equal(l.size, 1);
  assert.equal(l.sweep(T0 + 2000), 1);
  assert.equal(l.size, 0);
});
