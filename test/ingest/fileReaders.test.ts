import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { decodeSeries } from '../../src/domain/codec.js';
import { MAX_RUN_FILE_BYTES } from '../../src/domain/limits.js';
import { FileReaders } from '../../src/ingest/fileReaders.js';
import { prepareRunFile } from '../../src/ingest/preparedFile.js';
import { cellValue, runCsv } from '../helpers/fixtures.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'forecastd-readers-'));
});
after(() => rm(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

test('a file prepared on a thread is read, validated and encoded exactly as on the calling thread', async () => {
  const good = write('WF_A_2026112000.csv', runCsv('2026112000'));
  const readers = new FileReaders(1);
  try {
    const p = await readers.prepare(good);
    assert.ok(p.ok);
    assert.deepEqual([p.farmId, p.issue, p.series.records], ['WF_A', '2026112000', 1441]);
    const series = decodeSeries(p.series.blob);
    assert.equal(series.columns[4]![700], cellValue('2026112000', 700, 4));
    assert.deepEqual(p, prepareRunFile(good));
  } finally {
    await readers.close();
  }
});

test('a fault of a file comes back as its fault, naming line and column, and an unreadable file as a whole', async () => {
  const lines = runCsv('2026112006').split('\n');
  lines[9] = lines[9]!.replace(/,[^,]*$/, ',oops');
  const bad = write('WF_A_2026112006.csv', lines.join('\n'));
  const folder = join(dir, 'WF_A_2026112012.csv');
  mkdirSync(folder);
  const readers = new FileReaders(2);
  try {
    const [b, f] = await Promise.all([readers.prepare(bad), readers.prepare(folder)]);
    assert.deepEqual(b, prepareRunFile(bad));
    assert.deepEqual(!b.ok && [b.fault.line, b.fault.column], [10, 16]);
    assert.deepEqual(f, { ok: false, fault: { line: 0, column: 0, message: 'cannot read file (EISDIR)' }, code: 'EISDIR' });
  } finally {
    await readers.close();
  }
});

test('a file delivered under another name is checked against that name, and its size and SHA-256 come back too', async () => {
  const text = runCsv('2026112100');
  const claim = write('claim-7f3a.csv', text);
  const readers = new FileReaders(1);
  try {
    const p = await readers.prepare(claim, { name: 'WF_C_2026112100.csv', facts: true });
    assert.deepEqual(p.ok && [p.farmId, p.issue], ['WF_C', '2026112100']);
    assert.deepEqual(p.facts, { size: Buffer.byteLength(text), sha256: createHash('sha256').update(text).digest('hex') });
    const wrong = await readers.prepare(claim, { name: 'WF_C_2026112112.csv' });
    assert.equal(wrong.ok, false);
    assert.equal(wrong.facts, undefined);
    const gone = await readers.prepare(join(dir, 'gone.csv'), { facts: true });
    assert.deepEqual(gone, {
      ok: false,
      fault: { line: 0, column: 0, message: 'cannot read file (ENOENT)' },
      code: 'ENOENT',
      facts: { size: 0, sha256: createHash('sha256').digest('hex') },
    });
  } finally {
    await readers.close();
  }
});

test('a file too large to be a run file is rejected as a whole without being read into memory, its size and hash still known', async () => {
  const big = join(dir, 'WF_A_2026112200.csv');
  writeFileSync(big, runCsv('2026112200'));
  truncateSync(big, MAX_RUN_FILE_BYTES + 1);
  const fault = { line: 0, column: 0, message: `file is ${MAX_RUN_FILE_BYTES + 1} bytes; a run file is at most ${MAX_RUN_FILE_BYTES} bytes` };
  assert.deepEqual(prepareRunFile(big), { ok: false, fault });
  const readers = new FileReaders(1);
  try {
    const p = await readers.prepare(big, { facts: true });
    assert.deepEqual(p, { ok: false, fault, facts: { size: MAX_RUN_FILE_BYTES + 1, sha256: createHash('sha256').update(readFileSync(big)).digest('hex') } });
  } finally {
    await readers.close();
  }
  // Exactly at the limit it is read, and judged on its content.
  truncateSync(big, MAX_RUN_FILE_BYTES);
  const atLimit = prepareRunFile(big);
  assert.equal(atLimit.ok, false);
  assert.doesNotMatch(!atLimit.ok ? atLimit.fault.message : '', /bytes; a run file/);
});

test('a device or a named pipe is rejected as no regular file, without reading or waiting', async () => {
  const pipe = join(dir, 'WF_A_2026112206.csv');
  execFileSync('mkfifo', [pipe]);
  const fault = { line: 0, column: 0, message: 'not a regular file' };
  assert.deepEqual(prepareRunFile('/dev/zero'), { ok: false, fault });
  assert.deepEqual(prepareRunFile(pipe), { ok: false, fault });
  const readers = new FileReaders(1);
  try {
    assert.deepEqual(await readers.prepare(pipe, { facts: true }), { ok: false, fault, facts: { size: 0, sha256: createHash('sha256').digest('hex') } });
  } finally {
    await readers.close();
  }
});

test('many files at once over several threads: each answer is its own file', async () => {
  const files: string[] = [];
  for (let h = 0; h < 12; h++) {
    const issue = `202611${String(20 + Math.floor(h / 4)).padStart(2, '0')}${String((h % 4) * 6).padStart(2, '0')}`;
    files.push(write(`PV_B_${issue}.csv`, runCsv(issue, { steps: [0, h + 1, 2 * h + 2] })));
  }
  const readers = new FileReaders(3);
  try {
    const prepared = await Promise.all(files.map((f) => readers.prepare(f)));
    assert.deepEqual(prepared, files.map((f) => prepareRunFile(f)));
    assert.deepEqual(
      prepared.map((p) => p.ok && p.issue),
      files.map((f) => f.slice(-14, -4)),
    );
  } finally {
    await readers.close();
  }
});

test('once closed, files in hand and new ones fail with a message, and nothing is left running', async () => {
  const good = write('WF_A_2026112018.csv', runCsv('2026112018'));
  const readers = new FileReaders(1);
  const inHand = assert.rejects(readers.prepare(good), /file reading threads are closed/);
  await readers.close();
  await inHand;
  await assert.rejects(readers.prepare(good), /file reading threads are closed/);
});
