import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { readRunCsv } from '../../src/ingest/runCsv.js';
import { planForecast } from '../../src/query/forecastQuery.js';
import { EVERY_SITE } from '../../src/query/scope.js';
import { formatIssue, HOUR_MS } from '../../src/domain/time.js';
import { DiskRing } from '../../src/cache/diskRing.js';
import { ReadModel, RUN_ADMISSION, type RunMeta } from '../../src/query/readModel.js';
import { openStore } from '../../src/store/openStore.js';
import { runKey, type Store } from '../../src/store/store.js';
import { DEFAULT_RULES, runCsv, seed, testStore } from '../helpers/fixtures.js';

let store: Store;
let url: string;
let cleanup: () => Promise<void>;

async function publish(target: Store, farmId: string, issue: string, steps: number[]): Promise<void> {
  const run = readRunCsv(`${farmId}_${issue}.csv`, Buffer.from(runCsv(issue, { steps })));
  await target.putRun({ farmId, issue, series: run.series });
}

before(async () => {
  ({ store, url, cleanup } = await testStore());
  await seed(store, [{ farmId: 'WF_A', issue: '2026112000' }]);
});
after(() => cleanup());

test('farms, latest issue and runs come from memory once read', async () => {
  const m = new ReadModel(store, 1 << 20);
  await m.sync();
  assert.equal((await m.getFarm('WF_A'))?.lat, 40.5);
  assert.equal(await m.latestIssue('WF_A'), '2026112000');
  const a = await m.getRun('WF_A', '2026112000');
  const b = await m.getRun('WF_A', '2026112000');
  assert.equal(a, b, 'the same cached object');
  assert.equal(m.stats().runs, 1);
  assert.deepEqual((await m.farmsInBox({ latMin: 40, latMax: 41, lonMin: 95, lonMax: 96 })).map((f) => f.farmId), ['WF_A']);
});

test('a commit through the same store object is seen by the next sync at once', async () => {
  const m = new ReadModel(store, 1 << 20);
  await m.sync();
  const before = await m.getRun('WF_A', '2026112000');
  assert.equal(await m.latestIssue('PV_B'), undefined);
  await publish(store, 'WF_A', '2026112000', [0, 1]);
  await publish(store, 'PV_B', '2026112012', [0]);
  await m.sync();
  const now = await m.getRun('WF_A', '2026112000');
  assert.ok(now!.revision > before!.revision);
  assert.equal(now!.view.length, 2);
  assert.equal(await m.latestIssue('PV_B'), '2026112012');
  assert.ok(m.revision >= now!.revision);
});

test('current: false before the first sync, after a commit through the store and once the poll interval has passed', async () => {
  const m = new ReadModel(store, 1 << 20);
  assert.equal(m.current, false, 'never synced');
  // Current right after a sync, for changePollMs (10 ms on SQLite, so a slow sync may already be stale; on
  // PostgreSQL the commit's NOTIFY comes back a moment later and marks the model stale once more).
  const syncedNow = async (): Promise<void> => {
    for (let attempt = 0; attempt < 20; attempt++) {
      await m.sync();
      if (m.current) return;
      await sleep(2);
    }
    assert.fail('not current right after any of 20 syncs');
  };
  await syncedNow();
  await publish(store, 'WF_A', '2026112000', [0, 1, 2]);
  assert.equal(m.current, false, 'a commit through this store object');
  await syncedNow();
  await sleep(store.changePollMs + 1);
  assert.equal(m.current, false, 'other processes may have committed since the last check');
});

test('over a warmed read model a forecast is planned at once; a run not yet read is a promise', async () => {
  const m = new ReadModel(store, 1 << 20);
  await m.sync();
  const params = { farmId: 'WF_A', issue: '2026112000', elements: ['t2m'] };
  const cold = planForecast(m, DEFAULT_RULES, params, EVERY_SITE);
  assert.ok(cold instanceof Promise, 'the first plan reads the run from the store');
  const planned = await cold;
  const warm = planForecast(m, DEFAULT_RULES, params, EVERY_SITE);
  assert.ok(!(warm instanceof Promise), 'the run is cached: no promise');
  assert.equal(warm.run.revision, planned.run.revision);
  assert.deepEqual([warm.from, warm.to], [planned.from, planned.to]);
  // Planning errors are thrown at once too.
  assert.throws(() => planForecast(m, DEFAULT_RULES, { farmId: 'NOPE' }, EVERY_SITE), /not a registered site/);
});

