import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Doorkeeper } from '../../src/cache/doorkeeper.js';
import { fnv1a } from '../../src/cache/hash.js';

test('admits a key on its second sighting, not its first', () => {
  const d = new Doorkeeper(16);
  assert.equal(d.admit('a'), false);
  assert.equal(d.admit('b'), false);
  assert.equal(d.admit('a'), true);
  assert.equal(d.admit('a'), true);
  assert.equal(d.admit('b'), true);
});

test('a first sighting is forgotten once another key takes its slot, so memory stays fixed', () => {
  const d = new Doorkeeper(1);
  assert.equal(d.admit('a'), false);
  assert.equal(d.admit('b'), false); // b takes the only slot
  assert.equal(d.admit('a'), false); // a was forgotten, and now displaces b
  assert.equal(d.admit('b'), false);
  assert.equal(d.admit('b'), true);
});

test('remembers most of as many recent keys as a quarter of its slots', () => {
  const d = new Doorkeeper(4096);
  const keys = Array.from({ length: 1024 }, (_, i) => `json|1|96|site-${i}|2026112200|3|0|96|0.1.2`);
  for (const k of keys) assert.equal(d.admit(k), false);
  const admitted = keys.filter((k) => d.admit(k)).length;
  // Keys sharing a slot with another displace each other: with 1,024 keys over 4,096 slots, about
  // 1 - e^(-1024/4096) = 22 % of them. So about 800 are admitted if the slots are evenly spread.
  assert.ok(admitted > 740, `admitted ${admitted} of 1024`);
  assert.ok(admitted < 1024, 'some keys must have been displaced');
});

test('seenHash tells whether a key would be admitted, without recording a sighting', () => {
  const d = new Doorkeeper(16);
  const a = fnv1a('a');
  assert.equal(d.seenHash(a), false);
  assert.equal(d.seenHash(a), false, 'asking is not a sighting');
  assert.equal(d.admitHash(a), false);
  assert.equal(d.seenHash(a), true);
  assert.equal(d.admitHash(a), true);
  // A key that hashes to 0 is kept as 1, for both.
  assert.equal(d.seenHash(0), false);
  d.admitHash(0);
  assert.equal(d.seenHash(0), true);
  // Displaced, it is not seen any more.
  const one = new Doorkeeper(1);
  one.admitHash(a);
  one.admitHash(fnv1a('b'));
  assert.equal(one.seenHash(a), false);
});
