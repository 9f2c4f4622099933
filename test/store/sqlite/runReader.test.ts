import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { openSeries } from '../../../src/domain/codec.js';
import { emptySeries, type RunSeries } from '../../../src/domain/run.js';
import { openStore } from '../../../src/store/openStore.js';
import { GET_RUN_SQL } from '../../../src/store/sqlite/connection.js';
import { RunReader } from '../../../src/store/sqlite/runReader.js';
import type { Store } from '../../../src/store/store.js';
import { tempDir } from '../../helpers/fixtures.js';

const ISSUE = '2026112000';

/** A run of four records whose every value is base + record. */
function series(base: number): RunSeries {
  const s = emptySeries(4);
  for (let i = 0; i < 4; i++) {
    s.steps[i] = i;
    for (const c of s.columns) c[i] = base + i;
  }
  return s;
}

/** A store file with farms F0 ... F{n-1}, each with one run whose values start at 10 × its number. */
async function storeWith(n: number): Promise<{ path: string; store: Store; cleanup: () => Promise<void> }> {
  const t = tempDir();
  const path = join(t.dir, 'store.db');
  const store = await openStore(path);
  await store.upsertFarms(Array.from({ length: n }, (_, i) => ({ farmId: `F${i}`, lat: i, lon: i, name: `f${i}`, extra: [] })));
  for (let i = 0; i < n; i++) await store.putRun({ farmId: `F${i}`, issue: ISSUE, series: series(10 * i) });
  return {
    path,
    store,
    cleanup: async () => {
      await store.close();
      t.cleanup();
    },
  };
}

/** Runs body with a reader over a fresh store of n farms; closes both after. */
async function withReader(n: number, body: (reader: RunReader, path: string) => Promise<void>): Promise<void> {
  const s = await storeWith(n);
  const reader = new RunReader(s.path);
  try {
    await body(reader, s.path);
  } finally {
    await reader.close();
    await s.cleanup();
  }
}

const firstValue = (blob: Uint8Array): number => {
  const out = new Float64Array(1);
  openSeries(blob).values(0, 0, 1, out);
  return out[0]!;
};

test('reads asked in one turn go to the read thread as one batch, each answered with its own run', () =>
  withReader(20, async (reader) => {
    const asked = [...Array.from({ length: 20 }, (_, i) => `F${i}`), 'NOPE'];
    const rows = await Promise.all(asked.map((f) => reader.read(f, ISSUE)));
    assert.equal(reader.batches, 1);
    rows.slice(0, 20).forEach((r, i) => assert.equal(firstValue(r!.series), 10 * i, `F${i}`));
    assert.equal(rows[20], undefined, 'a run that does not exist');
  }));

test('each read of a batch is answered with the blob, revision and publication time of its own run, missing runs among them', () =>
  withReader(6, async (reader, path) => {
    // Revisions already differ from run to run; publication times are made to differ too, so that a column
    // taken from another run's position shows.
    const db = new Database(path);
    try {
      db.prepare('UPDATE runs SET published_at = published_at + 1000 * CAST(substr(farm_id, 2) AS INTEGER)').run();
    } finally {
      db.close();
    }
    const asked = ['F5', 'NOPE', 'F0', 'F3', 'GONE', 'F1'];
    const rows = await Promise.all(asked.map((f) => reader.read(f, ISSUE)));
    assert.equal(reader.batches, 1);
    const check = new Database(path, { readonly: true });
    try {
      // The thread's own statement, read as named columns: a thread reading its raw row in another order fails here.
      const stored = check.prepare(GET_RUN_SQL);
      asked.forEach((f, i) => {
        const want = stored.get(f, ISSUE) as { series: Buffer; revision: number; published_at: number } | undefined;
        if (want === undefined) {
          assert.equal(rows[i], undefined, f);
          return;
        }
        assert.deepEqual({ ...rows[i]!, series: Buffer.from(rows[i]!.series) }, want, f);
      });
    } finally {
      check.close();
    }
    assert.equal(new Set(rows.filter((r) => r !== undefined).map((r) => r!.published_at)).size, 4);
  }));

