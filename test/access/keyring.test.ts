/**
 * The key table in memory: lookups by key text, live keys only, changes made
 * through another handle seen within the poll, and last use written in
 * batches, not per lookup.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { mintKey } from '../../src/access/keyHash.js';
import { Keyring } from '../../src/access/keyring.js';
import { openStore } from '../../src/store/openStore.js';
import type { Store } from '../../src/store/store.js';
import { eventually, testStore } from '../helpers/fixtures.js';
import { createKey } from '../helpers/keys.js';

let store: Store;
let url = '';
let cleanup: () => Promise<void>;

before(async () => {
  const s = await testStore();
  store = s.store;
  url = s.url;
  cleanup = s.cleanup;
});

after(async () => cleanup?.());

test('finds live keys by their text, with their scope; not unknown, revoked or expired ones', async () => {
  const key = await createKey(store, 'ring-a', { farms: ['WF_A', 'PV_B'], rate: 3, burst: 9 });
  const ring = new Keyring(store, { pollMs: 50 });
  await ring.start();
  try {
    const now = Date.now();
    const k = ring.lookup(key, now)!;
    assert.equal(k.name, 'ring-a');
    assert.equal(k.rate, 3);
    assert.equal(k.burst, 9);
    assert.deepEqual([...k.principal.scope.farms!].sort(), ['PV_B', 'WF_A']);
    assert.equal(k.principal.keyName, 'ring-a');
    assert.equal(ring.lookup(mintKey().key, now), undefined);
    // Texts that are no key, found again from the texts kept: the same key, not a stale one.
    const broken = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    for (const text of [broken, 'fcd_short', key + 'x', key.toUpperCase()]) assert.equal(ring.lookup(text, now), undefined, text);
    assert.equal(ring.lookup(key, now), k);
    assert.ok(ring.hasLiveKeys(now));
    // Revoked through another handle, as another process would.
    const other = await openStore(url);
    try {
      await other.revokeKey('ring-a', Date.now());
    } finally {
      await other.close();
    }
    await eventually(async () => ring.lookup(key, Date.now()), (r) => r === undefined, 2000);
    assert.equal(ring.lookup(key, Date.now()), undefined);
    assert.equal(ring.hasLiveKeys(Date.now()), false);
    // A rolled key works until its grace ends, and not after.
    const rolledFrom = await createKey(store, 'ring-b');
    const next = mintKey();
    const t = Date.now();
    await store.rollKey('ring-b', { hash: next.hash, prefix: next.prefix }, t + 60_000, t);
    await eventually(async () => ring.lookup(next.key, Date.now()), (r) => r !== undefined, 2000);
    assert.ok(ring.lookup(rolledFrom, t + 59_000), 'in its grace');
    assert.equal(ring.lookup(rolledFrom, t + 60_000), undefined, 'past its grace');
    assert.equal(ring.lookup(next.key, t + 60_000)!.bucket, 'ring-b', 'one bucket for the name');
  } finally {
    await ring.close();
  }
});

test('last use is written in one batch per period, with the latest time, not per lookup', async () => {
  const key = await createKey(store, 'ring-use');
  const ring = new Keyring(store, { touchMs: 300 });
  await ring.start();
  try {
    const lastUsed = async (): Promise<number | null> => (await store.listKeys()).find((k) => k.name === 'ring-use')!.lastUsedAt;
    const t0 = Date.now();
    ring.lookup(key, t0);
    ring.lookup(key, t0 + 5);
    assert.equal(await lastUsed(), null, 'nothing written at lookup');
    const written = await eventually(lastUsed, (v) => v !== null, 2000);
    assert.equal(written, t0 + 5, 'the batch holds the latest use');
  } finally {
    await ring.close();
  }
});
