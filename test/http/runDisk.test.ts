/**
 * Copies on local disk behind a real HTTP port: a run no longer in memory
 * (--run-disk-mb) and a rendered answer that left the memory cache
 * (--body-disk-mb) are answered from their copies, byte for byte as without
 * them; a folder where no copy can be made leaves the server answering as
 * before, with the reason logged.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { Metrics } from '../../src/ops/metrics.js';
import type { Store } from '../../src/store/store.js';
import { eventually, seed, testStore } from '../helpers/fixtures.js';
import { listen } from '../helpers/http.js';
import { parsePromText, valueOf } from '../ops/promText.js';

let store: Store;
let dir: string;
let cleanup: () => Promise<void>;

const ISSUES = ['2026112000', '2026112012'];

before(async () => {
  ({ store, dir, cleanup } = await testStore());
  await seed(store, ISSUES.map((issue) => ({ farmId: 'WF_A', issue })));
});
after(() => cleanup());

/** No rendered answer and no run kept in memory: every request is planned and its run read. */
const NOTHING_IN_MEMORY = { seriesMb: 0, bodyMb: 0, latestMaxAgeS: 60 };
/** Pages of both runs, each asked once: the second of each run needs its run again. */
const PATHS = ISSUES.flatMap((issue) => [1, 2].map((page) => `/api/v1/forecast?farm_id=WF_A&issue=${issue}&size=24&page=${page}`));

async function answers(base: string): Promise<string[]> {
  const out: string[] = [];
  for (const path of PATHS) {
    const res = await fetch(base + path);
    assert.equal(res.status, 200, path);
    out.push(await res.text());
  }
  return out;
}

test('a run no longer in memory is answered from its copy on disk, the same bytes as from the store', async () => {
  const plain = await listen(store, { cache: NOTHING_IN_MEMORY });
  const metrics = new Metrics();
  const withDisk = await listen(store, { cache: { ...NOTHING_IN_MEMORY, runDiskMb: 1, diskDir: dir } }, { metrics });
  try {
    const expected = await answers(plain.base);
    // Each run's first page reads it from the store and copies it to disk; wait for the copies to be written.
    for (const path of PATHS.filter((_, i) => i % 2 === 0)) await fetch(withDisk.base + path).then((r) => r.text());
    let blobs = 0;
    for (const issue of ISSUES) blobs += (await store.getRun('WF_A', issue))!.view.encoded!.length;
    const written = await eventually(
      async () => valueOf(parsePromText(await metrics.registry.metrics()), 'forecastd_disk_cache_bytes', { cache: 'run' }),
      (bytes) => bytes === blobs,
      5000,
    );
    assert.equal(written, blobs, 'both runs copied, each as its stored blob');
    assert.deepEqual(await answers(withDisk.base), expected);
    const f = parsePromText(await metrics.registry.metrics());
    assert.equal(valueOf(f, 'forecastd_disk_cache_reads_total', { cache: 'run', way: 'at_once' }), PATHS.length, 'every run asked again came from its copy');
    assert.equal(valueOf(f, 'forecastd_disk_cache_capacity_bytes', { cache: 'run' }), 2 ** 20);
  } finally {
    await plain.app.close();
    await withDisk.app.close();
  }
});

test('a folder where no copy can be made: the reason is logged and the store answers', async () => {
  const lines: string[] = [];
  const stream = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()) });
  const metrics = new Metrics();
  const served = await listen(store, { cache: { ...NOTHING_IN_MEMORY, runDiskMb: 1, diskDir: '/proc' } }, { metrics, logger: { level: 'warn', stream } });
  try {
    assert.equal((await answers(served.base)).length, PATHS.length);
    const f = parsePromText(await metrics.registry.metrics());
    assert.equal(valueOf(f, 'forecastd_disk_cache_capacity_bytes', { cache: 'run' }), 0);
    const warning = lines.map((l) => JSON.parse(l) as { level: number; msg: string }).find((l) => l.msg.includes('--run-disk-mb'));
    assert.ok(warning, lines.join(''));
    assert.match(warning.msg, /^cannot keep copies of runs in \/proc \(--run-disk-mb\): /);
  } finally {
    await served.app.close();
  }
});

test('a rendered answer that left the memory cache is read back from its copy on disk, the same bytes', async () => {
  // Room for about 250 pages of one record: the first of 300 pages, each asked twice (kept on the second
  // sighting), have left memory by the end, and their bodies were written to disk as they left.
  const cache = { seriesMb: 8, bodyMb: 0.25, latestMaxAgeS: 60 };
  const pages = Array.from({ length: 300 }, (_, i) => `/api/v1/forecast?farm_id=WF_A&issue=${ISSUES[0]}&size=1&page=${i + 1}`);
  const plain = await listen(store, { cache });
  const metrics = new Metrics();
  const withDisk = await listen(store, { cache: { ...cache, bodyDiskMb: 1, diskDir: dir } }, { metrics });
  try {
    const expected = await Promise.all(pages.slice(0, 10).map((p) => fetch(plain.base + p).then((r) => r.text())));
    for (const p of pages) for (let k = 0; k < 2; k++) assert.equal((await fetch(withDisk.base + p)).status, 200, p);
    const before = parsePromText(await metrics.registry.metrics());
    assert.ok(valueOf(before, 'forecastd_disk_cache_bytes', { cache: 'body' }) > 0, 'bodies were written as they left memory');
    const again = [];
    for (const p of pages.slice(0, 10)) again.push(await (await fetch(withDisk.base + p)).text());
    assert.deepEqual(again, expected);
    const f = parsePromText(await metrics.registry.metrics());
    assert.equal(valueOf(f, 'forecastd_disk_cache_reads_total', { cache: 'body', way: 'at_once' }), 10, 'each of the first pages came back from disk');
    // Memory's lookups count them as misses, as for runs: the disk's reads are counted on their own.
    const lookups = (m: typeof f, result: string): number => valueOf(m, 'forecastd_cache_requests_total', { cache: 'body', result });
    assert.equal(lookups(f, 'miss') - lookups(before, 'miss'), 10);
    assert.equal(lookups(f, 'hit'), lookups(before, 'hit'));
    assert.equal(valueOf(f, 'forecastd_disk_cache_capacity_bytes', { cache: 'body' }), 2 ** 20);
  } finally {
    await plain.app.close();
    await withDisk.app.close();
  }
});
