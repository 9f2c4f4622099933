/**
 * Retention: exactly the runs past the period are removed, never a site's
 * newest; a dry run removes nothing; caches drop what was removed; the SQLite
 * file shrinks; the event log keeps entries for events-keep only (never its
 * newest), the webhook outbox its finished deliveries as long; `forecastd
 * prune` and `serve` do it through the command line.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { retentionCutoff, pruneOld, scheduleRetention } from '../../src/ops/retention.js';
import { ReadModel } from '../../src/query/readModel.js';
import { openStore } from '../../src/store/openStore.js';
import type { Store } from '../../src/store/store.js';
import { importFarms, runCli, serve } from '../helpers/cli.js';
import { runCsv, seed, TEST_STORE_KIND, testDbUrl, testStore } from '../helpers/fixtures.js';

const NOW = Date.UTC(2026, 10, 25, 0, 30); // 2026-11-25T00:30Z
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The ids of these entries that the log still holds. */
async function kept(store: Store, ids: readonly (number | undefined)[]): Promise<number[]> {
  const all = new Set((await store.eventsAfter(0, 100_000)).map((e) => e.id));
  return ids.filter((id): id is number => id !== undefined && all.has(id));
}
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
    const token = await store.changeToken();
    const removed = await pruneOld(store, 31, NOW, false);
    // Like every own commit, at once: a reader syncing now must not wait for word from the database.
    assert.notEqual(await store.changeToken(), token, "the prune moves this handle's change token");
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

  test('with events-keep, the event log loses what is older (never its newest); a dry run and 0 days keep runs', async () => {
    const old = await store.appendTick(NOW - 2 * DAY);
    const recent = await store.appendTick(NOW - 2 * HOUR);
    const newestButOld = await store.appendTick(NOW - 3 * DAY);
    const runs = await store.countRuns();
    assert.deepEqual(await pruneOld(store, 0, NOW, true, DAY), []);
    assert.deepEqual(await kept(store, [old, recent, newestButOld]), [old, recent, newestButOld], 'a dry run removes nothing');
    assert.deepEqual(await pruneOld(store, 0, NOW, false, DAY), []);
    assert.deepEqual(await kept(store, [old, recent, newestButOld]), [recent, newestButOld]);
    assert.equal((await store.eventBounds()).last, newestButOld);
    assert.equal(await store.countRuns(), runs);
    // Without events-keep the log is left alone.
    await store.appendTick(NOW - 5 * DAY);
    const last = await store.appendTick(NOW);
    const before = (await store.eventsAfter(0, 100_000)).length;
    await pruneOld(store, 31, NOW, false);
    assert.equal((await store.eventsAfter(0, 100_000)).length, before);
    assert.equal((await store.eventBounds()).last, last);
  });

  test('with events-keep, the webhook outbox loses its finished deliveries last attempted before then, never a pending one', async () => {
    const w = await store.addWebhook({ name: 'retention', url: 'https://example.com/r', secret: 's', farms: null }, NOW - 3 * DAY);
    try {
      const notice = (msgId: string) => ({ webhookId: w.id, msgId, type: 'issue.complete' as const, issue: '2026112200', body: '{}', createdAt: NOW - 3 * DAY });
      const ids = ['old', 'recent', 'pending'];
      for (const id of ids) await store.enqueueDelivery(notice(id));
      const byMsg = new Map((await store.claimDeliveries(NOW - 3 * DAY, 'p', 60_000, 10)).map((d) => [d.msgId, d.id]));
      await store.finishDelivery(byMsg.get('old')!, { result: 'delivered', detail: '200', at: NOW - 2 * DAY });
      await store.finishDelivery(byMsg.get('recent')!, { result: 'gave-up', detail: '500', at: NOW - HOUR });
      await store.finishDelivery(byMsg.get('pending')!, { result: 'retry', detail: '503', at: NOW - 2 * DAY, nextAttemptAt: NOW });
      /** The notices still in the outbox (enqueueing one that is there is a no-op). */
      const left = async (): Promise<string[]> => {
        const found: string[] = [];
        for (const id of ids) if (!(await store.enqueueDelivery(notice(id)))) found.push(id);
        return found;
      };
      await pruneOld(store, 0, NOW, true, DAY);
      await pruneOld(store, 31, NOW, false);
      assert.deepEqual(await left(), ids, 'a dry run, or no events-keep, removes nothing');
      await pruneOld(store, 0, NOW, false, DAY);
      assert.deepEqual(await left(), ['recent', 'pending']);
    } finally {
      await store.removeWebhook('retention');
    }
  });

  test('scheduled retention prunes the log at start, also when every run is kept', async () => {
    const now = Date.now();
    const old = await store.appendTick(now - 3 * DAY);
    const recent = await store.appendTick(now - HOUR);
    const logged: string[] = [];
    const stop = scheduleRetention(store, { days: 0, eventsKeepMs: DAY }, { info: (_f, m) => logged.push(m), warn: (_f, m) => logged.push(m) });
    await stop();
    assert.deepEqual(await kept(store, [old, recent]), [recent]);
    assert.deepEqual(logged, []);
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
    await importFarms(db, dir);
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

  test('prune removes event log entries older than --events-keep', async () => {
    let store = await openStore(db);
    let old: number | undefined;
    let recent: number | undefined;
    try {
      old = await store.appendTick(Date.now() - 3 * DAY);
      recent = await store.appendTick(Date.now() - HOUR);
    } finally {
      await store.close();
    }
    const dry = await runCli(['prune', '--dry-run', '--retention-days', '0', '--events-keep', '2d', '--db', db]);
    assert.equal(dry.code, 0, dry.stderr);
    store = await openStore(db);
    try {
      assert.deepEqual(await kept(store, [old, recent]), [old, recent], 'a dry run changes nothing');
    } finally {
      await store.close();
    }
    const run = await runCli(['prune', '--retention-days', '0', '--events-keep', '2d', '--db', db]);
    assert.equal(run.code, 0, run.stderr);
    store = await openStore(db);
    try {
      assert.deepEqual(await kept(store, [old, recent]), [recent]);
      const entries = await store.eventsAfter(0, 1000);
      assert.equal(entries.filter((e) => e.kind === 'run').length, 4, 'the ingested runs are recent: their entries stay');
      assert.equal(await store.countRuns(), 4);
    } finally {
      await store.close();
    }
    // Below the day section 14 promises a resuming client.
    for (const short of ['10m', '23h']) {
      const bad = await runCli(['prune', '--events-keep', short, '--db', db]);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /events-keep/);
    }
  });

  test('serve prunes at start', async () => {
    const before = await openStore(db);
    let oldTick: number | undefined;
    try {
      oldTick = await before.appendTick(Date.now() - 2 * DAY);
      await before.appendTick(Date.now() - 2 * HOUR);
    } finally {
      await before.close();
    }
    const server = await serve(['--db', db, '--workers', '1', '--retention-days', '30', '--events-keep', '1d']);
    try {
      const store = await openStore(db);
      try {
        const deadline = Date.now() + 5000;
        while (((await store.countRuns()) > 2 || (await kept(store, [oldTick])).length > 0) && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 50));
        }
        assert.equal(await store.countRuns(), 2, 'WF_A 2026112000 and PV_B 2020010100 (its newest) stay');
        assert.deepEqual(await kept(store, [oldTick]), [], 'the old log entry is gone');
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
