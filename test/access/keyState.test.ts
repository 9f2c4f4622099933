import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isLive, keyState } from '../../src/access/keyState.js';

const NOW = 1_800_000_000_000;

test('keyState: active, expiring until its end, expired from it, revoked whatever the end', () => {
  assert.equal(keyState({ expiresAt: null, revokedAt: null }, NOW), 'active');
  assert.equal(keyState({ expiresAt: NOW + 1, revokedAt: null }, NOW), 'expiring');
  assert.equal(keyState({ expiresAt: NOW, revokedAt: null }, NOW), 'expired');
  assert.equal(keyState({ expiresAt: NOW - 1, revokedAt: null }, NOW), 'expired');
  assert.equal(keyState({ expiresAt: null, revokedAt: NOW - 5 }, NOW), 'revoked');
  assert.equal(keyState({ expiresAt: NOW + 1000, revokedAt: NOW - 5 }, NOW), 'revoked');
  assert.equal(keyState({ expiresAt: NOW - 1000, revokedAt: NOW - 5 }, NOW), 'revoked');
});

test('isLive: exactly the active and expiring states', () => {
  for (const expiresAt of [null, NOW - 1, NOW, NOW + 1]) {
    for (const revokedAt of [null, NOW - 1]) {
      const k = { expiresAt, revokedAt };
      assert.equal(isLive(k, NOW), ['active', 'expiring'].includes(keyState(k, NOW)), JSON.stringify(k));
    }
  }
});
