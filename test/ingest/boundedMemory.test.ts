/**
 * A run file of any shape within the 16 MiB bound is refused within a bounded heap: reading it makes no
 * string per line, per cell or per doubled quote of the whole file; nor does a farm registry of millions of
 * bad lines. Each file is prepared on a thread
 * whose heap is limited to 64 MB; a reader that made millions of strings (or a rope of millions of pieces)
 * ran that thread out of memory instead of naming the file's fault.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { after, before, test } from 'node:test';
import { ELEMENT_NAMES } from '../../src/domain/elements.js';
import { MAX_RUN_FILE_BYTES } from '../../src/domain/limits.js';
import type { PreparedFile } from '../../src/ingest/preparedFile.js';
import { runCsv } from '../helpers/fixtures.js';

const HEADER = ['date_time', ...ELEMENT_NAMES].join(',');
const ISSUE = '2026112000';
let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'forecastd-bounded-'));
});
after(() => rm(dir, { recursive: true, force: true }));

/** Prepares the file on a thread with a heap of at most `heapMb`: its outcome, or how the thread ended. */
function prepareWithin(file: string, heapMb: number): Promise<PreparedFile | { died: string }> {
  const module = new URL('../../src/ingest/preparedFile.js', import.meta.url).href;
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     import(workerData.module).then(({ prepareRunFile }) => parentPort.postMessage(prepareRunFile(workerData.file)));`,
    { eval: true, workerData: { module, file }, resourceLimits: { maxOldGenerationSizeMb: heapMb } },
  );
  return new Promise((resolve) => {
    worker.once('message', (p: PreparedFile) => {
      resolve(p);
      void worker.terminate();
    });
    worker.once('error', (err: Error & { code?: string }) => resolve({ died: err.code ?? err.message }));
  });
}

/** A run file of exactly 16 MiB: the valid head, then `unit` repeated, then `tail`. */
function fileOf(name: string, head: string, unit: string, tail = '\n'): string {
  const room = MAX_RUN_FILE_BYTES - Buffer.byteLength(head) - Buffer.byteLength(tail);
  const body = unit.repeat(Math.floor(room / unit.length));
  const p = join(dir, `${name}_${ISSUE}.csv`);
  writeFileSync(p, head + body + ' '.repeat(room - body.length) + tail);
  return p;
}

const firstRows = runCsv(ISSUE).split('\n').slice(0, 3).join('\n');

test('16 MiB of one-byte lines, of header cells, of row cells or of doubled quotes: each refused with its fault within 64 MB of heap', async () => {
  const cases: [string, RegExp][] = [
    [fileOf('LINES', HEADER + '\n', '1\n'), /^file holds 83\d{5} records; a run has at most 1441/],
    [fileOf('HEADER', HEADER, ',ab'), /^header names unknown field "ab"/],
    [fileOf('ROW', firstRows, ',1'), /^row has 83\d{5} cells, expected 16$/],
    [fileOf('QUOTES', firstRows.replace(/,([^,]*)$/, ',"'), 'a""', '"\n'), /^\w+ value "a\\"a\\"a.*…" is not a plain decimal number$/],
  ];
  for (const [file, message] of cases) {
    const p = await prepareWithin(file, 64);
    assert.ok(!('died' in p), `${file}: the reading thread ended (${'died' in p && p.died})`);
    assert.ok(!p.ok);
    assert.match(p.fault.message, message, file);
  }
});

test('a farm registry of 16 MiB of one-byte lines is refused at its first row within 64 MB of heap', async () => {
  const file = join(dir, 'farms.csv');
  writeFileSync(file, 'farm_id,lat,lon,name\n' + '1\n'.repeat(MAX_RUN_FILE_BYTES / 2));
  const module = new URL('../../src/ingest/farmsCsv.js', import.meta.url).href;
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const { readFileSync } = require('node:fs');
     import(workerData.module).then(({ readFarmsCsv }) => {
       try { readFarmsCsv(readFileSync(workerData.file)); parentPort.postMessage('accepted'); }
       catch (err) { parentPort.postMessage(err.fault ?? String(err)); }
     });`,
    { eval: true, workerData: { module, file }, resourceLimits: { maxOldGenerationSizeMb: 64 } },
  );
  const outcome = await new Promise<unknown>((resolve) => {
    worker.once('message', (m: unknown) => {
      resolve(m);
      void worker.terminate();
    });
    worker.once('error', (err: Error & { code?: string }) => resolve({ died: err.code ?? err.message }));
  });
  assert.deepEqual(outcome, { line: 2, column: 2, message: 'row has 1 cell, expected 4' });
});
