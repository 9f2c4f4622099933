import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { openStore, parseStoreUrl } from '../../src/store/openStore.js';
import { tempDir } from '../helpers/fixtures.js';
import { storeConformance } from './conformance.js';

storeConformance('sqlite', async () => {
  const t = tempDir();
  const path = join(t.dir, 'sub', 'store.db');
  const url = `sqlite:${path}`;
  const store = await openStore(url);
  return {
    store,
    openAnother: () => openStore(url),
    // The file and its write-ahead log, byte for byte (latin1 keeps every byte as one character).
    rawKeyText: async () =>
      ['', '-wal', '-shm'].map((ext) => (existsSync(path + ext) ? readFileSync(path + ext).toString('latin1') : '')).join('\n'),
    cleanup: async () => {
      await store.close();
      t.cleanup();
    },
  };
});

test('store URLs: sqlite:PATH, bare path, postgres', () => {
  assert.deepEqual(parseStoreUrl('sqlite:./data/x.db'), { kind: 'sqlite', path: './data/x.db' });
  assert.deepEqual(parseStoreUrl('/tmp/x.db'), { kind: 'sqlite', path: '/tmp/x.db' });
  assert.equal(parseStoreUrl('postgres://u@h/db').kind, 'postgres');
  assert.equal(parseStoreUrl('postgresql://u@h/db').kind, 'postgres');
  assert.throws(() => parseStoreUrl('sqlite:'), /names no file/);
});

test('the SQLite file is in WAL mode with the schema version of the last migration', async () => {
  const t = tempDir();
  try {
    const path = join(t.dir, 'a.db');
    const store = await openStore(path);
    await store.close();
    assert.ok(existsSync(path));
    const db = new Database(path, { readonly: true });
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    assert.equal(db.pragma('user_version', { simple: true }), MIGRATIONS.length);
    db.close();
    // Reopening applies nothing twice and keeps the data.
    const again = await openStore(path);
    await again.upsertFarms([{ farmId: 'X', lat: 1, lon: 2, name: 'x', extra: [] }]);
    await again.close();
    const third = await openStore(path);
    assert.equal(await third.countFarms(), 1);
    await third.close();
  } finally {
    t.cleanup();
  }
});

test('a store written by a newer schema version is refused', async () => {
  const t = tempDir();
  try {
    const path = join(t.dir, 'new.db');
    const db = new Database(path);
    db.pragma(`user_version = ${MIGRATIONS.length + 1}`);
    db.close();
    await assert.rejects(openStore(path), /newer than this forecastd/);
  } finally {
    t.cleanup();
  }
});