test('reads asked while a batch is out go together in the next batch', () =>
  withReader(6, async (reader) => {
    const first = reader.read('F0', ISSUE);
    // The first batch leaves at the end of this turn; the next reads are asked while it is out.
    await new Promise((resolve) => setImmediate(resolve));
    const later = [1, 2, 3, 4, 5].map((i) => reader.read(`F${i}`, ISSUE));
    assert.equal(firstValue((await first)!.series), 0);
    const rows = await Promise.all(later);
    rows.forEach((r, i) => assert.equal(firstValue(r!.series), 10 * (i + 1)));
    assert.equal(reader.batches, 2);
  }));

test('a run replaced through the store is read in its new version at once', async () => {
  const s = await storeWith(1);
  try {
    const before = await s.store.getRun('F0', ISSUE);
    await s.store.putRun({ farmId: 'F0', issue: ISSUE, series: series(500) });
    const after = await s.store.getRun('F0', ISSUE);
    assert.ok(after!.revision > before!.revision);
    const out = new Float64Array(4);
    after!.view.values(3, 0, 4, out);
    assert.deepEqual([...out], [500, 501, 502, 503]);
  } finally {
    await s.cleanup();
  }
});

test('a store file the read thread cannot open fails those reads with a clear error; the next read starts a new thread', () =>
  withReader(1, async (reader, path) => {
    renameSync(path, `${path}.away`);
    await assert.rejects(reader.read('F0', ISSUE), /store read thread failed: .*unable to open/i);
    renameSync(`${path}.away`, path);
    assert.equal(firstValue((await reader.read('F0', ISSUE))!.series), 0);
  }));

test('a closed reader fails the reads it holds and every later one', () =>
  withReader(1, async (reader) => {
    const pending = reader.read('F0', ISSUE);
    await reader.close();
    await assert.rejects(pending, /the store is closed/);
    await assert.rejects(reader.read('F0', ISSUE), /the store is closed/);
  }));

/**
 * Runs, in a process of its own, a script that opens the store at `path` (as `store`) and then runs `body`,
 * never closing it: resolves with what it printed, and rejects if it does not end within 20 s.
 */
async function scriptOutput(path: string, name: string, body: string): Promise<string> {
  const script = join(path, '..', name);
  const storeModule = new URL('../../../src/store/openStore.js', import.meta.url).href;
  writeFileSync(script, `const { openStore } = await import(${JSON.stringify(storeModule)});\nconst store = await openStore(${JSON.stringify(path)});\n${body}\n`);
  return new Promise<string>((resolve, reject) => {
    execFile(process.execPath, [script], { timeout: 20_000, cwd: fileURLToPath(new URL('.', import.meta.url)) }, (err, stdout) =>
      err ? reject(err) : resolve(stdout),
    );
  });
}

test('an idle read thread does not keep a process alive', async () => {
  const s = await storeWith(1);
  try {
    // A script that reads a run and never closes its store must still end.
    const out = await scriptOutput(s.path, 'reads.mjs', `const run = await store.getRun('F0', '${ISSUE}');\nprocess.stdout.write(String(run.revision));`);
    assert.equal(out, String((await s.store.getRun('F0', ISSUE))!.revision));
  } finally {
    await s.cleanup();
  }
});

test('prepare() starts the read thread before the first read, once; the reads then use that thread', () =>
  withReader(3, async (reader) => {
    assert.equal(reader.starts, 0, 'no thread until asked');
    reader.prepare();
    reader.prepare();
    assert.equal(reader.starts, 1);
    const rows = await Promise.all([0, 1, 2].map((i) => reader.read(`F${i}`, ISSUE)));
    rows.forEach((r, i) => assert.equal(firstValue(r!.series), 10 * i));
    assert.equal(reader.starts, 1, 'the reads went to the prepared thread');
    await reader.close();
    reader.prepare();
    assert.equal(reader.starts, 1, 'a closed reader starts no thread');
  }));

test('a store prepared for reads, its thread idle, does not keep a process alive', async () => {
  const s = await storeWith(1);
  try {
    // Gives the thread time to start, then leaves the store open: the process must still end.
    const out = await scriptOutput(
      s.path,
      'prepared.mjs',
      "store.prepareReads();\nawait new Promise((resolve) => setTimeout(resolve, 300));\nprocess.stdout.write('prepared');",
    );
    assert.equal(out, 'prepared');
  } finally {
    await s.cleanup();
  }
});
