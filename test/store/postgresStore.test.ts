import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openStore } from '../../src/store/openStore.js';
import pg from 'pg';
import { freshPgDatabase, pgTestOptions } from '../helpers/pg.js';
import { storeConformance } from './conformance.js';

const options = await pgTestOptions();

storeConformance(
  'postgres',
  async () => {
    const db = await freshPgDatabase();
    const store = await openStore(db.url);
    return {
      store,
      openAnother: () => openStore(db.url),
      // Every column of every key row, as PostgreSQL prints it.
      rawKeyText: async () => {
        const c = new pg.Client({ connectionString: db.url });
        await c.connect();
        try {
          const rows = (await c.query<{ row: string }>('SELECT k::text AS row FROM api_keys k')).rows;
          return rows.map((r) => r.row).join('\n');
        } finally {
          await c.end();
        }
      },
      cleanup: async () => {
        await store.close();
        await db.drop();
      },
    };
  },
  options,
);

test('two processes opening a new database at once apply the migrations once', options, async () => {
  const db = await freshPgDatabase();
  try {
    const stores = await Promise.all([openStore(db.url), openStore(db.url), openStore(db.url)]);
    await stores[0]!.upsertFarms([{ farmId: 'X', lat: 1, lon: 2, name: 'x', extra: [] }]);
    assert.equal(await stores[2]!.countFarms(), 1);
    await Promise.all(stores.map((s) => s.close()));
  } finally {
    await db.drop();
  }
});

test('an unreachable server is refused at open with a clear message', options, async () => {
  await assert.rejects(openStore('postgres://postgres@127.0.0.1:1/none', { connectTimeoutMs: 500 }), /cannot reach PostgreSQL/);
});
