import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Doorkeeper } from '../../src/cache/doorkeeper.js';

test('admits a key on its second sighting, not its first', () => {
  const d = new Doorkeeper(10);
  assert.equal(d.admit('a'), false);
  assert.equal(d.admit('b'), false);
  assert.equal(d.admit('a'), true);
  assert.equal(d.admit('a'), true);
});

test('forgets first sightings when full, so its memory stays bounded', () => {
  const d = new Doorkeeper(3);
  d.admit('a');
  d.admit('b');
  d.admit('c');
  d.admit('d'); // full: starts afresh with d
  assert.equal(d.admit('a'), false);
  assert.equal(d.admit('d'), true);
});
