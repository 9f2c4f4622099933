/**
 * The store conformance suite: the semantics documented in src/store/store.ts,
 * run against every adapter. An adapter's test file calls storeConformance with
 * a factory that opens a fresh, empty store (and can open a second handle on it).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ELEMENT_COUNT } from '../../src/domain/elements.js';
import { emptySeries, type RunSeries } from '../../src/domain/run.js';
import { hashKey, mintKey } from '../../src/access/keyHash.js';
import { keyState } from '../../src/access/keyState.js';
import {
  ClaimRecordedError,
  KeyNameTakenError,
  UnknownFarmError,
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
      await store.ping();
      assert.equal(await store.countFarms(), 0);
      assert.deepEqual(await store.listIssues(undefined, 0, 10), { total: 0, items: [] });
      assert.deepEqual(await store.listKeys(), []);
      assert.deepEqual((await store.keysSince(0)).keys, []);
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
