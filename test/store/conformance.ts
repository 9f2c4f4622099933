/**
 * The store conformance suite: the semantics documented in src/store/store.ts,
 * run against every adapter. An adapter's test file calls storeConformance with
 * a factory that opens a fresh, empty store (and can open a second handle on it).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ELEMENT_COUNT } from '../../src/domain/elements.js';
import { emptySeries, type RunSeries } from '../../src/domain/run.js';
import { UnknownFarmError, type EncodedRun, type Farm, type RunKey, type Store } from '../../src/store/store.js';

export interface StoreHarness {
  /** The store under test, fresh and empty. */
  readonly store: Store;
  /** Opens another handle on the same store (another connection or process view). */
  openAnother(): Promise<Store>;
  cleanup(): Promise<void>;
}

const farm = (farmId: string, lat: number, lon: number, extra: [string, string][] = []): Farm => ({
  farmId,
  lat,
  lon,
  name: `Site ${farmId}`,
  extra,
});

function series(steps: number[], seed: number): RunSeries {
  const s = emptySeries(steps.length);
  steps.forEach((k, i) => {
    s.steps[i] = k;
    for (let e = 0; e < ELEMENT_COUNT; e++) s.columns[e]![i] = (i + seed) % 7 === 0 ? NaN : seed * 1000 + k + e / 100 - 50;
  });
  return s;
}

function assertSameSeries(actual: RunSeries, expected: RunSeries): void {
  assert.deepEqual([...actual.steps], [...expected.steps]);
  for (let e = 0; e < ELEMENT_COUNT; e++) {
    const a = [...actual.columns[e]!];
    const x = [...expected.columns[e]!];
    assert.equal(a.length, x.length);
    a.forEach((v, i) => assert.ok(Object.is(v, x[i]), `column ${e} record ${i}: ${v} != ${x[i]}`));
  }
}

