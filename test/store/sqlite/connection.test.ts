import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { emptySeries, type RunSeries } from '../../../src/domain/run.js';
import { openStore } from '../../../src/store/openStore.js';
import { RUNS_SINCE_SQL } from '../../../src/store/sqlite/connection.js';
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
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${RUNS_SINCE_SQL}`).all(0).map((r) => (r as { detail: string }).detail);
      assert.ok(plan.some((d) => /COVERING INDEX runs_revision/.test(d)), plan.join(' | '));
      assert.ok(plan.some((d) => /INTEGER PRIMARY KEY/.test(d)), plan.join(' | '));
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