test('a commit by another connection is seen once the poll interval has passed', async () => {
  const m = new ReadModel(store, 1 << 20);
  await m.sync();
  const rev = m.revision;
  const other = await openStore(url);
  try {
    await publish(other, 'WF_C', '2026112100', [0, 4]);
    await other.upsertFarms([{ farmId: 'NEW1', lat: 1, lon: 2, name: 'n', extra: [] }]);
  } finally {
    await other.close();
  }
  await sleep(store.changePollMs + 1);
  await m.sync();
  assert.ok(m.revision > rev);
  assert.equal(await m.latestIssue('WF_C'), '2026112100');
  assert.ok(await m.getFarm('NEW1'));
});

/**
 * Runs read through a cache with room for two: each must read back exactly. With `sameTurn`, the store
 * answers without an I/O wait (a SQLite store in memory), so each round runs in one turn of the event loop
 * and every run handed out in it must still be intact at its end. (A store file is read on a thread, and
 * PostgreSQL over a socket: runs handed out before such a wait may be reused, as getRun's contract says.)
 */
async function smallCacheRounds(target: Store, sameTurn: boolean): Promise<void> {
  const issues = ['2026120100', '2026120112', '2026120200', '2026120212', '2026120300', '2026120312'];
  for (const issue of issues) await publish(target, 'WF_A', issue, [0, 1, 2, 5, 96, 97, 500, 1440]);
  const direct = new Map<string, string>();
  for (const issue of issues) direct.set(issue, JSON.stringify((await target.getRun('WF_A', issue))!.view.toSeries()));
  const footprint = (await target.getRun('WF_A', issues[0]!))!.view.footprint;
  const m = new ReadModel(target, Math.floor(2.5 * footprint)); // room for two runs
  await m.sync();
  for (let round = 0; round < 4; round++) {
    const held = [];
    for (const issue of issues) {
      const run = (await m.getRun('WF_A', issue))!;
      assert.equal(JSON.stringify(run.view.toSeries()), direct.get(issue), `${issue}, round ${round}`);
      held.push({ issue, run });
    }
    if (sameTurn) {
      for (const { issue, run } of held) assert.equal(JSON.stringify(run.view.toSeries()), direct.get(issue), `${issue} held, round ${round}`);
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  const { runs, runBytes } = m.stats();
  assert.ok(runs >= 1 && runs <= 2 && runBytes <= 2.5 * footprint, `${runs} runs in ${runBytes} bytes`);
}

test('a cache smaller than the runs read keeps answering each run exactly', async () => {
  await smallCacheRounds(store, false);
});

test('runs handed out in one turn stay intact to its end, while a cache smaller than them takes in others', async () => {
  const memory = await openStore('sqlite::memory:');
  try {
    await seed(memory, [{ farmId: 'WF_A', issue: '2026112000' }]);
    await smallCacheRounds(memory, true);
  } finally {
    await memory.close();
  }
});

test(`once the run cache is full, one run read in ${RUN_ADMISSION} is kept; the others are served and let go`, async () => {
  const farms = ['WF_A', 'PV_B', 'WF_C'];
  // Enough runs for the first kept once the cache is full and two more: issues twice a day from 2026-06-01.
  const perFarm = Math.ceil((RUN_ADMISSION + 6) / farms.length);
  const issues = Array.from({ length: perFarm }, (_, k) => formatIssue(Date.UTC(2026, 5, 1) + k * 12 * HOUR_MS));
  // The same values in every run: blobs of one size, so that the cache holds exactly three.
  for (const f of farms) {
    for (const i of issues) {
      const run = readRunCsv(`${f}_${i}.csv`, Buffer.from(runCsv(i, { value: (step, e) => ((step * 7 + e) % 100) / 10 })));
      await store.putRun({ farmId: f, issue: i, series: run.series });
    }
  }
  const probe = new ReadModel(store, 1 << 24);
  await probe.sync();
  const footprint = (await probe.getRun('WF_A', issues[0]!))!.view.footprint;
  for (const f of farms) for (const i of issues) assert.equal((await probe.getRun(f, i))!.view.footprint, footprint);
  // Room for three runs.
  const m = new ReadModel(store, 3 * footprint + 64);
  await m.sync();
  const keys = farms.flatMap((f) => issues.map((i) => [f, i] as const));
  for (const [f, i] of keys) {
    assert.equal((await m.getRun(f, i))?.issue, i, 'served whether kept or not');
    await new Promise((r) => setImmediate(r));
  }
  assert.equal(m.runLookups.misses, keys.length);
  // Runs 0-2 filled the cache and run 3 was the first to evict (run 0); of runs 4 ..., one in RUN_ADMISSION is
  // kept: run 3 + RUN_ADMISSION, in place of run 1.
  const kept = 3 + RUN_ADMISSION;
  for (const n of [2, 3, kept]) assert.ok(await m.getRun(...keys[n]!), `run ${n}`);
  assert.equal(m.runLookups.hits, 3, `runs 2, 3 and ${kept} are in memory`);
  for (const n of [4, kept - 1, kept + 1]) await m.getRun(...keys[n]!);
  assert.equal(m.runLookups.misses, keys.length + 3, 'the runs just before and after it are not');
  assert.ok(m.stats().runBytes <= 3 * footprint + 64);
});

test("a site's stamp moves when its record or one of its runs changes, and with nothing else; no site's stamp is the revision", async () => {
  const own = await openStore('sqlite::memory:');
  try {
    await seed(own, [
      { farmId: 'WF_A', issue: '2026112000' },
      { farmId: 'PV_B', issue: '2026112000' },
    ]);
    const m = new ReadModel(own, 1 << 20);
    await m.sync();
    const a0 = m.stampOf('WF_A');
    const b0 = m.stampOf('PV_B');
    assert.equal(m.stampOf(undefined), m.revision);
    await publish(own, 'PV_B', '2026112012', [0, 1, 2]);
    await m.sync();
    assert.equal(m.stampOf('WF_A'), a0, 'a run of another site');
    assert.notEqual(m.stampOf('PV_B'), b0);
    assert.equal(m.stampOf(undefined), m.revision);
    const b1 = m.stampOf('PV_B');
    const farm = m.getFarm('WF_A')!;
    await own.upsertFarms([{ ...farm, name: 'renamed' }]);
    await m.sync();
    assert.notEqual(m.stampOf('WF_A'), a0, 'its own record');
    assert.equal(m.stampOf('PV_B'), b1);
    const a1 = m.stampOf('WF_A');
    await publish(own, 'WF_A', '2026112012', [0, 1, 2]);
    await m.sync();
    assert.notEqual(m.stampOf('WF_A'), a1, 'a run of its own');
    assert.equal(m.stampOf('PV_B'), b1);
  } finally {
    await own.close();
  }
});

describe('with copies of runs on local disk', () => {
  /** A model keeping no run in memory, so that every run asked again comes from its copy on disk, if any. */
  async function diskModel(target: Store, dir: string): Promise<{ m: ReadModel; disk: DiskRing<RunMeta> }> {
    const disk = new DiskRing<RunMeta>({ dir, capacityBytes: 1 << 20, slowReadMs: Infinity });
    const m = new ReadModel(target, 0, disk);
    await m.sync();
    return { m, disk };
  }

  test('a run read once is read again from its copy, value for value, without the store', async () => {
    const { store: own, dir, cleanup: done } = await testStore();
    try {
      await seed(own, [{ farmId: 'WF_A', issue: '2026112000' }]);
      await publish(own, 'WF_A', '2026112012', [0, 1, 2, 5, 96, 97, 500, 1440]);
      const { m, disk } = await diskModel(own, dir);
      try {
        const first = await m.getRun('WF_A', '2026112012');
        const expected = JSON.stringify(first!.view.toSeries());
        await disk.settled();
        assert.equal(disk.size, 1);
        const again = m.getRun('WF_A', '2026112012');
        assert.ok(!(again instanceof Promise), 'answered at once, without waiting for the store');
        assert.equal(JSON.stringify(again!.view.toSeries()), expected);
        assert.equal(again!.revision, first!.revision);
        assert.equal(again!.publishedAt, first!.publishedAt);
        assert.equal(disk.counts.syncReads, 1);
        assert.equal(await m.getRun('WF_A', '2026112100'), undefined, 'a run that does not exist is asked of the store');
      } finally {
        await m.close();
      }
    } finally {
      await done();
    }
  });

  test("a replaced run's copy is never served once the replacement is committed", async () => {
    const { store: own, dir, cleanup: done } = await testStore();
    try {
      await seed(own, [{ farmId: 'WF_A', issue: '2026112000' }]);
      await publish(own, 'WF_A', '2026112012', [0, 1]);
      const { m, disk } = await diskModel(own, dir);
      try {
        const old = await m.getRun('WF_A', '2026112012');
        await disk.settled();
        assert.equal(disk.size, 1);
        await publish(own, 'WF_A', '2026112012', [0, 1, 2]);
        await m.sync();
        assert.equal(disk.size, 0, 'the copy is forgotten as the change is seen');
        const now = await m.getRun('WF_A', '2026112012');
        assert.equal(now!.view.length, 3);
        assert.ok(now!.revision > old!.revision);
        await disk.settled();
        const again = m.getRun('WF_A', '2026112012');
        assert.ok(!(again instanceof Promise));
        assert.equal(again!.view.length, 3, 'the copy taken of the replacement');
      } finally {
        await m.close();
      }
    } finally {
      await done();
    }
  });
});

describe('runs held for a bulk download (heldRun)', () => {
  const into = (length: number): Uint8Array => new Uint8Array(length);

  test('gives the run in the asked revision from memory or its copy on disk, into the caller\'s bytes, moving neither cache', async () => {
    const { store: own, dir, cleanup: done } = await testStore();
    try {
      await seed(own, [{ farmId: 'WF_A', issue: '2026112000' }]);
      await publish(own, 'WF_A', '2026112012', [0, 1, 2, 5, 96, 97, 500, 1440]);
      const stored = (await own.getRun('WF_A', '2026112012'))!;
      const expected = JSON.stringify(stored.view.toSeries());
      // In memory.
      const mem = new ReadModel(own, 1 << 20);
      await mem.sync();
      assert.equal(mem.heldRun('WF_A', '2026112012', stored.revision, into), undefined, 'not held before anything read it');
      await mem.getRun('WF_A', '2026112012');
      const lookups = { ...mem.runLookups };
      const fromMemory = mem.heldRun('WF_A', '2026112012', stored.revision, into)!;
      assert.equal(JSON.stringify(fromMemory.view.toSeries()), expected);
      assert.deepEqual([fromMemory.revision, fromMemory.publishedAt], [stored.revision, stored.publishedAt]);
      assert.notEqual(fromMemory.view, (await mem.getRun('WF_A', '2026112012'))!.view, 'a view of its own bytes');
      assert.equal(mem.heldRun('WF_A', '2026112012', stored.revision + 1, into), undefined, 'another revision is not held');
      assert.deepEqual(mem.runLookups, { hits: lookups.hits + 1, misses: lookups.misses }, 'only the getRun above counted');
      // On disk (no memory for runs).
      const disk = new DiskRing<RunMeta>({ dir, capacityBytes: 1 << 20, slowReadMs: Infinity });
      const m = new ReadModel(own, 0, disk);
      await m.sync();
      try {
        assert.equal(m.heldRun('WF_A', '2026112012', stored.revision, into), undefined);
        await m.getRun('WF_A', '2026112012');
        await disk.settled();
        const fromDisk = m.heldRun('WF_A', '2026112012', stored.revision, into)!;
        assert.equal(JSON.stringify(fromDisk.view.toSeries()), expected);
        assert.deepEqual([fromDisk.revision, fromDisk.publishedAt], [stored.revision, stored.publishedAt]);
        assert.equal(m.heldRun('WF_A', '2026112012', stored.revision - 1, into), undefined, 'another revision is not held');
        assert.equal(m.heldRun('WF_A', '2026112000', stored.revision, into), undefined, 'a run never read is not held');
        assert.equal(m.stats().runs, 0, 'nothing was kept in memory');
        assert.equal(disk.size, 1, 'nothing was added on disk');
      } finally {
        await m.close();
      }
    } finally {
      await done();
    }
  });

  test('a damaged copy on disk is not held, and is forgotten as getRun forgets one', async () => {
    const { store: own, dir, cleanup: done } = await testStore();
    try {
      await seed(own, [{ farmId: 'WF_A', issue: '2026112000' }]);
      await publish(own, 'WF_A', '2026112012', [0, 1, 2]);
      const stored = (await own.getRun('WF_A', '2026112012'))!;
      const disk = new DiskRing<RunMeta>({ dir, capacityBytes: 1 << 20, slowReadMs: Infinity });
      const m = new ReadModel(own, 0, disk);
      await m.sync();
      try {
        disk.putNow(runKey('WF_A', '2026112012'), Uint8Array.of(99, 1, 2, 3), { revision: stored.revision, publishedAt: stored.publishedAt });
        assert.equal(disk.size, 1);
        assert.equal(m.heldRun('WF_A', '2026112012', stored.revision, into), undefined);
        assert.equal(disk.size, 0, 'the damaged copy is forgotten');
        assert.equal(JSON.stringify((await m.getRun('WF_A', '2026112012'))!.view.toSeries()), JSON.stringify(stored.view.toSeries()), 'the store is read');
      } finally {
        await m.close();
      }
    } finally {
      await done();
    }
  });
});