export function storeConformance(adapter: string, open: () => Promise<StoreHarness>, options: { skip?: string } = {}): void {
  describe(`store conformance: ${adapter}`, options, () => {
    let h: StoreHarness;
    let store: Store;
    before(async () => {
      h = await open();
      store = h.store;
    });
    after(async () => h.cleanup());

    test('starts empty and answers ping', async () => {
      await store.ping();
      assert.equal(await store.countFarms(), 0);
      assert.deepEqual(await store.listIssues(undefined, 0, 10), { total: 0, items: [] });
    });

    test('upsertFarms inserts, then updates by farm_id, keeping extra columns in order', async () => {
      await store.upsertFarms([farm('B2', 40, 100, [['kind', 'wind'], ['2024', 'x']]), farm('A1', 30.5, 90.25)]);
      assert.equal(await store.countFarms(), 2);
      await store.upsertFarms([{ ...farm('B2', 41, 101, [['zeta', '1'], ['alpha', '2']]), name: 'Renamed' }]);
      const b = await store.getFarm('B2');
      assert.deepEqual(b, { farmId: 'B2', lat: 41, lon: 101, name: 'Renamed', extra: [['zeta', '1'], ['alpha', '2']] });
      assert.equal(await store.getFarm('nope'), undefined);
    });

    test('listFarms pages in farm_id order with the total over all pages', async () => {
      await store.upsertFarms([farm('C3', 35, 95), farm('D4', 36, 96)]);
      const all = await store.listFarms(0, 100);
      assert.equal(all.total, 4);
      assert.deepEqual(all.items.map((f) => f.farmId), ['A1', 'B2', 'C3', 'D4']);
      const p2 = await store.listFarms(2, 1);
      assert.equal(p2.total, 4);
      assert.deepEqual(p2.items.map((f) => f.farmId), ['C3']);
      assert.deepEqual((await store.listFarms(10, 5)).items, []);
    });

    test('farmsInBox includes the edges and nothing outside', async () => {
      const inBox = await store.farmsInBox({ latMin: 30.5, latMax: 36, lonMin: 90.25, lonMax: 96 });
      assert.deepEqual(inBox.map((f) => f.farmId), ['A1', 'C3', 'D4']);
      assert.deepEqual(await store.farmsInBox({ latMin: 0, latMax: 1, lonMin: 0, lonMax: 1 }), []);
    });

    test('a batch of farms with a bad row changes nothing', async () => {
      const bad = { ...farm('E5', 1, 1), lat: null as unknown as number };
      await assert.rejects(store.upsertFarms([farm('E0', 2, 2), bad]));
      assert.equal(await store.getFarm('E0'), undefined);
      assert.equal(await store.countFarms(), 4);
    });

    test('putRun refuses an unregistered farm and stores nothing', async () => {
      await assert.rejects(store.putRun({ farmId: 'ZZ', issue: '2026112000', series: series([0, 1], 1) }), UnknownFarmError);
      // An id that reads like a connection failure is still an unknown farm, not an unreachable store.
      await assert.rejects(store.putRun({ farmId: 'timeout_terminated', issue: '2026112000', series: series([0, 1], 1) }), UnknownFarmError);
      assert.equal(await store.getRun('ZZ', '2026112000'), undefined);
      assert.equal((await store.listIssues(undefined, 0, 10)).total, 0);
    });

    test('putRun publishes a whole series that reads back exactly, with increasing revisions', async () => {
      const s1 = series([0, 1, 2, 4, 1440], 1);
      const before = Date.now();
      const p1 = await store.putRun({ farmId: 'A1', issue: '2026112000', series: s1 });
      const p2 = await store.putRun({ farmId: 'B2', issue: '2026112000', series: series([0], 2) });
      assert.ok(p2.revision > p1.revision);
      assert.ok(p1.publishedAt >= before - 1000 && p1.publishedAt <= Date.now() + 1000);
      const got = await store.getRun('A1', '2026112000');
      assert.ok(got);
      assert.equal(got.revision, p1.revision);
      assert.equal(got.publishedAt, p1.publishedAt);
      assertSameSeries(got.view.toSeries(), s1);
      assert.equal(await store.getRun('A1', '2026112012'), undefined);
    });

    test('putRun again replaces the run with a new revision', async () => {
      const old = await store.getRun('A1', '2026112000');
      const s2 = series([0, 3], 9);
      const p = await store.putRun({ farmId: 'A1', issue: '2026112000', series: s2 });
      assert.ok(p.revision > old!.revision);
      const got = await store.getRun('A1', '2026112000');
      assertSameSeries(got!.view.toSeries(), s2);
    });

    test('latestIssue and listIssues: newest first, farms counted per run, filter by farm', async () => {
      await store.putRun({ farmId: 'A1', issue: '2026112012', series: series([0], 3) });
      await store.putRun({ farmId: 'C3', issue: '2026111912', series: series([0], 4) });
      assert.equal(await store.latestIssue('A1'), '2026112012');
      assert.equal(await store.latestIssue('C3'), '2026111912');
      assert.equal(await store.latestIssue('D4'), undefined);
      const all = await store.listIssues(undefined, 0, 10);
      assert.deepEqual(all, {
        total: 3,
        items: [
          { issue: '2026112012', farms: 1 },
          { issue: '2026112000', farms: 2 },
          { issue: '2026111912', farms: 1 },
        ],
      });
      assert.deepEqual(await store.listIssues(undefined, 1, 1), { total: 3, items: [{ issue: '2026112000', farms: 2 }] });
      assert.deepEqual(await store.listIssues('B2', 0, 10), { total: 1, items: [{ issue: '2026112000', farms: 2 }] });
      assert.deepEqual(await store.listIssues('D4', 0, 10), { total: 0, items: [] });
    });

    test('another handle on the same store sees committed publications at once', async () => {
      const other = await h.openAnother();
      try {
        const s = series([0, 1, 2], 5);
        const p = await other.putRun({ farmId: 'D4', issue: '2026112100', series: s });
        const got = await store.getRun('D4', '2026112100');
        assert.equal(got?.revision, p.revision);
        assertSameSeries(got!.view.toSeries(), s);
        await other.upsertFarms([farm('F6', 1, 2)]);
        assert.ok(await store.getFarm('F6'));
      } finally {
        await other.close();
      }
    });

    test('changeToken moves at once on own commits, within changePollMs on another handle\'s, and not on reads', async () => {
      /** Another process's commit may reach this handle a moment later (e.g. by NOTIFY): wait for it, up to the bound. */
      const movesFrom = async (before: string): Promise<string> => {
        const deadline = Date.now() + store.changePollMs + 1000;
        for (;;) {
          const t = await store.changeToken();
          if (t !== before || Date.now() > deadline) return t;
          await new Promise((r) => setTimeout(r, 5));
        }
      };
      const other = await h.openAnother();
      try {
        const t0 = await store.changeToken();
        await store.getRun('A1', '2026112000');
        await store.listFarms(0, 10);
        assert.equal(await store.changeToken(), t0);
        await store.putRun({ farmId: 'A1', issue: '2026112300', series: series([0], 11) });
        const t1 = await store.changeToken();
        assert.notEqual(t1, t0, 'own commit: at once');
        await other.putRun({ farmId: 'B2', issue: '2026112300', series: series([0], 12) });
        const t2 = await movesFrom(t1);
        assert.notEqual(t2, t1, "another handle's run");
        await other.upsertFarms([farm('G7', 3, 4)]);
        assert.notEqual(await movesFrom(t2), t2, "another handle's farms");
      } finally {
        await other.close();
      }
    });

    test('snapshot and changesSince report exactly what was written after a revision', async () => {
      const snap = await store.snapshot();
      assert.equal(snap.farms.length, await store.countFarms());
      assert.deepEqual(snap.farms.map((f) => f.farmId), [...snap.farms.map((f) => f.farmId)].sort());
      assert.deepEqual(await store.changesSince(snap.revision), { revision: snap.revision, farms: [], runs: [] });
      const p1 = await store.putRun({ farmId: 'C3', issue: '2026112400', series: series([0], 13) });
      await store.upsertFarms([farm('H8', 5, 6), { ...farm('A1', 30.5, 90.25), name: 'Again' }]);
      const p2 = await store.putRun({ farmId: 'C3', issue: '2026112400', series: series([0, 1], 14) });
      const ch = await store.changesSince(snap.revision);
      assert.equal(ch.revision, p2.revision);
      assert.deepEqual(ch.farms.map((f) => [f.farmId, f.name]), [['A1', 'Again'], ['H8', 'Site H8']]);
      assert.deepEqual(ch.runs, [{ farmId: 'C3', issue: '2026112400', revision: p2.revision }]);
      assert.ok(p1.revision < p2.revision);
      const later = await store.changesSince(p2.revision);
      assert.deepEqual(later, { revision: p2.revision, farms: [], runs: [] });
    });

    test('two publications of one run at once leave exactly one complete version; readers see whole versions', async () => {
      const other = await h.openAnother();
      try {
        const versions = [series([0, 1, 2, 3], 21), series([0, 1, 2, 3, 4, 5], 22), series([5, 9], 23)];
        const same = (x: RunSeries, y: RunSeries): boolean => {
          try {
            assertSameSeries(x, y);
            return true;
          } catch {
            return false;
          }
        };
        // One version exists before the race, so every read must find a whole one.
        await store.putRun({ farmId: 'B2', issue: '2026112500', series: versions[2]! });
        const reads: Promise<void>[] = [];
        const writes: Promise<unknown>[] = [];
        for (let i = 0; i < 12; i++) {
          const target = i % 2 === 0 ? store : other;
          writes.push(target.putRun({ farmId: 'B2', issue: '2026112500', series: versions[i % 3]! }));
          reads.push(
            store.getRun('B2', '2026112500').then((r) => {
              assert.ok(r, 'the run is there throughout');
              assert.ok(versions.some((v) => same(r.view.toSeries(), v)), 'a whole version');
            }),
          );
        }
        await Promise.all([...writes, ...reads]);
        const final = await store.getRun('B2', '2026112500');
        assert.ok(versions.some((v) => same(final!.view.toSeries(), v)));
        assert.equal((await store.listIssues('B2', 0, 100)).items.filter((i) => i.issue === '2026112500').length, 1);
      } finally {
        await other.close();
      }
    });

    test('exportRuns pages through every run in byte order; importRun copies a blob exactly, keeping its time', async () => {
      const total = await store.countRuns();
      const seen: EncodedRun[] = [];
      let after: RunKey | undefined;
      for (;;) {
        const page = await store.exportRuns(after, 3);
        if (page.length === 0) break;
        seen.push(...page);
        after = page[page.length - 1];
      }
      assert.equal(seen.length, total);
      const keys = seen.map((r) => `${r.farmId}\u0000${r.issue}`);
      assert.deepEqual(keys, [...keys].sort((a, b) => (Buffer.compare(Buffer.from(a), Buffer.from(b)))));
      const src = seen[0]!;
      const before = await store.getRun(src.farmId, src.issue);
      assert.equal(src.revision, before!.revision);
      const copy = await store.importRun({ farmId: src.farmId, issue: '2026112600', blob: src.blob, publishedAt: 1234567890123 });
      const back = await store.exportRuns({ farmId: src.farmId, issue: '2026112599' }, 1);
      assert.equal(back[0]!.issue, '2026112600');
      assert.ok(Buffer.from(back[0]!.blob).equals(Buffer.from(src.blob)));
      assert.equal(back[0]!.publishedAt, 1234567890123);
      assert.equal(back[0]!.revision, copy.revision);
      await assert.rejects(store.importRun({ farmId: 'nope', issue: '2026112600', blob: src.blob, publishedAt: 1 }), UnknownFarmError);
      await assert.rejects(store.importRun({ farmId: src.farmId, issue: '2026112601', blob: new Uint8Array([9, 9]), publishedAt: 1 }));
      assert.equal(await store.getRun(src.farmId, '2026112601'), undefined);
    });

    test('revisions stay increasing across handles', async () => {
      const other = await h.openAnother();
      try {
        const a = await store.putRun({ farmId: 'A1', issue: '2026112200', series: series([0], 6) });
        const b = await other.putRun({ farmId: 'A1', issue: '2026112200', series: series([0], 7) });
        const c = await store.putRun({ farmId: 'B2', issue: '2026112200', series: series([0], 8) });
        assert.ok(a.revision < b.revision && b.revision < c.revision);
      } finally {
        await other.close();
      }
    });

    test('columns that no decimal scale holds (7 decimals, -0, huge, tiny) read back bit-exact, next to scaled ones', async () => {
      await store.upsertFarms([farm('RAW1', 10, 10)]);
      const steps = Array.from({ length: 200 }, (_, i) => i * 3);
      const raws = [0.1234567, -0, 1.7976931348623157e308, 5e-324, -1 / 3, 2 ** 60 + 1];
      const s = emptySeries(steps.length);
      steps.forEach((k, i) => {
        s.steps[i] = k;
        for (let e = 0; e < ELEMENT_COUNT; e++) {
          s.columns[e]![i] = e % 3 === 0 ? raws[(i + e) % raws.length]! * (1 + i) : e % 3 === 1 ? Number((i / 8 - e).toFixed(2)) : i % 5 === 0 ? NaN : i;
        }
      });
      await store.putRun({ farmId: 'RAW1', issue: '2026112300', series: s });
      const got = await store.getRun('RAW1', '2026112300');
      assertSameSeries(got!.view.toSeries(), s);
    });
  });
}
