/** The watch-folder ingest in this process, over real files and a real store. */
import assert from 'node:assert/strict';
import { appendFileSync, linkSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { readFarmsCsv } from '../../src/ingest/farmsCsv.js';
import { claimName, watchLayout } from '../../src/ingest/watchClaims.js';
import { Owner } from '../../src/ingest/watchOwners.js';
import { watchFolder, type WatchOutcome, type Watcher } from '../../src/ingest/watchFolder.js';
import { readRunCsv } from '../../src/ingest/runCsv.js';
import { StoreUnavailableError, type Store } from '../../src/store/store.js';
import { farmsCsv, FARMS, runCsv, tempDir, testStore } from '../helpers/fixtures.js';
import { claimsLeft, deliver, fileSeriesText, manyFarms, placed, seriesText, sha256, waitUntil } from '../helpers/watch.js';

const SETTLE = 200;
const SITES = manyFarms(50);

let store: Store;
let cleanup: () => Promise<void>;

before(async () => {
  ({ store, cleanup } = await testStore());
  await store.upsertFarms(readFarmsCsv(Buffer.from(farmsCsv([...FARMS, ...SITES]))));
});
after(() => cleanup());

/** A fresh watched folder with a watcher on it, and what it reported. */
async function watched(o: { settleMs?: number; threads?: number } = {}): Promise<{ root: string; w: Watcher; outcomes: WatchOutcome[]; errors: unknown[]; done: () => Promise<void> }> {
  const t = tempDir();
  const root = join(t.dir, 'drop');
  mkdirSync(root);
  const outcomes: WatchOutcome[] = [];
  const errors: unknown[] = [];
  const w = await watchFolder(store, {
    dir: root,
    settleMs: o.settleMs ?? SETTLE,
    scanMs: 100,
    threads: o.threads,
    onOutcome: (x) => outcomes.push(x),
    onError: (e) => errors.push(e),
  });
  return {
    root,
    w,
    outcomes,
    errors,
    done: async () => {
      await w.stop();
      t.cleanup();
    },
  };
}

/** A run file's text for a site and issue whose values carry `version`. */
const versioned = (issue: string, version: number, steps = 97): string =>
  runCsv(issue, { steps: Array.from({ length: steps }, (_, k) => k), value: (k, e) => Math.round((version * 100 + k + e / 10) * 100) / 100 });

const spoiled = (text: string, line: number): string => {
  const lines = text.split('\n');
  lines[line - 1] = lines[line - 1]!.replace(/,[^,]*$/, ',oops');
  return lines.join('\n');
};

async function storedText(farmId: string, issue: string): Promise<string | undefined> {
  const run = await store.getRun(farmId, issue);
  return run && seriesText(run.view.toSeries());
}

describe('watch folder', () => {
  test('a symbolic link to a run file is taken as that file, and the link ends in done/', async () => {
    const h = await watched();
    const outside = tempDir();
    try {
      const text = versioned('2026110212', 3);
      const real = join(outside.dir, 'WF_A_2026110212.csv');
      writeFileSync(real, text);
      symlinkSync(real, join(h.root, 'WF_A_2026110212.csv'));
      await waitUntil(() => placed(h.root).done.length === 1, 5000, () => JSON.stringify(placed(h.root)));
      assert.equal(await storedText('WF_A', '2026110212'), fileSeriesText('WF_A_2026110212.csv', text));
      const done = placed(h.root).done[0]!;
      assert.ok(lstatSync(join(h.root, 'done', done)).isSymbolicLink(), 'the link moved, not a copy');
      assert.equal(readFileSync(real, 'utf8'), text, 'the file it names is left where it is');
      assert.deepEqual(placed(h.root).rejected, []);
    } finally {
      outside.cleanup();
      await h.done();
    }
  });

  test('a name holding a line break is rejected under its own name, with a report of one line', async () => {
    const h = await watched();
    try {
      const name = 'WF_A\nx_2026110112.csv';
      writeFileSync(join(h.root, name), versioned('2026110112', 1));
      await waitUntil(() => placed(h.root).reports.length === 1, 5000);
      const { rejected, reports } = placed(h.root);
      assert.deepEqual(rejected, [name]);
      assert.deepEqual(reports, [`${name}.error.txt`]);
      const report = readFileSync(join(h.root, 'rejected', `${name}.error.txt`), 'utf8');
      assert.equal(report.split('\n').length, 2, 'one line and its end');
      assert.ok(report.includes('WF_A\\u000ax_2026110112.csv: line '), report);
      assert.equal(h.outcomes.length, 1);
      assert.equal(h.outcomes[0]!.line.includes('\n'), false);
    } finally {
      await h.done();
    }
  });

  test('a file written slowly in parts is taken only once it has settled, whole', async () => {
    // Parts every 100 ms against a settle time of 600 ms: a margin for a slow machine.
    const h = await watched({ settleMs: 600 });
    try {
      const text = versioned('2026110100', 1, 1441);
      const file = join(h.root, 'WF_A_2026110100.csv');
      const third = Math.floor(text.length / 3);
      writeFileSync(file, text.slice(0, third));
      for (const part of [text.slice(third, 2 * third), text.slice(2 * third)]) {
        await new Promise((r) => setTimeout(r, 100));
        assert.ok(readFileSync(file).length > 0, 'still in place while being written');
        appendFileSync(file, part);
      }
      await waitUntil(() => h.outcomes.length === 1, 5000);
      assert.equal(await storedText('WF_A', '2026110100'), fileSeriesText('WF_A_2026110100.csv', text));
      assert.deepEqual(h.outcomes.map((o) => o.ok), [true]);
      assert.match(h.outcomes[0]!.line, /^ingested .*drop\/WF_A_2026110100\.csv: farm WF_A, issue 2026110100, 1441 records$/);
      assert.deepEqual(h.errors, []);
    } finally {
      await h.done();
    }
  });

  test('a file renamed into place is taken; names being written (.part, .tmp, .filepart, dot-files) are left alone', async () => {
    const h = await watched();
    try {
      const text = versioned('2026110112', 2);
      for (const name of ['WF_A_2026110112.csv.part', 'WF_A_2026110112.csv.tmp', 'WF_A_2026110112.csv.filepart', '.WF_A_2026110112.csv']) {
        writeFileSync(join(h.root, name), text);
      }
      mkdirSync(join(h.root, '.incoming'));
      writeFileSync(join(h.root, '.incoming', 'WF_A_2026110112.csv'), text);
      writeFileSync(join(h.root, 'notes.txt'), 'not a run file');
      await new Promise((r) => setTimeout(r, SETTLE * 3));
      assert.equal(await store.getRun('WF_A', '2026110112'), undefined);
      renameSync(join(h.root, 'WF_A_2026110112.csv.part'), join(h.root, 'WF_A_2026110112.csv'));
      await waitUntil(() => placed(h.root).done.length === 1, 5000);
      assert.equal(await storedText('WF_A', '2026110112'), fileSeriesText('WF_A_2026110112.csv', text));
      const left = ['.WF_A_2026110112.csv', '.incoming/WF_A_2026110112.csv', 'WF_A_2026110112.csv.filepart', 'WF_A_2026110112.csv.tmp', 'notes.txt'];
      for (const f of left) assert.equal(readFileSync(join(h.root, f), 'utf8').length > 0, true, f);
      assert.equal(placed(h.root).done.length, 1);
    } finally {
      await h.done();
    }
  });

  test('500 files dropped at once, some bad, in subfolders, read on two threads: each ends in done/ or rejected/ once and the store holds what was taken', async () => {
    const h = await watched({ threads: 2 });
    try {
      const issues = ['2026110200', '2026110212', '2026110300', '2026110312', '2026110400', '2026110412', '2026110500', '2026110512', '2026110600', '2026110612'];
      const files = new Map<string, { text: string; bad: boolean; farmId: string; issue: string }>();
      let i = 0;
      for (const site of SITES) {
        for (const issue of issues) {
          const bad = i % 23 === 7;
          const good = versioned(issue, i);
          const text = bad ? spoiled(good, 40) : good;
          const rel = `${['', 'a/', 'a/b/', 'c/'][i % 4]}${site.farmId}_${issue}.csv`;
          files.set(rel, { text, bad, farmId: site.farmId, issue });
          i++;
        }
      }
      // Staged beside the folder first, then renamed in as fast as possible.
      const staging = join(h.root, '..', 'staging');
      mkdirSync(staging);
      let n = 0;
      for (const [rel, f] of files) writeFileSync(join(staging, String(n++)), f.text);
      n = 0;
      for (const rel of files.keys()) deliver(h.root, rel, readFileSync(join(staging, String(n++))));
      const bad = [...files.values()].filter((f) => f.bad).length;
      // Each outcome is reported once its file (and report) is in place.
      await waitUntil(() => h.outcomes.length === files.size, 30_000, () => JSON.stringify({ placed: placed(h.root).done.length, errors: h.errors.map(String) }));
      const p = placed(h.root);
      assert.equal(p.rejected.length, bad);
      assert.equal(p.done.length, files.size - bad);
      assert.equal(p.reports.length, bad);
      assert.deepEqual(claimsLeft(h.root), []);
      // Each file once, under its own name (no suffix: every name was delivered once).
      const base = (f: string): string => f.slice(f.lastIndexOf('/') + 1);
      const expectedDone = [...files].filter(([, f]) => !f.bad).map(([rel]) => base(rel)).sort();
      assert.deepEqual(p.done.map(base).sort(), expectedDone);
      // Each rejected file has its report, the same line as was printed.
      for (const o of h.outcomes.filter((x) => !x.ok)) {
        const report = readFileSync(join(h.root, `${o.placedAt}.error.txt`), 'utf8');
        assert.equal(report, `${o.line}\n`);
        assert.match(o.line, /: line 40, column 16: sr value "oops" is not a plain decimal number$/);
      }
      assert.equal(h.outcomes.length, files.size);
      // The store: every good file's run, and one record per delivery with its bytes' hash.
      const placedAt = new Map(h.outcomes.map((o) => [o.file, o.placedAt]));
      const records = await store.listIngestedFiles(0, 10_000);
      const byPath = new Map(records.filter((r) => files.has(r.path)).map((r) => [r.path, r]));
      assert.equal(byPath.size, files.size);
      for (const [rel, f] of files) {
        const rec = byPath.get(rel)!;
        assert.equal(rec.result, f.bad ? 'rejected' : 'taken', rel);
        assert.equal(rec.sha256, sha256(f.text));
        assert.equal(rec.size, Buffer.byteLength(f.text));
        assert.deepEqual([rec.farmId, rec.issue], [f.farmId, f.issue]);
        const stored = await storedText(f.farmId, f.issue);
        if (f.bad) assert.equal(stored, undefined, rel);
        else assert.equal(stored, fileSeriesText(`${f.farmId}_${f.issue}.csv`, f.text), rel);
        const placedFile = readFileSync(join(h.root, placedAt.get(join(h.root, rel))!));
        assert.equal(sha256(placedFile), rec.sha256);
      }
      assert.deepEqual(h.errors, []);
    } finally {
      await h.done();
    }
  });

  test('done/ and rejected/ are never scanned again; a name delivered again is taken again, beside the first', async () => {
    const h = await watched();
    try {
      const v1 = versioned('2026110700', 1);
      const v2 = versioned('2026110700', 2);
      deliver(h.root, 'WF_C_2026110700.csv', v1);
      await waitUntil(() => placed(h.root).done.length === 1, 5000);
      deliver(h.root, 'deep/er/WF_C_2026110700.csv', v2);
      await waitUntil(() => placed(h.root).done.length === 2, 5000);
      const p = placed(h.root);
      assert.deepEqual(p.done.map((f) => f.slice(11)), ['WF_C_2026110700-1.csv', 'WF_C_2026110700.csv']);
      assert.equal(await storedText('WF_C', '2026110700'), fileSeriesText('WF_C_2026110700.csv', v2));
      // A bad name is rejected with its report; delivering it again gives a second, suffixed pair.
      deliver(h.root, 'WF_C_20261107.csv', v1);
      // A report is written just after its file is placed: wait for the outcome, which comes once both are.
      await waitUntil(() => h.outcomes.length === 3, 5000);
      deliver(h.root, 'WF_C_20261107.csv', v1);
      await waitUntil(() => h.outcomes.length === 4, 5000);
      assert.deepEqual(placed(h.root).reports, ['WF_C_20261107-1.csv.error.txt', 'WF_C_20261107.csv.error.txt']);
      assert.match(readFileSync(join(h.root, 'rejected', 'WF_C_20261107-1.csv.error.txt'), 'utf8'), /WF_C_20261107\.csv: line 0, column 0: file name "WF_C_20261107\.csv": issue "20261107" is not a real UTC date/);
      // Nothing under done/ or rejected/ is taken again, however long it waits there.
      writeFileSync(join(h.root, 'done', 'WF_A_2026110700.csv'), v1);
      writeFileSync(join(h.root, 'rejected', 'WF_A_2026110712.csv'), v1);
      await new Promise((r) => setTimeout(r, SETTLE * 3));
      assert.equal(await store.getRun('WF_A', '2026110700'), undefined);
      assert.equal(await store.getRun('WF_A', '2026110712'), undefined);
      const recs = (await store.listIngestedFiles(0, 10_000)).filter((r) => r.path.endsWith('WF_C_2026110700.csv'));
      assert.deepEqual(recs.map((r) => [r.path, r.result]), [['WF_C_2026110700.csv', 'taken'], ['deep/er/WF_C_2026110700.csv', 'taken']]);
      assert.notEqual(recs[0]!.claim, recs[1]!.claim);
      assert.equal(h.outcomes.length, 4);
    } finally {
      await h.done();
    }
  });

  test('a done/ or rejected/ folder removed by hand while watching is made again for the next file', async () => {
    const h = await watched();
    try {
      deliver(h.root, 'WF_A_2026110800.csv', versioned('2026110800', 1));
      deliver(h.root, 'WF_A_2026110.csv', versioned('2026110800', 1));
      await waitUntil(() => h.outcomes.length === 2, 5000);
      rmSync(join(h.root, 'done'), { recursive: true });
      rmSync(join(h.root, 'rejected'), { recursive: true });
      deliver(h.root, 'WF_A_2026110812.csv', versioned('2026110812', 2));
      deliver(h.root, 'WF_A_2026111.csv', versioned('2026110812', 2));
      await waitUntil(() => h.outcomes.length === 4, 5000);
      const p = placed(h.root);
      assert.deepEqual(p.done.map((f) => f.slice(11)), ['WF_A_2026110812.csv']);
      assert.deepEqual(p.reports, ['WF_A_2026111.csv.error.txt']);
      assert.deepEqual(h.errors, []);
      assert.deepEqual(claimsLeft(h.root), []);
    } finally {
      await h.done();
    }
  });

  test('two watchers on one folder take each file once', async () => {
    const h = await watched({ settleMs: 50 });
    const outcomes2: WatchOutcome[] = [];
    const w2 = await watchFolder(store, { dir: h.root, settleMs: 50, scanMs: 100, onOutcome: (x) => outcomes2.push(x) });
    try {
      const names: string[] = [];
      for (let i = 0; i < 120; i++) {
        const site = SITES[i % SITES.length]!;
        const name = `${site.farmId}_${i < 50 ? '2026110800' : i < 100 ? '2026110812' : '2026110900'}.csv`;
        names.push(name);
        deliver(h.root, `${i % 3}/${name}`, versioned(name.slice(-14, -4), 1000 + i));
      }
      await waitUntil(() => h.outcomes.length + outcomes2.length === names.length, 20_000);
      const all = [...h.outcomes, ...outcomes2];
      assert.equal(new Set(all.map((o) => o.file)).size, names.length, 'each file reported by one watcher once');
      assert.equal(new Set(all.map((o) => o.placedAt)).size, names.length);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(placed(h.root).done.length, names.length);
      assert.equal(h.outcomes.length + outcomes2.length, names.length, 'and by nobody again');
    } finally {
      await w2.stop();
      await h.done();
    }
  });
});

describe('watch folder: a failing store', () => {
  test('the file in hand stays claimed, no other is claimed, and both are taken once the store answers', async () => {
    const t = tempDir();
    const root = join(t.dir, 'drop');
    mkdirSync(root);
    let down = true;
    const failing = new Proxy(store, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => {
          if (down && (prop === 'putRun' || prop === 'recordRejectedFile' || prop === 'ingestedFile')) {
            return Promise.reject(new StoreUnavailableError('the store is not reachable'));
          }
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const errors: unknown[] = [];
    const w = await watchFolder(failing, { dir: root, settleMs: 50, scanMs: 50, onError: (e) => errors.push(e) });
    try {
      deliver(root, 'WF_A_2026111500.csv', versioned('2026111500', 5));
      await waitUntil(() => errors.length >= 3, 5000);
      deliver(root, 'WF_A_2026111512.csv', versioned('2026111512', 6));
      await new Promise((r) => setTimeout(r, 400));
      assert.equal(claimsLeft(root).length, 1, 'one file in hand');
      assert.ok(errors.every((e) => e instanceof StoreUnavailableError));
      down = false;
      await waitUntil(() => placed(root).done.length === 2 && claimsLeft(root).length === 0, 15_000);
      assert.ok(await store.getRun('WF_A', '2026111500'));
      assert.ok(await store.getRun('WF_A', '2026111512'));
    } finally {
      await w.stop();
      t.cleanup();
    }
  });
});

describe('watch folder: claims left behind', () => {
  /** A claims folder of a watcher that is gone (no heartbeat), holding the file claimed under `name`. */
  function leftClaim(root: string, rel: string, text: string): { name: string; path: string } {
    const dead = join(root, '.forecastd', 'claims', 'gone-owner');
    mkdirSync(dead, { recursive: true });
    const name = claimName(rel, Buffer.byteLength(text), Date.now());
    writeFileSync(join(dead, name), text);
    return { name, path: join(dead, name) };
  }

  test('a claim not yet recorded is ingested and moved; one recorded is only moved; one linked into place is not moved twice', async () => {
    const t = tempDir();
    const root = join(t.dir, 'drop');
    try {
      mkdirSync(root);
      // Killed before the store recorded it.
      const a = versioned('2026111000', 1);
      leftClaim(root, 'sub/WF_A_2026111000.csv', a);
      // Killed after the store recorded it, before it moved.
      const b = versioned('2026111012', 2);
      const bc = leftClaim(root, 'PV_B_2026111012.csv', b);
      const run = readRunCsv('PV_B_2026111012.csv', Buffer.from(b));
      const file = { claim: bc.name, path: 'PV_B_2026111012.csv', size: b.length, mtimeMs: 1, sha256: sha256(b), message: 'ingested PV_B_2026111012.csv', farmId: 'PV_B', issue: '2026111012' };
      const pub = await store.putRun(run, { file });
      // Killed after linking into done/, before the claim went.
      const c = versioned('2026111100', 3);
      const cc = leftClaim(root, 'WF_C_2026111100.csv', c);
      const cpub = await store.putRun(readRunCsv('WF_C_2026111100.csv', Buffer.from(c)), { file: { ...file, claim: cc.name, path: 'WF_C_2026111100.csv', sha256: sha256(c), farmId: 'WF_C', issue: '2026111100' } });
      const cFolder = join(root, 'done', new Date(cpub.publishedAt).toISOString().slice(0, 10));
      mkdirSync(cFolder, { recursive: true });
      linkSync(cc.path, join(cFolder, 'WF_C_2026111100.csv'));
      // Rejected and linked, killed before its report was written.
      const d = 'not a run';
      const dc = leftClaim(root, 'WF_A_2026111112.csv', d);
      await store.recordRejectedFile({ ...file, claim: dc.name, path: 'WF_A_2026111112.csv', sha256: sha256(d), message: 'drop/WF_A_2026111112.csv: line 1, column 1: bad', farmId: 'WF_A', issue: '2026111112' });
      mkdirSync(join(root, 'rejected'));
      linkSync(dc.path, join(root, 'rejected', 'WF_A_2026111112.csv'));

      const outcomes: WatchOutcome[] = [];
      const errors: unknown[] = [];
      const w = await watchFolder(store, { dir: root, settleMs: SETTLE, scanMs: 100, onOutcome: (x) => outcomes.push(x), onError: (e) => errors.push(e) });
      try {
        await waitUntil(() => claimsLeft(root).length === 0 && placed(root).done.length === 3, 5000, () => JSON.stringify([placed(root), errors.map(String)]));
      } finally {
        await w.stop();
      }
      const p = placed(root);
      assert.deepEqual(p.done.map((f) => f.slice(11)).sort(), ['PV_B_2026111012.csv', 'WF_A_2026111000.csv', 'WF_C_2026111100.csv']);
      assert.deepEqual(p.rejected, ['WF_A_2026111112.csv']);
      assert.equal(readFileSync(join(root, 'rejected', 'WF_A_2026111112.csv.error.txt'), 'utf8'), 'drop/WF_A_2026111112.csv: line 1, column 1: bad\n');
      assert.equal(await storedText('WF_A', '2026111000'), fileSeriesText('WF_A_2026111000.csv', a));
      assert.equal((await store.getRun('PV_B', '2026111012'))!.revision, pub.revision, 'a recorded claim is not published again');
      assert.equal((await store.getRun('WF_C', '2026111100'))!.revision, cpub.revision);
      // Only the claim that was not recorded is reported: the others were reported when they were recorded.
      assert.deepEqual(outcomes.map((o) => o.file), [join(root, 'sub/WF_A_2026111000.csv')]);
      assert.deepEqual(claimsLeft(root), []);
    } finally {
      t.cleanup();
    }
  });

  test("a live watcher's claims are left to it; once it lets go, another watcher finishes them", async () => {
    const t = tempDir();
    const root = join(t.dir, 'drop');
    mkdirSync(root);
    const outcomes: WatchOutcome[] = [];
    // A watcher of this process (so alive) that has claimed a file and is busy with it.
    const owner = await Owner.start(watchLayout(root));
    const text = versioned('2026111200', 4);
    const name = claimName('WF_A_2026111200.csv', text.length, Date.now());
    writeFileSync(join(owner.dir, name), text);
    const w = await watchFolder(store, { dir: root, settleMs: SETTLE, scanMs: 100, onOutcome: (x) => outcomes.push(x) });
    try {
      await new Promise((r) => setTimeout(r, 600));
      assert.equal(claimsLeft(root).length, 1, 'the claim of a live watcher stays with it');
      assert.equal(await store.getRun('WF_A', '2026111200'), undefined);
      // It stops without finishing (its heartbeat goes, the claim stays): the other watcher takes over.
      await owner.release();
      await waitUntil(() => outcomes.length === 1, 5000);
      assert.deepEqual(outcomes.map((o) => o.file), [join(root, 'WF_A_2026111200.csv')]);
      assert.equal(await storedText('WF_A', '2026111200'), fileSeriesText('WF_A_2026111200.csv', text));
      assert.deepEqual(claimsLeft(root), []);
    } finally {
      await w.stop();
      t.cleanup();
    }
  });
});
