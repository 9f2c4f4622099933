import assert from 'node:assert/strict';
import { mkdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { MAX_FARMS_FILE_BYTES } from '../../src/domain/limits.js';
import { expandPaths, importFarmsFile, ingestPaths, ingestRunFile, type FileOutcome } from '../../src/ingest/ingestFiles.js';
import type { Store } from '../../src/store/store.js';
import { cellValue, farmsCsv, runCsv, testStore } from '../helpers/fixtures.js';

let store: Store;
let dir: string;
let cleanup: () => Promise<void>;

before(async () => {
  ({ store, dir, cleanup } = await testStore());
  writeFileSync(join(dir, 'farms.csv'), farmsCsv());
  const r = await importFarmsFile(store, join(dir, 'farms.csv'));
  assert.deepEqual(r, { ok: true, farms: 3 });
});
after(() => cleanup());

function write(name: string, text: string, sub = 'in'): string {
  mkdirSync(join(dir, sub), { recursive: true });
  const p = join(dir, sub, name);
  writeFileSync(p, text);
  return p;
}

/** A valid file whose row `line` (1-based file line) is spoiled in its last column. */
function spoiled(issue: string, line: number, opts = {}): string {
  const lines = runCsv(issue, opts).split('\n');
  lines[line - 1] = lines[line - 1]!.replace(/,[^,]*$/, ',oops');
  return lines.join('\n');
}

test('a file rejected half-way leaves nothing of it visible', async () => {
  const file = write('WF_A_2026112000.csv', spoiled('2026112000', 1000));
  const o = await ingestRunFile(store, file);
  assert.equal(o.ok, false);
  assert.deepEqual(!o.ok && [o.fault.line, o.fault.column], [1000, 16]);
  assert.equal(await store.getRun('WF_A', '2026112000'), undefined);
  assert.equal(await store.latestIssue('WF_A'), undefined);
  assert.equal((await store.listIssues(undefined, 0, 10)).total, 0);
});

test('a bad replacement leaves the good earlier data untouched', async () => {
  const good = write('WF_A_2026112012.csv', runCsv('2026112012'));
  const ok = await ingestRunFile(store, good);
  assert.equal(ok.ok, true);
  const before = await store.getRun('WF_A', '2026112012');
  assert.equal(before!.view.steps.length, 1441);

  const bad = write('WF_A_2026112012.csv', spoiled('2026112012', 1442, { value: () => 1 }), 'bad');
  const o = await ingestRunFile(store, bad);
  assert.equal(o.ok, false);
  const after = await store.getRun('WF_A', '2026112012');
  assert.equal(after!.revision, before!.revision);
  assert.equal(after!.view.toSeries().columns[0]![700], cellValue('2026112012', 700, 0));
});

test('a good replacement replaces the whole run', async () => {
  const f = write('WF_A_2026112012.csv', runCsv('2026112012', { steps: [0, 4, 8], value: (k, e) => k + e }), 'repl');
  const o = await ingestRunFile(store, f);
  assert.ok(o.ok);
  const run = await store.getRun('WF_A', '2026112012');
  assert.deepEqual([...run!.view.steps], [0, 4, 8]);
  assert.equal(run!.view.toSeries().columns[3]![2], 11);
});

test('a run of an unregistered farm is rejected, naming the farm', async () => {
  const f = write('NOPE_2026112000.csv', runCsv('2026112000'));
  const o = await ingestRunFile(store, f);
  assert.equal(o.ok, false);
  assert.match(!o.ok ? o.fault.message : '', /NOPE.*not registered/);
});

test('ingestPaths takes folders recursively, reports each file, and keeps going after a rejection', async () => {
  write('PV_B_2026112100.csv', runCsv('2026112100'), 'batch');
  write('WF_C_2026112100.csv', spoiled('2026112100', 5), 'batch');
  write('WF_C_2026112106.csv', runCsv('2026112106'), 'batch/deeper');
  write('notes.txt', 'not a csv', 'batch');
  const outcomes: FileOutcome[] = [];
  const counts = await ingestPaths(store, [join(dir, 'batch'), join(dir, 'missing.csv')], (o) => outcomes.push(o));
  assert.deepEqual(counts, { accepted: 2, rejected: 2 });
  const rejected = outcomes.filter((o) => !o.ok).map((o) => o.file);
  assert.deepEqual(rejected.sort(), [join(dir, 'batch', 'WF_C_2026112100.csv'), join(dir, 'missing.csv')].sort());
  assert.ok(await store.getRun('PV_B', '2026112100'));
  assert.ok(await store.getRun('WF_C', '2026112106'));
  assert.equal(await store.getRun('WF_C', '2026112100'), undefined);
});

test('ingestPaths on reading threads commits in file order and reports what ingest on one thread reports', async () => {
  // Two deliveries of one run in folders a/ and b/: the later in path order must stay.
  write('WF_A_2026112300.csv', runCsv('2026112300', { value: (k, e) => k + e }), 'order/a');
  write('WF_A_2026112300.csv', runCsv('2026112300', { value: (k, e) => 2 * k + e }), 'order/b');
  write('NOPE_2026112200.csv', runCsv('2026112200'), 'order/b');
  write('WF_C_2026112200.csv', spoiled('2026112200', 7), 'order/c');
  for (let h = 0; h < 4; h++) write(`PV_B_202611220${h}.csv`, runCsv(`202611220${h}`), 'order/c');
  const paths = [join(dir, 'order'), join(dir, 'order', 'gone.csv')];

  const threaded: FileOutcome[] = [];
  assert.deepEqual(await ingestPaths(store, paths, (o) => threaded.push(o), 2), { accepted: 6, rejected: 3 });
  const run = await store.getRun('WF_A', '2026112300');
  assert.equal(run!.view.toSeries().columns[1]![100], 201);
  assert.equal(run!.revision, (threaded.find((o) => o.file.endsWith('b/WF_A_2026112300.csv')) as { revision: number }).revision);

  const inline: FileOutcome[] = [];
  assert.deepEqual(await ingestPaths(store, paths, (o) => inline.push(o), 0), { accepted: 6, rejected: 3 });
  const shape = (os: FileOutcome[]) => os.map((o) => (o.ok ? [o.file, o.farmId, o.issue, o.records] : [o.file, o.fault]));
  assert.deepEqual(shape(threaded), shape(inline));
  const files = threaded.map((o) => o.file);
  assert.deepEqual(files.slice(0, 1), [join(dir, 'order', 'gone.csv')]);
  assert.deepEqual(files.slice(1), [...files.slice(1)].sort());
});

test('expandPaths lists *.csv files sorted and reports missing paths', async () => {
  const { files, missing } = await expandPaths([join(dir, 'batch'), join(dir, 'nothing-here')]);
  assert.deepEqual(files, [
    join(dir, 'batch', 'PV_B_2026112100.csv'),
    join(dir, 'batch', 'WF_C_2026112100.csv'),
    join(dir, 'batch', 'deeper', 'WF_C_2026112106.csv'),
  ]);
  assert.deepEqual(missing, [join(dir, 'nothing-here')]);
});

test('a farm registry that is a device or too large is rejected as a whole, and changes no site', async () => {
  assert.deepEqual(await importFarmsFile(store, '/dev/zero'), { ok: false, fault: { line: 0, column: 0, message: 'not a regular file' } });
  const big = write('farms-big.csv', 'farm_id,lat,lon,name\nWF_A,1,2,Moved\n');
  truncateSync(big, MAX_FARMS_FILE_BYTES + 1);
  assert.deepEqual(await importFarmsFile(store, big), {
    ok: false,
    fault: { line: 0, column: 0, message: `file is ${MAX_FARMS_FILE_BYTES + 1} bytes; a farm registry is at most ${MAX_FARMS_FILE_BYTES} bytes` },
  });
  assert.equal((await store.getFarm('WF_A'))!.lat, 40.5);
});

test('a rejected farm registry changes no site', async () => {
  const f = write('farms2.csv', 'farm_id,lat,lon,name\nWF_A,1,2,Moved\nBAD ID,1,2,x\n');
  const r = await importFarmsFile(store, f);
  assert.equal(r.ok, false);
  assert.deepEqual(!r.ok && [r.fault.line, r.fault.column], [3, 1]);
  assert.equal((await store.getFarm('WF_A'))!.lat, 40.5);
});

test('a file that cannot be read is rejected as a whole, naming the reason, by ingest and by farms import', async () => {
  const folder = join(dir, 'not-a-file', 'WF_A_2026112100.csv');
  mkdirSync(folder, { recursive: true });
  const o = await ingestRunFile(store, folder);
  assert.deepEqual(!o.ok && o.fault, { line: 0, column: 0, message: 'cannot read file (EISDIR)' });
  assert.deepEqual(await importFarmsFile(store, join(dir, 'no-such-farms.csv')), {
    ok: false,
    fault: { line: 0, column: 0, message: 'cannot read file (ENOENT)' },
  });
});
