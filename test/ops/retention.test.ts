/**
 * Retention: exactly the runs past the period are removed, never a site's
 * newest; a dry run removes nothing; caches drop what was removed; the SQLite
 * file shrinks; `forecastd prune` and `serve` do it through the command line.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { retentionCutoff, pruneOld } from '../../src/ops/retention.js';
import { ReadModel } from '../../src/query/readModel.js';
import { openStore } from '../../src/store/openStore.js';
import type { Store } from '../../src/store/store.js';
import { runCli, serve } from '../helpers/cli.js';
import { farmsCsv, runCsv, seed, TEST_STORE_KIND, testDbUrl, testStore } from '../helpers/fixtures.js';

const NOW = Date.UTC(2026, 10, 25, 0, 30); // 2026-11-25T00:30Z
const RUNS = [
  { farmId: 'WF_A', issue: '2026090100' },
  { farmId: 'WF_A', issue: '2026100100' },
  { farmId: 'WF_A', issue: '2026112000' },
  // PV_B's only run is old, but it is its newest: kept.
  { farmId: 'PV_B', issue: '2026090112' },
  { farmId: 'WF_C', issue: '2026102423' },
  { farmId: 'WF_C', issue: '2026102500' },
];

describe('retention', () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  before(async () => {
    const s = await testStore();
    store = s.store;
    cleanup = s.cleanup;
    await seed(store, RUNS.map((r) => ({ ...r, opts: { steps: [0, 1] } })));
  });
  after(async () => cleanup?.());

  test('the cutoff is the hour the period ends in', () => {
    assert.equal(retentionCutoff(NOW, 30), '2026102600');
    assert.equal(retentionCutoff(NOW, 31), '2026102500');
  });

  test('a dry run lists exactly the runs past the period, but each site\'s newest, and removes nothing', async () => {
    const listed = await pruneOld(store, 31, NOW, true);
    assert.deepEqual(listed, [
      { farmId: 'WF_A', issue: '2026090100' },
      { farmId: 'WF_A', issue: '2026100100' },
      { farmId: 'WF_C', issue: '2026102423' },
    ]);
    assert.equal(await store.countRuns(), RUNS.length);
    assert.deepEqual(await pruneOld(store, 0, NOW, true), [], '0 keeps everything');
  });

  test('pruning removes them, caches drop them, and a second prune finds nothing', async () => {
    const model = new ReadModel(store, 1 << 20);
    await model.sync();
    assert.ok(await model.getRun('WF_A', '2026100100'), 'cached before');
    const removed = await pruneOld(store, 31, NOW, false);
    assert.equal(removed.length, 3);
    assert.equal(await store.countRuns(), RUNS.length - 3);
    assert.equal(await store.getRun('WF_A', '2026100100'), undefined);
    assert.ok(await store.getRun('PV_B', '2026090112'), "a site's newest run stays");
    assert.ok(await store.getRun('WF_C', '2026102500'), 'a run inside the period stays');
    await model.sync();
    assert.equal(await model.getRun('WF_A', '2026100100'), undefined, 'the read model dropped it');
    assert.equal(await model.latestIssue('WF_A'), '2026112000');
    assert.deepEqual(await pruneOld(store, 31, NOW, false), []);
  });
});

describe('retention on the SQLite file', { skip: TEST_STORE_KIND === 'postgres' ? 'SQLite only' : undefined }, () => {
  test('the file gives the space back', async () => {
    const s = await testStore();
    try {
      const old = Array.from({ length: 30 }, (_, i) => ({ farmId: 'WF_A', issue: `202609${String(i + 1).padStart(2, '0')}00` }));
      await seed(s.store, [...old, { farmId: 'WF_A', issue: '2026112000' }]);
      const file = s.url.replace(/^sqlite:/, '');
      const size = (): number => statSync(file).size + (statSync(file + '-wal', { throwIfNoEntry: false })?.size ?? 0);
      const before = size();
      assert.equal((await pruneOld(s.store, 30, NOW, false)).length, 30);
      const afterFirst = size();
      assert.ok(afterFirst < before / 4, `${before} -> ${afterFirst} bytes`);
      // Later prunes free pages incrementally.
      await seed(s.store, old.slice(0, 10));
      const grown = size();
      assert.equal((await pruneOld(s.store, 30, NOW, false)).length, 10);
      assert.ok(size() < grown, `${grown} -> ${size()} bytes`);
    } finally {
      await s.cleanup();
    }
  });
});

describe('forecastd prune and serve', () => {
  let db = '';
  let dir = '';
  let drop: () => Promise<void>;
  before(async () => {
    ({ db, dir, drop } = await testDbUrl().then((t) => ({ db: t.url, dir: t.dir, drop: t.drop })));
    writeFileSync(join(dir, 'farms.csv'), farmsCsv());
    assert.equal((await runCli(['farms', 'import', join(dir, 'farms.csv'), '--db', db])).code, 0);
    const files = ['WF_A_2020010100', 'WF_A_2020010200', 'WF_A_2026112000', 'PV_B_2020010100'].map((n) => {
      const path = join(dir, `${n}.csv`);
      writeFileSync(path, runCsv(n.slice(-10), { steps: [0] }));
      return path;
    });
    assert.equal((await runCli(['ingest', ...files, '--db', db])).code, 0);
  });
  after(async () => drop?.());

  test('--dry-run prints what would go; prune removes it', async () => {
    const dry = await runCli(['prune', '--dry-run', '--db', db]);
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(dry.stdout, 'WF_A 2020010100\nWF_A 2020010200\n');
    assert.match(dry.stderr, /would remove 2 runs/);
    const store = await openStore(db);
    try {
      assert.equal(await store.countRuns(), 4);
    } finally {
      await store.close();
    }
    const bad = await runCli(['prune', '--retention-days', '-1', '--db', db]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /retention-days/);
  });

  test('serve prunes at start', async () => {
    const server = await serve(['--db', db, '--workers', '1', '--retention-days', '30']);
    try {
      const store = await openStore(db);
      try {
        const deadline = Date.now() + 5000;
        while ((await store.countRuns()) > 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        assert.equal(await store.countRuns(), 2, 'WF_A 2026112000 and PV_B 2020010100 (its newest) stay');
      } finally {
        await store.close();
      }
      const res = await fetch(`${server.base}/api/v1/forecast?farm_id=WF_A&issue=2020010100`);
      assert.equal(res.status, 404);
    } finally {
      await server.stop();
    }
  });
});
