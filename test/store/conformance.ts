/**
 * The store conformance suite: the semantics documented in src/store/store.ts,
 * run against every adapter. An adapter's test file calls storeConformance with
 * a factory that opens a fresh, empty store (and can open a second handle on it).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { encodeSeries } from '../../src/domain/codec.js';
import { ELEMENT_COUNT } from '../../src/domain/elements.js';
import { emptySeries, type RunSeries } from '../../src/domain/run.js';
import { hashKey, mintKey } from '../../src/access/keyHash.js';
import { keyState } from '../../src/access/keyState.js';
import {
  ClaimRecordedError,
  KeyNameTakenError,
  UnknownFarmError,
  WebhookNameTakenError,
  type EncodedRun,
  type Farm,
  type FileRecord,
  type NewKey,
  type RunKey,
  type Store,
} from '../../src/store/store.js';

export interface StoreHarness {
  /** The store under test, fresh and empty. */
  readonly store: Store;
  /** Opens another handle on the same store (another connection or process view). */
  openAnother(): Promise<Store>;
  /** Everything the store holds of API keys as raw text (a file's bytes, or the rows as text). */
  rawKeyText(): Promise<string>;
  cleanup(): Promise<void>;
}

/** Another process's commit may reach a handle a moment later (e.g. by NOTIFY): waits for its token to move, up to the bound. */
async function tokenMovesFrom(store: Store, before: string): Promise<string> {
  const deadline = Date.now() + store.changePollMs + 1000;
  for (;;) {
    const t = await store.changeToken();
    if (t !== before || Date.now() > deadline) return t;
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The token once earlier commits have all been heard of (a NOTIFY may arrive a moment after its commit). */
async function quietToken(store: Store): Promise<string> {
  for (let t = await store.changeToken(); ; ) {
    await new Promise((r) => setTimeout(r, 50));
    const again = await store.changeToken();
    if (again === t) return t;
    t = again;
  }
}

/** A fixed clock for key tests: the store takes `now` from its caller. */
const T = 1_800_000_000_000;
const DAY = 86_400_000;

/** A new key (its text, kept by the test only) and what the store is told of it. */
function newKey(name: string, attrs: Partial<Omit<NewKey, 'name' | 'hash' | 'prefix'>> = {}): { key: string; spec: NewKey } {
  const m = mintKey();
  return { key: m.key, spec: { name, hash: m.hash, prefix: m.prefix, farms: null, rate: null, burst: null, admin: false, ...attrs } };
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
      // Returns at once and may be asked again; reads work after it as before.
      store.prepareReads();
      store.prepareReads();
      await store.ping();
      assert.equal(await store.countFarms(), 0);
      assert.deepEqual(await store.listIssues(undefined, 0, 10), { total: 0, items: [] });
      assert.deepEqual(await store.listKeys(), []);
      assert.deepEqual((await store.keysSince(0)).keys, []);
      assert.deepEqual(await store.runVersions('2026112000'), []);
      assert.deepEqual(await store.runVersions('2026112000', ['A1']), []);
    });

    test('upsertFarms inserts, then updates by farm_id, keeping extra columns in order', async () => {
      await store.upsertFarms([farm('B2', 40, 100, [['kind', 'wind'], ['2024', 'x']]), farm('A1', 30.5, 90.25)]);
      assert.equal(await store.countFarms(), 2);
      const first = (await store.getFarm('B2'))!.updatedAt!;
      const before = Date.now();
      await new Promise((r) => setTimeout(r, 5));
      await store.upsertFarms([{ ...farm('B2', 41, 101, [['zeta', '1'], ['alpha', '2']]), name: 'Renamed' }]);
      const after = Date.now();
      const b = await store.getFarm('B2');
      const { updatedAt, ...record } = b!;
      assert.deepEqual(record, { farmId: 'B2', lat: 41, lon: 101, name: 'Renamed', extra: [['zeta', '1'], ['alpha', '2']] });
      // When the store wrote the record, as a number in every adapter; the same in a listing.
      assert.equal(typeof updatedAt, 'number');
      assert.ok(updatedAt! > first && updatedAt! >= before && updatedAt! <= after, `${first} ${before} ${updatedAt} ${after}`);
      assert.equal((await store.listFarms(0, 10)).items.find((f) => f.farmId === 'B2')!.updatedAt, updatedAt);
      // A record that brings its own time (a store being copied) keeps it.
      await store.upsertFarms([{ ...b!, updatedAt: 1_700_000_000_123 }]);
      assert.equal((await store.getFarm('B2'))!.updatedAt, 1_700_000_000_123);
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

    test('putRun takes a series encoded beforehand as it takes the series, and refuses a blob that does not open', async () => {
      // On the run the test before wrote, which is put back as it was: the tests after it count runs.
      const kept = (await store.getRun('A1', '2026112000'))!.view.toSeries();
      const s = series([0, 1, 2, 96, 97, 1440], 5);
      const p = await store.putRun({ farmId: 'A1', issue: '2026112000', series: { blob: encodeSeries(s), records: 6 } });
      const got = await store.getRun('A1', '2026112000');
      assert.equal(got!.revision, p.revision);
      assertSameSeries(got!.view.toSeries(), s);

      const blob = encodeSeries(series([0, 1], 6));
      await assert.rejects(store.putRun({ farmId: 'A1', issue: '2026112000', series: { blob, records: 3 } }), /holds 2 records, not the 3/);
      await assert.rejects(store.putRun({ farmId: 'A1', issue: '2026112000', series: { blob: blob.subarray(0, 9), records: 2 } }), /does not open/);
      const after = await store.getRun('A1', '2026112000');
      assert.equal(after!.revision, p.revision);
      assertSameSeries(after!.view.toSeries(), s);
      await store.putRun({ farmId: 'A1', issue: '2026112000', series: kept });
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

    test('runArrivals: per run its sites and arrival times; a replacement keeps the first arrival', async () => {
      const before = await store.runArrivals();
      assert.deepEqual(before.map((r) => [r.issue, r.farms]), [['2026112012', 1], ['2026112000', 2], ['2026111912', 1]]);
      const old = before.find((r) => r.issue === '2026112012')!;
      assert.ok(old.firstPublishedAt <= old.lastArrivalAt && old.lastArrivalAt <= old.lastPublishedAt);
      await new Promise((r) => setTimeout(r, 5));
      const pub = await store.putRun({ farmId: 'A1', issue: '2026112012', series: series([0, 1], 9) });
      const after = (await store.runArrivals()).find((r) => r.issue === '2026112012')!;
      assert.equal(after.firstPublishedAt, old.firstPublishedAt, 'the first publication stays');
      assert.equal(after.lastArrivalAt, old.lastArrivalAt);
      assert.equal(after.lastPublishedAt, pub.publishedAt, 'the last publication moves');
      assert.deepEqual((await store.runArrivals(['B2', 'C3'])).map((r) => [r.issue, r.farms]), [['2026112000', 1], ['2026111912', 1]]);
      assert.deepEqual(await store.runArrivals([]), []);
    });

    test('listIssues among a set of farms: only their runs, counted over them only', async () => {
      assert.deepEqual(await store.listIssues(undefined, 0, 10, ['B2', 'C3']), {
        total: 2,
        items: [
          { issue: '2026112000', farms: 1 },
          { issue: '2026111912', farms: 1 },
        ],
      });
      assert.deepEqual(await store.listIssues(undefined, 1, 1, ['B2', 'C3']), { total: 2, items: [{ issue: '2026111912', farms: 1 }] });
      assert.deepEqual(await store.listIssues('B2', 0, 10, ['B2']), { total: 1, items: [{ issue: '2026112000', farms: 1 }] });
      assert.deepEqual(await store.listIssues(undefined, 0, 10, []), { total: 0, items: [] });
      assert.deepEqual(await store.listIssues(undefined, 0, 10, ["x') OR 1=1 --", 'D4']), { total: 0, items: [] });
    });

    test('runVersions: the sites of one run by farm_id with their revision and publication time; among restricts', async () => {
      // A run of its own (no other test uses these issues), published out of farm_id order.
      const issue = '2026111800';
      const other = '2026111806';
      const c3 = await store.putRun({ farmId: 'C3', issue, series: series([0], 51) });
      const a1 = await store.putRun({ farmId: 'A1', issue, series: series([0], 52) });
      const b2 = await store.putRun({ farmId: 'B2', issue, series: series([0], 53) });
      const d4 = await store.putRun({ farmId: 'D4', issue: other, series: series([0], 54) });
      const version = (farmId: string, p: { revision: number; publishedAt: number }) => ({ farmId, revision: p.revision, publishedAt: p.publishedAt });
      assert.deepEqual(await store.runVersions(issue), [version('A1', a1), version('B2', b2), version('C3', c3)]);
      assert.deepEqual(await store.runVersions(other), [version('D4', d4)]);

      // A replacement moves that site's revision and publication time, and only that site's.
      await new Promise((r) => setTimeout(r, 5));
      const b2again = await store.putRun({ farmId: 'B2', issue, series: series([0, 1], 55) });
      assert.ok(b2again.revision > b2.revision);
      assert.deepEqual(await store.runVersions(issue), [version('A1', a1), version('B2', b2again), version('C3', c3)]);
      const got = await store.getRun('B2', issue);
      assert.deepEqual([got!.revision, got!.publishedAt], [b2again.revision, b2again.publishedAt]);

      // Among a set of sites: only those, still by farm_id; ids not in the run (or unknown) add nothing.
      assert.deepEqual(await store.runVersions(issue, ['C3', 'A1']), [version('A1', a1), version('C3', c3)]);
      assert.deepEqual(await store.runVersions(issue, ['nope', 'B2']), [version('B2', b2again)]);
      assert.deepEqual(await store.runVersions(issue, ['D4']), []);
      assert.deepEqual(await store.runVersions(issue, []), []);
      assert.deepEqual(await store.runVersions(issue, ["x') OR 1=1 --"]), []);
      assert.deepEqual(await store.runVersions(other, ['A1', 'D4']), [version('D4', d4)]);

      // A run no site holds.
      assert.deepEqual(await store.runVersions('2099010100'), []);
      assert.deepEqual(await store.runVersions('2099010100', ['A1']), []);
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
      const movesFrom = (before: string): Promise<string> => tokenMovesFrom(store, before);
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

    test('createKey keeps hash, prefix and attributes; findKeyByHash and listKeys (name in byte order, then age) read them back', async () => {
      const a = newKey('alpha', { farms: ['A1', 'B2'], rate: 2.5, burst: 10 });
      const got = await store.createKey(a.spec, T);
      assert.deepEqual(got, { id: got.id, ...a.spec, createdAt: T, expiresAt: null, revokedAt: null, lastUsedAt: null });
      assert.equal(keyState(got, T), 'active');
      const ops = await store.createKey(newKey('ops', { admin: true }).spec, T + 1);
      const upper = await store.createKey(newKey('Zed', { farms: [] }).spec, T + 2);
      assert.equal(ops.admin, true);
      assert.deepEqual(upper.farms, []);
      assert.equal(new Set([got.id, ops.id, upper.id]).size, 3);
      assert.deepEqual(await store.findKeyByHash(a.spec.hash), got);
      assert.equal(await store.findKeyByHash(hashKey('fcd_not_a_key')), undefined);
      assert.deepEqual((await store.listKeys()).map((k) => k.name), ['Zed', 'alpha', 'ops']);
    });

    test('the store refuses a key text where the hash or prefix goes, and bad attributes, writing nothing', async () => {
      const before = await store.keysSince(0);
      const a = newKey('refused');
      const bad: NewKey[] = [
        { ...a.spec, hash: a.key },
        { ...a.spec, hash: a.spec.hash.toUpperCase() },
        { ...a.spec, prefix: a.key },
        { ...a.spec, name: '' },
        { ...a.spec, rate: 0 },
        { ...a.spec, rate: Infinity },
        { ...a.spec, burst: 1.5 },
        { ...a.spec, burst: 0 },
        { ...a.spec, farms: 'A1' as unknown as string[] },
      ];
      for (const k of bad) await assert.rejects(store.createKey(k, T), (e: Error) => !e.message.includes(a.key));
      await store.createKey(newKey('roll-me').spec, T);
      await assert.rejects(store.rollKey('roll-me', { hash: a.key, prefix: a.spec.prefix }, T + DAY, T));
      await assert.rejects(store.rollKey('roll-me', { hash: a.spec.hash, prefix: a.key }, T + DAY, T));
      const after = await store.keysSince(before.revision);
      assert.deepEqual(after.keys.map((k) => k.name), ['roll-me']);
      assert.equal(await store.findKeyByHash(a.spec.hash), undefined);
    });

    test('a name used by a live key is refused (even one that reads like a connection failure); revoked, it is free again', async () => {
      const first = newKey('dup');
      await store.createKey(first.spec, T);
      await assert.rejects(store.createKey(newKey('dup').spec, T + 1), KeyNameTakenError);
      await store.createKey(newKey('timeout_terminated').spec, T);
      await assert.rejects(store.createKey(newKey('timeout_terminated').spec, T + 1), (e: Error) => e instanceof KeyNameTakenError && /timeout_terminated/.test(e.message));
      assert.equal(await store.revokeKey('nobody', T + 2), 0);
      assert.equal(await store.revokeKey('dup', T + 2), 1);
      assert.equal(await store.revokeKey('dup', T + 3), 0, 'nothing live left');
      const old = await store.findKeyByHash(first.spec.hash);
      assert.equal(old?.revokedAt, T + 2);
      assert.equal(keyState(old!, T + 3), 'revoked');
      const again = await store.createKey(newKey('dup').spec, T + 4);
      assert.equal(keyState(again, T + 4), 'active');
      const dups = (await store.listKeys()).filter((k) => k.name === 'dup');
      assert.deepEqual(dups.map((k) => k.createdAt), [T, T + 4], 'both kept, oldest first');
    });

    test('rollKey with a grace: the old key works until the grace ends, the new one has the same attributes', async () => {
      const a = newKey('roller', { farms: ['C3'], rate: 1.5, burst: 3, admin: true });
      const old = await store.createKey(a.spec, T);
      const n1 = mintKey();
      const rolled = await store.rollKey('roller', { hash: n1.hash, prefix: n1.prefix }, T + DAY, T + 10);
      assert.ok(rolled);
      assert.notEqual(rolled.id, old.id);
      assert.deepEqual(rolled, {
        id: rolled.id, name: 'roller', hash: n1.hash, prefix: n1.prefix, farms: ['C3'], rate: 1.5, burst: 3, admin: true,
        createdAt: T + 10, expiresAt: null, revokedAt: null, lastUsedAt: null,
      });
      const ended = await store.findKeyByHash(a.spec.hash);
      assert.equal(ended?.expiresAt, T + DAY);
      assert.equal(ended?.revokedAt, null);
      assert.equal(keyState(ended!, T + 20), 'expiring');
      assert.equal(keyState(ended!, T + DAY), 'expired');
      await assert.rejects(store.createKey(newKey('roller').spec, T + 20), KeyNameTakenError, 'still live, both');
      // A roll within the grace: the first key keeps its earlier end.
      const n2 = mintKey();
      const again = await store.rollKey('roller', n2, T + 2 * DAY, T + 30);
      assert.deepEqual([again?.farms, again?.rate, again?.burst, again?.admin], [['C3'], 1.5, 3, true]);
      assert.equal((await store.findKeyByHash(a.spec.hash))?.expiresAt, T + DAY);
      assert.equal((await store.findKeyByHash(n1.hash))?.expiresAt, T + 2 * DAY);
      // After the first grace: two live keys of that name, and revoking the name ends both.
      assert.equal(await store.revokeKey('roller', T + DAY + 1), 2);
      const states = (await store.listKeys()).filter((k) => k.name === 'roller').map((k) => keyState(k, T + DAY + 2));
      assert.deepEqual(states, ['expired', 'revoked', 'revoked']);
    });

    test('rollKey with no grace ends the old key at once; an unknown or dead name is no roll and takes no revision', async () => {
      const a = newKey('instant', { rate: 7 });
      await store.createKey(a.spec, T);
      const n = mintKey();
      const rolled = await store.rollKey('instant', n, T + 100, T + 100);
      assert.equal(rolled?.rate, 7);
      const old = await store.findKeyByHash(a.spec.hash);
      assert.equal(old?.revokedAt, T + 100);
      assert.equal(keyState(old!, T + 100), 'revoked');
      assert.equal(keyState(rolled!, T + 100), 'active');
      const rev = (await store.keysSince(0)).revision;
      assert.equal(await store.rollKey('no-such-name', mintKey(), T + DAY, T), undefined);
      assert.equal((await store.keysSince(0)).revision, rev);
      assert.equal(await store.revokeKey('instant', T + 200), 1);
      const rev2 = (await store.keysSince(0)).revision;
      assert.ok(rev2 > rev);
      assert.equal(await store.rollKey('instant', mintKey(), T + DAY, T + 300), undefined, 'only revoked keys left');
      assert.equal(await store.revokeKey('instant', T + 300), 0);
      assert.equal((await store.keysSince(0)).revision, rev2);
    });

    test('keys past their end do not count: after a roll\'s grace only the new key is live, and the name is free once it is revoked', async () => {
      await store.createKey(newKey('lapse').spec, T);
      await store.rollKey('lapse', mintKey(), T + 50, T + 10);
      assert.equal(await store.revokeKey('lapse', T + 60), 1, 'only the new key is live after the grace');
      await store.createKey(newKey('lapse').spec, T + 70);
      const states = (await store.listKeys()).filter((k) => k.name === 'lapse').map((k) => keyState(k, T + 70));
      assert.deepEqual(states, ['expired', 'revoked', 'active']);
    });

    test('touchKeys records last use without a revision, never moves it back, and moves no token', async () => {
      const a = await store.createKey(newKey('touched-a').spec, T);
      const b = await store.createKey(newKey('touched-b').spec, T);
      const before = await store.keysSince(0);
      const token = await quietToken(store);
      let fired = 0;
      const off = store.onCommit(() => fired++);
      try {
        await store.touchKeys(new Map([[a.hash, T + 1000], [b.hash, T + 2000], [hashKey('fcd_unknown'), T]]));
        await store.touchKeys(new Map([[a.hash, T + 500]]));
        await store.touchKeys(new Map());
        assert.equal((await store.findKeyByHash(a.hash))?.lastUsedAt, T + 1000);
        assert.equal((await store.findKeyByHash(b.hash))?.lastUsedAt, T + 2000);
        await store.touchKeys(new Map([[a.hash, T + 3000]]));
        assert.equal((await store.findKeyByHash(a.hash))?.lastUsedAt, T + 3000);
        assert.deepEqual(await store.keysSince(before.revision), { revision: before.revision, keys: [] });
        assert.equal((await store.snapshot()).revision, before.revision);
        assert.equal(await store.changeToken(), token);
        assert.equal(fired, 0);
      } finally {
        off();
      }
    });

    test('keysSince: every key from 0, then only keys written after a revision, from the sequence farms and runs use', async () => {
      const all = await store.keysSince(0);
      assert.equal(all.keys.length, (await store.listKeys()).length);
      assert.equal(all.revision, (await store.snapshot()).revision);
      let fired = 0;
      const off = store.onCommit(() => fired++);
      const token = await store.changeToken();
      const c = await store.createKey(newKey('since').spec, T);
      assert.ok(fired >= 1, 'onCommit fires for a key write');
      off();
      assert.notEqual(await store.changeToken(), token);
      const s1 = await store.keysSince(all.revision);
      assert.ok(s1.revision > all.revision);
      assert.deepEqual(s1.keys, [c]);
      assert.deepEqual(await store.changesSince(all.revision), { revision: s1.revision, farms: [], runs: [] });
      await store.revokeKey('since', T + 1);
      const s2 = await store.keysSince(s1.revision);
      assert.deepEqual(s2.keys.map((k) => [k.id, k.revokedAt]), [[c.id, T + 1]]);
      const p = await store.putRun({ farmId: 'A1', issue: '2026112700', series: series([0], 31) });
      assert.ok(p.revision > s2.revision);
      assert.deepEqual(await store.keysSince(s2.revision), { revision: p.revision, keys: [] });
    });

    test('keys written through another handle are read here at once, and move this handle\'s token within changePollMs', async () => {
      const other = await h.openAnother();
      try {
        const t0 = await store.changeToken();
        const k0 = await store.keysSince(0);
        const a = newKey('elsewhere', { farms: ['D4'] });
        await other.createKey(a.spec, T);
        assert.equal((await store.findKeyByHash(a.spec.hash))?.name, 'elsewhere');
        const t1 = await tokenMovesFrom(store, t0);
        assert.notEqual(t1, t0, "another handle's create");
        assert.deepEqual((await store.keysSince(k0.revision)).keys.map((k) => k.hash), [a.spec.hash]);
        const n = mintKey();
        await other.rollKey('elsewhere', n, T + DAY, T + 1);
        const t2 = await tokenMovesFrom(store, t1);
        assert.notEqual(t2, t1, "another handle's roll");
        assert.deepEqual((await store.findKeyByHash(n.hash))?.farms, ['D4']);
        assert.equal(await other.revokeKey('elsewhere', T + 2), 2);
        assert.notEqual(await tokenMovesFrom(store, t2), t2, "another handle's revocation");
        assert.equal((await store.findKeyByHash(n.hash))?.revokedAt, T + 2);
      } finally {
        await other.close();
      }
    });

    test('two handles creating one name at once: exactly one key is made', async () => {
      const other = await h.openAnother();
      try {
        const tries = Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? store : other).createKey(newKey('race').spec, T));
        const results = await Promise.allSettled(tries);
        assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
        for (const r of results) if (r.status === 'rejected') assert.ok(r.reason instanceof KeyNameTakenError, String(r.reason));
        assert.equal((await store.listKeys()).filter((k) => k.name === 'race').length, 1);
      } finally {
        await other.close();
      }
    });

    test('the key text is never stored, only its hash and display prefix', async () => {
      const a = newKey('secret', { farms: ['A1'] });
      await store.createKey(a.spec, T);
      const n = mintKey();
      await store.rollKey('secret', n, T + DAY, T + 1);
      await store.touchKeys(new Map([[n.hash, T + 2]]));
      const raw = await h.rawKeyText();
      for (const key of [a.key, n.key]) {
        assert.ok(raw.includes(hashKey(key)), 'the hash is there');
        assert.ok(raw.includes(key.slice(0, 8)), 'the display prefix is there');
        assert.ok(!raw.includes(key), 'not the key');
        assert.ok(!raw.includes(key.slice(4, 36)), 'not its random part');
        assert.ok(!raw.includes(key.slice(8)), 'not what follows the display prefix');
      }
    });

    test('putRun with a file records it as taken with the run, in one transaction, at the publication time', async () => {
      const s = series([0, 1, 2], 21);
      const f = fileRecord('c-taken-1', { farmId: 'A1', issue: '2026120100' });
      const pub = await store.putRun({ farmId: 'A1', issue: '2026120100', series: s }, { file: f });
      const rec = await store.ingestedFile('c-taken-1');
      assert.ok(rec);
      assert.deepEqual({ ...rec, id: 0 }, { ...f, id: 0, result: 'taken', at: pub.publishedAt });
      assertSameSeries((await store.getRun('A1', '2026120100'))!.view.toSeries(), s);
      assert.equal(await store.ingestedFile('c-unknown'), undefined);
    });

    test('a claim recorded before is refused: the run stays as it was and the record is kept once', async () => {
      const before = await store.getRun('A1', '2026120100');
      const again = fileRecord('c-taken-1', { farmId: 'A1', issue: '2026120100', sha256: 'b'.repeat(64) });
      await assert.rejects(
        store.putRun({ farmId: 'A1', issue: '2026120100', series: series([0], 22) }, { file: again }),
        (e: Error) => e instanceof ClaimRecordedError && e.claim === 'c-taken-1',
      );
      await assert.rejects(store.recordRejectedFile(again), ClaimRecordedError);
      const after = await store.getRun('A1', '2026120100');
      assert.equal(after!.revision, before!.revision);
      assertSameSeries(after!.view.toSeries(), before!.view.toSeries());
      const recs = (await store.listIngestedFiles(0, 1000)).filter((r) => r.claim === 'c-taken-1');
      assert.equal(recs.length, 1);
      assert.equal(recs[0]!.sha256, 'a'.repeat(64));
    });

    test('a run of an unknown farm records no file; a bad record is refused and publishes nothing', async () => {
      await assert.rejects(
        store.putRun({ farmId: 'ZZ', issue: '2026120100', series: series([0], 23) }, { file: fileRecord('c-zz', { farmId: 'ZZ', issue: '2026120100' }) }),
        UnknownFarmError,
      );
      assert.equal(await store.ingestedFile('c-zz'), undefined);
      await assert.rejects(store.putRun({ farmId: 'A1', issue: '2026120112', series: series([0], 24) }, { file: fileRecord('c-bad', { sha256: 'XYZ' }) }));
      assert.equal(await store.getRun('A1', '2026120112'), undefined);
      assert.equal(await store.ingestedFile('c-bad'), undefined);
    });

    test('recordRejectedFile records a file without a run, takes no revision and moves no token', async () => {
      const rev = (await store.snapshot()).revision;
      const token = await quietToken(store);
      let fired = 0;
      const off = store.onCommit(() => fired++);
      try {
        const before = Date.now();
        // A claim that reads like a connection failure is still a claim, not an unreachable store.
        const f = fileRecord('timeout_terminated', { message: 'x.csv: line 0, column 0: bad name', farmId: null, issue: null });
        const rec = await store.recordRejectedFile(f);
        assert.deepEqual({ ...rec, id: 0, at: 0 }, { ...f, id: 0, at: 0, result: 'rejected' });
        assert.ok(rec.at >= before - 1000 && rec.at <= Date.now() + 1000);
        assert.deepEqual(await store.ingestedFile('timeout_terminated'), rec);
        await assert.rejects(store.recordRejectedFile(f), ClaimRecordedError);
        assert.equal((await store.snapshot()).revision, rev);
        assert.equal(await store.changeToken(), token);
        assert.equal(fired, 0);
      } finally {
        off();
      }
    });

    test('listIngestedFiles pages by id in recording order', async () => {
      for (let i = 0; i < 5; i++) await store.recordRejectedFile(fileRecord(`c-page-${i}`));
      const all = await store.listIngestedFiles(0, 1000);
      const ids = all.map((r) => r.id);
      assert.deepEqual(ids, [...ids].sort((a, b) => a - b));
      assert.equal(new Set(ids).size, ids.length);
      const pageClaims = all.filter((r) => r.claim.startsWith('c-page-')).map((r) => r.claim);
      assert.deepEqual(pageClaims, [0, 1, 2, 3, 4].map((i) => `c-page-${i}`));
      const first = await store.listIngestedFiles(0, 2);
      const next = await store.listIngestedFiles(first[1]!.id, 2);
      assert.deepEqual([...first, ...next].map((r) => r.id), ids.slice(0, 4));
    });

    test('two handles recording one claim at once: exactly one record, and one publication', async () => {
      const other = await h.openAnother();
      try {
        const f = fileRecord('c-race', { farmId: 'B2', issue: '2026120200' });
        const before = (await store.snapshot()).revision;
        const results = await Promise.allSettled([
          store.putRun({ farmId: 'B2', issue: '2026120200', series: series([0, 1], 25) }, { file: f }),
          other.putRun({ farmId: 'B2', issue: '2026120200', series: series([0, 1], 26) }, { file: f }),
          other.recordRejectedFile(f),
        ]);
        assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
        for (const r of results) if (r.status === 'rejected') assert.ok(r.reason instanceof ClaimRecordedError, String(r.reason));
        assert.equal((await store.listIngestedFiles(0, 1000)).filter((r) => r.claim === 'c-race').length, 1);
        const rec = await other.ingestedFile('c-race');
        const changes = await store.changesSince(before);
        assert.equal(changes.runs.filter((r) => r.farmId === 'B2' && r.issue === '2026120200').length, rec!.result === 'taken' ? 1 : 0);
      } finally {
        await other.close();
      }
    });

    // Events and webhooks (INTERFACE.md section 14).

    test('putRun appends a run entry to the event log with its revision and time; ids increase', async () => {
      const start = (await store.eventBounds()).last;
      const p1 = await store.putRun({ farmId: 'A1', issue: '2026120300', series: series([0], 31) });
      const p2 = await store.putRun({ farmId: 'B2', issue: '2026120300', series: series([0], 32) });
      const p3 = await store.putRun({ farmId: 'A1', issue: '2026120300', series: series([0, 1], 33) });
      const got = await store.eventsAfter(start, 100);
      assert.deepEqual(
        got.map((e) => ({ ...e, id: 0 })),
        [
          { id: 0, kind: 'run', farmId: 'A1', issue: '2026120300', revision: p1.revision, at: p1.publishedAt },
          { id: 0, kind: 'run', farmId: 'B2', issue: '2026120300', revision: p2.revision, at: p2.publishedAt },
          { id: 0, kind: 'run', farmId: 'A1', issue: '2026120300', revision: p3.revision, at: p3.publishedAt },
        ],
      );
      const ids = got.map((e) => e.id);
      assert.ok(ids[0]! > start && ids[0]! < ids[1]! && ids[1]! < ids[2]!, ids.join(' '));
      const bounds = await store.eventBounds();
      assert.equal(bounds.last, ids[2]);
      assert.ok(bounds.first !== null && bounds.first <= ids[0]!);
      // Every publication of the suite so far is in the log, in id order, and a handle opened later reads the same.
      const all = await store.eventsAfter(0, 10_000);
      assert.ok(all.length > 3);
      assert.deepEqual(all.map((e) => e.id), [...all.map((e) => e.id)].sort((a, b) => a - b));
      const other = await h.openAnother();
      try {
        assert.deepEqual(await other.eventsAfter(start, 100), got);
        assert.deepEqual(await other.eventBounds(), bounds);
      } finally {
        await other.close();
      }
    });

    test('a refused putRun and importRun write no event', async () => {
      const before = await store.eventBounds();
      await assert.rejects(store.putRun({ farmId: 'ZZ', issue: '2026120300', series: series([0], 34) }), UnknownFarmError);
      await assert.rejects(
        store.putRun({ farmId: 'A1', issue: '2026120312', series: series([0], 35) }, { file: fileRecord('c-taken-1') }),
        ClaimRecordedError,
      );
      const [run] = await store.exportRuns(undefined, 1);
      await store.importRun({ farmId: run!.farmId, issue: '2026010100', blob: run!.blob, publishedAt: T });
      assert.ok(await store.getRun(run!.farmId, '2026010100'));
      assert.deepEqual(await store.eventBounds(), before);
      assert.deepEqual(await store.eventsAfter(before.last, 100), []);
    });

    test('eventsAfter pages through the log in id order', async () => {
      const all = await store.eventsAfter(0, 10_000);
      const paged = [];
      for (let after = 0; ; ) {
        const page = await store.eventsAfter(after, 2);
        assert.ok(page.length <= 2);
        if (page.length === 0) break;
        paged.push(...page);
        after = page[page.length - 1]!.id;
      }
      assert.deepEqual(paged, all);
      assert.deepEqual(await store.eventsAfter(all[all.length - 1]!.id, 10), []);
      await assert.rejects(store.eventsAfter(0, 0), RangeError);
    });

    test('appendTick: one tick per moment across handles; a commit that takes no revision', async () => {
      const other = await h.openAnother();
      const rev = (await store.snapshot()).revision;
      const token = await quietToken(store);
      const otherToken = await quietToken(other);
      let fired = 0;
      const off = store.onCommit(() => fired++);
      try {
        const last = (await store.eventBounds()).last;
        const id = await store.appendTick(T + 60_000);
        assert.ok(id !== undefined && id > last);
        assert.equal(await store.appendTick(T + 60_000), undefined);
        assert.equal(await other.appendTick(T + 60_000), undefined);
        const next = await other.appendTick(T + 120_000);
        assert.ok(next !== undefined && next > id);
        assert.deepEqual(await store.eventsAfter(last, 10), [
          { id, kind: 'tick', at: T + 60_000 },
          { id: next, kind: 'tick', at: T + 120_000 },
        ]);
        assert.equal((await store.eventBounds()).last, next);
        assert.equal((await store.snapshot()).revision, rev, 'no revision taken');
        assert.deepEqual((await store.changesSince(rev)).runs, []);
        assert.ok(fired >= 1, 'listeners heard of the own tick');
        assert.notEqual(await store.changeToken(), token);
        assert.notEqual(await tokenMovesFrom(other, otherToken), otherToken, "the other handle's token moved");
        // A run's entry and a tick at the same moment are two entries.
        const pub = await store.putRun({ farmId: 'C3', issue: '2026120300', series: series([0], 36) });
        const tickThen = await store.appendTick(pub.publishedAt);
        assert.ok(tickThen !== undefined);
      } finally {
        off();
        await other.close();
      }
    });

    test('pruneEvents removes entries before the cutoff but never the newest; the last id survives and ids are not reused', async () => {
      const start = (await store.eventBounds()).last;
      await store.appendTick(1_000);
      const kept = await store.appendTick(2_000);
      assert.equal(await store.pruneEvents(1_500), 1);
      assert.deepEqual((await store.eventsAfter(start, 10)).map((e) => e.id), [kept]);
      // Everything but the newest: here an old tick, kept though it is older than the cutoff.
      const newest = await store.appendTick(500);
      const total = (await store.eventsAfter(0, 100_000)).length;
      assert.equal(await store.pruneEvents(Number.MAX_SAFE_INTEGER), total - 1);
      assert.deepEqual(await store.eventsAfter(0, 100), [{ id: newest!, kind: 'tick', at: 500 }]);
      assert.deepEqual(await store.eventBounds(), { first: newest, last: newest });
      assert.equal(await store.pruneEvents(Number.MAX_SAFE_INTEGER), 0);
      // The next entry takes a new id, also from another handle.
      const other = await h.openAnother();
      try {
        assert.equal((await other.eventBounds()).last, newest);
        const pub = await other.putRun({ farmId: 'D4', issue: '2026120300', series: series([0], 37) });
        const [e] = await store.eventsAfter(newest!, 10);
        assert.ok(e && e.id > newest! && e.kind === 'run' && e.revision === pub.revision);
      } finally {
        await other.close();
      }
    });

    test('webhooks: add (since the log\'s last id), list by name, a name taken is refused, remove takes the deliveries along', async () => {
      const since = (await store.eventBounds()).last;
      const spec = { name: 'hook-b', url: 'https://example.com/b', secret: `whsec_${'b'.repeat(43)}=`, farms: ['A1', 'B2'] };
      const b = await store.addWebhook(spec, T);
      assert.deepEqual({ ...b, id: 0 }, { ...spec, id: 0, createdAt: T, sinceEventId: since, disabledAt: null, disabledReason: null });
      const a = await store.addWebhook({ name: 'hook-a', url: 'http://127.0.0.1:9/a', secret: 'whsec_a', farms: null }, T + 1);
      assert.notEqual(a.id, b.id);
      // A name that reads like a connection failure is still a name taken.
      await store.addWebhook({ name: 'timeout_terminated', url: 'https://example.com/t', secret: 's', farms: null }, T);
      await assert.rejects(
        store.addWebhook({ name: 'timeout_terminated', url: 'https://example.com/u', secret: 's', farms: null }, T),
        (e: Error) => e instanceof WebhookNameTakenError && /timeout_terminated/.test(e.message),
      );
      await assert.rejects(store.addWebhook({ ...spec, url: 'https://other' }, T), WebhookNameTakenError);
      await assert.rejects(store.addWebhook({ ...spec, name: '' }, T), TypeError);
      const list = await store.listWebhooks();
      assert.deepEqual(list.map((w) => w.name), ['hook-a', 'hook-b', 'timeout_terminated']);
      assert.deepEqual(list[1], { ...b, lastAttemptAt: null, lastResult: null, pending: 0 });

      const d = { webhookId: b.id, msgId: 'msg-b-1', type: 'issue.complete' as const, issue: '2026120300', body: '{"x":1}', createdAt: T };
      assert.equal(await store.enqueueDelivery(d), true);
      assert.equal(await store.enqueueDelivery({ ...d, body: 'other' }), false, 'the same notice again is a no-op');
      assert.equal(await store.enqueueDelivery({ ...d, webhookId: a.id }), true, 'the same id for another endpoint is another delivery');
      assert.equal((await store.listWebhooks()).find((w) => w.name === 'hook-b')!.pending, 1);

      assert.equal(await store.removeWebhook('hook-b'), true);
      assert.equal(await store.removeWebhook('hook-b'), false);
      assert.equal(await store.removeWebhook('timeout_terminated'), true);
      assert.deepEqual((await store.listWebhooks()).map((w) => w.name), ['hook-a']);
      const again = await store.addWebhook(spec, T + 2);
      assert.notEqual(again.id, b.id, 'an id is not reused');
      assert.equal((await store.listWebhooks()).find((w) => w.name === 'hook-b')!.pending, 0, 'the old deliveries went with the endpoint');
      assert.equal(await store.enqueueDelivery(d), false, 'nothing is enqueued for a removed endpoint');
      const claimed = await store.claimDeliveries(T + 10, 'p', 1000, 100);
      assert.deepEqual(claimed.map((c) => c.webhookId), [a.id]);
      assert.equal(await store.removeWebhook('hook-a'), true);
      assert.equal(await store.removeWebhook('hook-b'), true);
      assert.deepEqual(await store.listWebhooks(), []);
    });

    test('two handles adding one name at once: exactly one endpoint is added', async () => {
      const other = await h.openAnother();
      try {
        const spec = { name: 'hook-race', url: 'https://example.com/r', secret: 's', farms: null };
        const results = await Promise.allSettled([store.addWebhook(spec, T), other.addWebhook(spec, T), other.addWebhook(spec, T)]);
        assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
        for (const r of results) if (r.status === 'rejected') assert.ok(r.reason instanceof WebhookNameTakenError, String(r.reason));
        assert.equal((await store.listWebhooks()).filter((w) => w.name === 'hook-race').length, 1);
      } finally {
        await store.removeWebhook('hook-race');
        await other.close();
      }
    });

    test('claimDeliveries leases the due deliveries, oldest first, with the address and secret; a running lease keeps others off', async () => {
      const w = await store.addWebhook({ name: 'hook-lease', url: 'https://example.com/lease', secret: 'whsec_lease', farms: null }, T);
      try {
        const notice = (i: number, createdAt: number) => ({
          webhookId: w.id,
          msgId: `msg-lease-${i}`,
          type: (i % 2 === 0 ? 'issue.complete' : 'issue.partial') as 'issue.complete' | 'issue.partial',
          issue: '2026120300',
          body: `{"i":${i}}`,
          createdAt,
        });
        // Enqueued out of age order; one not due yet.
        for (const [i, at] of [[1, T + 2], [0, T + 1], [2, T + 3], [3, T + 5_000]] as const) assert.ok(await store.enqueueDelivery(notice(i, at)));
        const first = await store.claimDeliveries(T + 10, 'p1', 1000, 2);
        assert.deepEqual(
          first.map((d) => ({ ...d, id: 0 })),
          [0, 1].map((i) => ({ ...notice(i, T + 1 + i), id: 0, attempts: 0, nextAttemptAt: T + 1 + i, url: w.url, secret: 'whsec_lease' })),
        );
        const rest = await store.claimDeliveries(T + 10, 'p1', 1490, 10);
        assert.deepEqual(rest.map((d) => d.msgId), ['msg-lease-2']);
        assert.deepEqual(await store.claimDeliveries(T + 10, 'p2', 1000, 10), [], 'leased');
        assert.deepEqual(await store.claimDeliveries(T + 1010, 'p2', 1000, 10), [], 'the lease runs until its end');
        const expired = await store.claimDeliveries(T + 1011, 'p2', 10_000, 10);
        assert.deepEqual(expired.map((d) => d.msgId), ['msg-lease-0', 'msg-lease-1']);
        assert.deepEqual(expired.map((d) => d.attempts), [0, 0], 'a lease is no attempt');
        assert.deepEqual((await store.claimDeliveries(T + 5_000, 'p3', 1000, 10)).map((d) => d.msgId), ['msg-lease-2', 'msg-lease-3']);
        assert.equal((await store.listWebhooks()).find((x) => x.name === 'hook-lease')!.pending, 4);
        await assert.rejects(store.claimDeliveries(T, '', 1000, 10), TypeError);
      } finally {
        await store.removeWebhook('hook-lease');
      }
    });

    test('claimers on two handles at once never get the same delivery', async () => {
      const other = await h.openAnother();
      const w = await store.addWebhook({ name: 'hook-race-claim', url: 'https://example.com/c', secret: 's', farms: null }, T);
      try {
        const n = 40;
        for (let i = 0; i < n; i++) {
          await store.enqueueDelivery({ webhookId: w.id, msgId: `m-${i}`, type: 'issue.complete', issue: '2026120300', body: '{}', createdAt: T + i });
        }
        const claims = await Promise.all(
          Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? store : other).claimDeliveries(T + n, `owner-${i}`, 60_000, 5)),
        );
        const ids = claims.flat().map((d) => d.id);
        assert.equal(new Set(ids).size, ids.length, `a delivery was leased twice: ${ids.join(' ')}`);
        assert.ok(ids.length > 0);
        // What no claimer got is still there to claim, once.
        const rest = await store.claimDeliveries(T + n, 'late', 60_000, 100);
        const every = [...ids, ...rest.map((d) => d.id)];
        assert.equal(new Set(every).size, n);
        assert.equal(every.length, n);
      } finally {
        await store.removeWebhook('hook-race-claim');
        await other.close();
      }
    });

    test('finishDelivery: delivered and given up are final, a retry is due again later, gone disables the endpoint', async () => {
      const w = await store.addWebhook({ name: 'hook-fin', url: 'https://example.com/f', secret: 's', farms: null }, T);
      try {
        for (let i = 0; i < 4; i++) {
          await store.enqueueDelivery({ webhookId: w.id, msgId: `f-${i}`, type: 'issue.partial', issue: '2026120300', body: '{}', createdAt: i === 3 ? T + 1000 : T + i });
        }
        const [d0, d1, d2] = await store.claimDeliveries(T + 10, 'p', 60_000, 10);
        await store.finishDelivery(d0!.id, { result: 'delivered', detail: '200', at: T + 20 });
        await store.finishDelivery(d1!.id, { result: 'retry', detail: '503', at: T + 21, nextAttemptAt: T + 5_000 });
        await store.finishDelivery(d2!.id, { result: 'gave-up', detail: 'timeout', at: T + 22 });
        await assert.rejects(store.finishDelivery(d0!.id, { result: 'retry', detail: '503', at: T + 23 }), TypeError);
        let s = (await store.listWebhooks()).find((x) => x.name === 'hook-fin')!;
        assert.deepEqual([s.lastAttemptAt, s.lastResult, s.pending], [T + 22, 'timeout', 2]);
        // The retry is not due before its time (its lease was freed); the fourth is due at its creation.
        const d3 = await store.claimDeliveries(T + 4_999, 'p', 60_000, 10);
        assert.deepEqual(d3.map((d) => d.msgId), ['f-3']);
        await store.finishDelivery(d3[0]!.id, { result: 'retry', detail: 'refused: connect ECONNREFUSED', at: T + 4_999, nextAttemptAt: T + 6_000 });
        const again = await store.claimDeliveries(T + 5_000, 'q', 60_000, 10);
        assert.deepEqual(again.map((d) => [d.msgId, d.attempts, d.nextAttemptAt]), [['f-1', 1, T + 5_000]]);
        await store.finishDelivery(again[0]!.id, { result: 'gone', detail: '410', at: T + 5_001 });
        s = (await store.listWebhooks()).find((x) => x.name === 'hook-fin')!;
        assert.deepEqual([s.disabledAt, s.disabledReason, s.lastAttemptAt, s.lastResult, s.pending], [T + 5_001, '410 Gone', T + 5_001, '410', 1]);
        // The endpoint is disabled: its remaining delivery is no longer claimable, not even when retried.
        assert.deepEqual(await store.claimDeliveries(T + 100_000, 'p', 60_000, 10), []);
        assert.equal(await store.retryWebhook('hook-fin', T + 100_000), 1);
        assert.deepEqual(await store.claimDeliveries(T + 100_000, 'p', 60_000, 10), []);
        // An outcome for a delivery that is no more changes nothing.
        await store.finishDelivery(987_654_321, { result: 'delivered', detail: '200', at: T });
      } finally {
        await store.removeWebhook('hook-fin');
      }
    });

    test('retryWebhook makes the pending deliveries due at once and frees their leases', async () => {
      const w = await store.addWebhook({ name: 'hook-retry', url: 'https://example.com/r', secret: 's', farms: null }, T);
      const other = await store.addWebhook({ name: 'hook-other', url: 'https://example.com/o', secret: 's', farms: null }, T);
      try {
        for (const [hook, id] of [[w, 'r-0'], [w, 'r-1'], [w, 'r-2'], [other, 'o-0']] as const) {
          await store.enqueueDelivery({ webhookId: hook.id, msgId: id, type: 'issue.complete', issue: '2026120300', body: '{}', createdAt: T });
        }
        const claimed = await store.claimDeliveries(T + 1, 'p', 60_000, 10);
        assert.equal(claimed.length, 4);
        const byMsg = new Map(claimed.map((d) => [d.msgId, d.id]));
        await store.finishDelivery(byMsg.get('r-0')!, { result: 'retry', detail: '500', at: T + 2, nextAttemptAt: T + 3_600_000 });
        await store.finishDelivery(byMsg.get('r-2')!, { result: 'delivered', detail: '204', at: T + 2 });
        // r-0 waits for its retry, r-1 and o-0 are leased.
        assert.deepEqual(await store.claimDeliveries(T + 3, 'q', 60_000, 10), []);
        assert.equal(await store.retryWebhook('hook-retry', T + 3), 2);
        assert.deepEqual((await store.claimDeliveries(T + 3, 'q', 60_000, 10)).map((d) => d.msgId).sort(), ['r-0', 'r-1']);
        assert.equal(await store.retryWebhook('nope', T + 3), undefined);
        assert.equal((await store.listWebhooks()).find((x) => x.name === 'hook-other')!.pending, 1);
      } finally {
        await store.removeWebhook('hook-retry');
        await store.removeWebhook('hook-other');
      }
    });

    test('pruneDeliveries removes the delivered and given-up deliveries last attempted before the cutoff, never a pending one', async () => {
      const w = await store.addWebhook({ name: 'hook-prune', url: 'https://example.com/p', secret: 's', farms: null }, T);
      try {
        const notice = (msgId: string) => ({ webhookId: w.id, msgId, type: 'issue.complete' as const, issue: '2026120300', body: '{}', createdAt: T });
        const ids = ['delivered-old', 'gave-up-old', 'gone-old', 'delivered-new', 'gave-up-new', 'retry-old', 'never-tried'];
        for (const id of ids) assert.ok(await store.enqueueDelivery(notice(id)));
        const byMsg = new Map((await store.claimDeliveries(T + 1, 'p', 60_000, 10)).map((d) => [d.msgId, d.id]));
        assert.equal(byMsg.size, ids.length);
        await store.finishDelivery(byMsg.get('delivered-old')!, { result: 'delivered', detail: '200', at: T + 10 });
        await store.finishDelivery(byMsg.get('gave-up-old')!, { result: 'gave-up', detail: '500', at: T + 20 });
        await store.finishDelivery(byMsg.get('delivered-new')!, { result: 'delivered', detail: '204', at: T + 2_000 });
        await store.finishDelivery(byMsg.get('gave-up-new')!, { result: 'gave-up', detail: 'timeout', at: T + 2_001 });
        await store.finishDelivery(byMsg.get('retry-old')!, { result: 'retry', detail: '503', at: T + 30, nextAttemptAt: T + 3_000_000 });
        // Last: gone disables the endpoint, which leaves its other deliveries as they are.
        await store.finishDelivery(byMsg.get('gone-old')!, { result: 'gone', detail: '410', at: T + 40 });
        // never-tried stays leased and unattempted; both pending ones are older than every cutoff below.
        await assert.rejects(store.pruneDeliveries(T + 0.5), RangeError);
        assert.equal(await store.pruneDeliveries(T + 10), 0, 'strictly older than the cutoff');
        assert.equal(await store.pruneDeliveries(T + 1_000), 3);
        assert.equal(await store.pruneDeliveries(T + 1_000), 0);
        // A removed delivery's notice could be enqueued again; the others are still there.
        const still = async (): Promise<string[]> => {
          const left: string[] = [];
          for (const id of ids) if (!(await store.enqueueDelivery(notice(id)))) left.push(id);
          return left;
        };
        assert.deepEqual(await still(), ['delivered-new', 'gave-up-new', 'retry-old', 'never-tried']);
        assert.equal((await store.listWebhooks()).find((x) => x.name === 'hook-prune')!.pending, 2 + 3, 'the pending ones and the three enqueued again');
        assert.equal(await store.pruneDeliveries(Number.MAX_SAFE_INTEGER), 2);
        assert.equal((await store.listWebhooks()).find((x) => x.name === 'hook-prune')!.pending, 5, 'no pending delivery is removed');
      } finally {
        await store.removeWebhook('hook-prune');
      }
    });

    test('marks: 0 until set, only move forward, the same in every handle', async () => {
      assert.equal(await store.readMark('notifier'), 0);
      await store.advanceMark('notifier', 5);
      await store.advanceMark('notifier', 3);
      assert.equal(await store.readMark('notifier'), 5);
      const other = await h.openAnother();
      try {
        await other.advanceMark('notifier', 9);
        assert.equal(await store.readMark('notifier'), 9);
        assert.equal(await other.readMark('other'), 0);
        await assert.rejects(store.advanceMark('notifier', 1.5), RangeError);
      } finally {
        await other.close();
      }
    });

    test('publications and ticks from two handles at once: a reader following the log never skips an entry', async () => {
      const other = await h.openAnother();
      try {
        const start = (await store.eventBounds()).last;
        const seen: number[] = [];
        let writing = true;
        const follow = (async () => {
          let last = start;
          for (;;) {
            const done = !writing;
            const page = await store.eventsAfter(last, 1000);
            for (const e of page) seen.push(e.id);
            if (page.length > 0) last = page[page.length - 1]!.id;
            if (done && page.length === 0) return;
          }
        })();
        // In waves of eight writes at once, four per handle: all 120 at once queue for the pools' connections
        // longer than their connect timeout on a slow machine, and the follower's reads time out with them.
        try {
          for (let wave = 0; wave < 60; wave += 4) {
            const writes: Promise<unknown>[] = [];
            for (let i = wave; i < wave + 4; i++) {
              const s = i % 2 === 0 ? store : other;
              writes.push(s.putRun({ farmId: ['A1', 'B2', 'C3', 'D4'][i % 4]!, issue: '2026120400', series: series([0], 40 + i) }));
              writes.push(s.appendTick(T + 1_000_000 + i));
            }
            await Promise.all(writes);
          }
        } finally {
          writing = false;
        }
        await follow;
        const all = (await store.eventsAfter(start, 10_000)).map((e) => e.id);
        assert.equal(all.length, 120);
        assert.deepEqual(seen, all, 'the follower saw every entry, in order, once');
      } finally {
        await other.close();
      }
    });
  });
}

/** A file record for the store tests. */
function fileRecord(claim: string, o: Partial<FileRecord> = {}): FileRecord {
  return {
    claim,
    path: `in/sub/${claim}.csv`,
    size: 1234,
    mtimeMs: T + 17,
    sha256: 'a'.repeat(64),
    message: `ingested in/sub/${claim}.csv`,
    farmId: null,
    issue: null,
    ...o,
  };
}
