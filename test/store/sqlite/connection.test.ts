import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { emptySeries, type RunSeries } from '../../../src/domain/run.js';
import { openStore } from '../../../src/store/openStore.js';
import {
  RUN_ARRIVALS_AMONG_SQL,
  RUN_ARRIVALS_SQL,
  RUN_VERSIONS_AMONG_SQL,
  RUN_VERSIONS_SQL,
  RUNS_SINCE_SQL,
} from '../../../src/store/sqlite/connection.js';
import { MIGRATIONS } from '../../../src/store/sqlite/migrations.js';
import { tempDir } from '../../helpers/fixtures.js';

/** A run of four records, every value 1. */
function series(): RunSeries {
  const s = emptySeries(4);
  for (let i = 0; i < 4; i++) {
    s.steps[i] = i;
    for (const c of s.columns) c[i] = 1;
  }
  return s;
}

/** The query plan's steps, joined. */
const planOf = (db: Database.Database, sql: string, ...args: unknown[]): string =>
  db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args).map((r) => (r as { detail: string }).detail).join(' | ');

test('the runs written since a revision are found by the revision index alone, each row read only for its key, in revision order', async () => {
  const t = tempDir();
  const path = join(t.dir, 'store.db');
  const store = await openStore(path);
  try {
    await store.upsertFarms(['A', 'B', 'C'].map((id, i) => ({ farmId: id, lat: i, lon: i, name: id, extra: [] })));
    for (const [farmId, issue] of [['A', '2026112000'], ['B', '2026112000'], ['A', '2026112012'], ['C', '2026112000'], ['B', '2026112000']] as const) {
      await store.putRun({ farmId, issue, series: series() });
    }
    const db = new Database(path, { readonly: true });
    try {
      const plan = planOf(db, RUNS_SINCE_SQL, 0);
      assert.match(plan, /COVERING INDEX runs_revision/, plan);
      assert.match(plan, /INTEGER PRIMARY KEY/, plan);
      const naive = db.prepare('SELECT farm_id, issue, revision FROM runs WHERE revision > ? ORDER BY revision');
      const since = db.prepare(RUNS_SINCE_SQL);
      for (const from of [0, 2, 3, 99]) assert.deepEqual(since.all(from), naive.all(from), `since ${from}`);
      // B's replacement is the newest; C's run comes before it.
      assert.deepEqual((since.all(0) as { farm_id: string }[]).map((r) => r.farm_id), ['A', 'A', 'C', 'B']);
    } finally {
      db.close();
    }
  } finally {
    await store.close();
    t.cleanup();
  }
});

/** A store with sites A, B, C: A and B hold both runs, C the first; B's first run replaced. */
async function storeOfRuns(path: string): Promise<void> {
  const store = await openStore(path);
  try {
    await store.upsertFarms(['A', 'B', 'C'].map((id, i) => ({ farmId: id, lat: i, lon: i, name: id, extra: [] })));
    for (const [farmId, issue] of [['B', '2026112000'], ['A', '2026112000'], ['A', '2026112012'], ['C', '2026112000'], ['B', '2026112012'], ['B', '2026112000']] as const) {
      await store.putRun({ farmId, issue, series: series() });
    }
  } finally {
    await store.close();
  }
}

test("runs' versions and arrivals are read from the index by issue alone, never from the rows (whose blobs come first), with the same answers", async () => {
  const t = tempDir();
  const path = join(t.dir, 'store.db');
  try {
    await storeOfRuns(path);
    const db = new Database(path, { readonly: true });
    try {
      const among = JSON.stringify(['B', 'C']);
      const cases: [string, string, unknown[]][] = [
        [RUN_VERSIONS_SQL, 'SELECT farm_id, revision, published_at FROM runs NOT INDEXED WHERE issue = ? ORDER BY farm_id', ['2026112000']],
        [
          RUN_VERSIONS_AMONG_SQL,
          'SELECT farm_id, revision, published_at FROM runs NOT INDEXED WHERE issue = ? AND farm_id IN (SELECT value FROM json_each(?)) ORDER BY farm_id',
          ['2026112000', among],
        ],
        [
          RUN_ARRIVALS_SQL,
          `SELECT issue, count(*) AS farms, min(first_published_at) AS first, max(first_published_at) AS lastFirst, max(published_at) AS last
           FROM runs NOT INDEXED GROUP BY issue ORDER BY issue DESC`,
          [],
        ],
        [
          RUN_ARRIVALS_AMONG_SQL,
          `SELECT issue, count(*) AS farms, min(first_published_at) AS first, max(first_published_at) AS lastFirst, max(published_at) AS last
           FROM runs NOT INDEXED WHERE farm_id IN (SELECT value FROM json_each(?)) GROUP BY issue ORDER BY issue DESC`,
          [among],
        ],
      ];
      for (const [sql, naive, args] of cases) {
        const plan = planOf(db, sql, ...args);
        assert.match(plan, /COVERING INDEX runs_by_issue/, plan);
        assert.doesNotMatch(plan, /TEMP B-TREE FOR ORDER BY/, plan);
        assert.deepEqual(db.prepare(sql).all(...args), db.prepare(naive).all(...args), sql);
      }
      // The answers hold something to compare: B's replaced first run among them.
      assert.equal((db.prepare(RUN_VERSIONS_SQL).all('2026112000') as unknown[]).length, 3);
      assert.deepEqual((db.prepare(RUN_ARRIVALS_AMONG_SQL).all(among) as { farms: number }[]).map((r) => r.farms), [1, 2]);
    } finally {
      db.close();
    }
  } finally {
    t.cleanup();
  }
});

test('a store of the schema before the index by issue gets it when opened, its runs unchanged', async () => {
  const t = tempDir();
  const path = join(t.dir, 'store.db');
  try {
    await storeOfRuns(path);
    const before = new Database(path);
    const versions = before.prepare(RUN_VERSIONS_SQL).all('2026112012');
    // Back to the schema before: the index by issue alone.
    before.exec('DROP INDEX runs_by_issue; CREATE INDEX runs_issue ON runs (issue);');
    before.pragma(`user_version = ${MIGRATIONS.length - 1}`);
    before.close();
    const store = await openStore(path);
    await store.close();
    const db = new Database(path, { readonly: true });
    try {
      assert.equal(db.pragma('user_version', { simple: true }), MIGRATIONS.length);
      const indexes = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'runs'").all() as { name: string }[]).map((r) => r.name);
      assert.ok(indexes.includes('runs_by_issue') && !indexes.includes('runs_issue'), indexes.join(', '));
      assert.deepEqual(db.prepare(RUN_VERSIONS_SQL).all('2026112012'), versions);
    } finally {
      db.close();
    }
  } finally {
    t.cleanup();
  }
});
