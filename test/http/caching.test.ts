/** ETag / 304 / Cache-Control / Last-Modified, compression, and cached = uncached bytes. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.js';
import { readRunCsv } from '../../src/ingest/runCsv.js';
import { openStore } from '../../src/store/openStore.js';
import type { Store } from '../../src/store/store.js';
import { DEFAULT_RULES, cellValue, eventually, runCsv, seed, testStore, THREE_RUNS } from '../helpers/fixtures.js';

let store: Store;
let url: string;
let cleanup: () => Promise<void>;
let app: FastifyInstance;

const Q = '/api/v1/forecast?farm_id=WF_A&issue=2026112000&size=96&elements=t2m,spd100,tr';
const LATEST = '/api/v1/forecast?farm_id=WF_A&size=96';

async function publish(target: Store, farmId: string, issue: string, value?: (k: number, e: number) => number): Promise<void> {
  const run = readRunCsv(`${farmId}_${issue}.csv`, Buffer.from(runCsv(issue, value ? { value } : {})));
  await target.putRun({ farmId, issue, series: run.series });
}

async function appWith(cache: { seriesMb: number; bodyMb: number; latestMaxAgeS: number; runMaxAgeS?: number }): Promise<FastifyInstance> {
  const a = await buildApp({ store, rules: DEFAULT_RULES, version: 'test', cache });
  await a.ready();
  return a;
}

before(async () => {
  ({ store, url, cleanup } = await testStore());
  await seed(store, THREE_RUNS);
  // 32 MB: bodies up to 64 KB are kept (a 512th of the cache), so every page here is kept on its second sighting.
  app = await appWith({ seriesMb: 8, bodyMb: 32, latestMaxAgeS: 60 });
});
after(async () => {
  await app.close();
  await cleanup();
});

describe('validators and Cache-Control', () => {
  test('a strong ETag on JSON and on CSV, stable for the same query, different for another', async () => {
    const a = await app.inject(Q);
    const b = await app.inject(Q);
    const other = await app.inject(Q + '&page=2');
    const csv = await app.inject(Q + '&format=csv');
    for (const r of [a, other, csv]) {
      assert.equal(r.statusCode, 200);
      assert.match(String(r.headers.etag), /^"[^"]+"$/, 'strong, quoted');
    }
    assert.equal(a.headers.etag, b.headers.etag);
    assert.notEqual(a.headers.etag, other.headers.etag);
    assert.notEqual(a.headers.etag, csv.headers.etag);
    // Two spellings of the same window and fields are the same representation.
    const same = await app.inject(
      '/api/v1/forecast?farm_id=WF_A&issue=2026112000&elements=tr,spd100,t2m&start=2026-11-20T08:00:00%2B08:00',
    );
    assert.equal(same.headers.etag, a.headers.etag);
    assert.equal(same.body, a.body);
  });

  test('If-None-Match with the current tag is 304 without a body; weak, listed and * forms too', async () => {
    const first = await app.inject(Q);
    const tag = String(first.headers.etag);
    for (const inm of [tag, `W/${tag}`, `"nope", ${tag}`, '*']) {
      const r = await app.inject({ url: Q, headers: { 'if-none-match': inm } });
      assert.equal(r.statusCode, 304, inm);
      assert.equal(r.body, '');
      assert.equal(r.headers.etag, tag);
      assert.equal(r.headers['cache-control'], 'public, max-age=3600');
    }
    const miss = await app.inject({ url: Q, headers: { 'if-none-match': '"something-else"' } });
    assert.equal(miss.statusCode, 200);
    assert.equal(miss.body, first.body);
  });

  test('Cache-Control: an hour when issue is given (a run is replaced only by a correction, never immutable), the short max-age when the latest is implied', async () => {
    assert.equal((await app.inject(Q)).headers['cache-control'], 'public, max-age=3600');
    assert.equal((await app.inject(LATEST)).headers['cache-control'], 'public, max-age=60');
    const other = await appWith({ seriesMb: 8, bodyMb: 8, latestMaxAgeS: 15, runMaxAgeS: 600 });
    try {
      assert.equal((await other.inject(LATEST)).headers['cache-control'], 'public, max-age=15');
      assert.equal((await other.inject(Q)).headers['cache-control'], 'public, max-age=600');
    } finally {
      await other.close();
    }
  });

  test('Last-Modified is when the run was published; If-Modified-Since answers 304', async () => {
    const run = await store.getRun('WF_A', '2026112000');
    const r = await app.inject(Q);
    assert.equal(r.headers['last-modified'], new Date(run!.publishedAt).toUTCString());
    const since = await app.inject({ url: Q, headers: { 'if-modified-since': String(r.headers['last-modified']) } });
    assert.equal(since.statusCode, 304);
    const before = await app.inject({ url: Q, headers: { 'if-modified-since': new Date(run!.publishedAt - 60_000).toUTCString() } });
    assert.equal(before.statusCode, 200);
  });

  test("a JSON answer's Last-Modified moves when the site's record is imported again after the run; a CSV file's does not", async () => {
    const csvUrl = `${Q}&format=csv`;
    const json0 = await app.inject(Q);
    const csv0 = await app.inject(csvUrl);
    const { updatedAt: _, ...site } = (await store.getFarm('WF_A'))!;
    // Into the next second: Last-Modified is whole seconds.
    await new Promise((r) => setTimeout(r, 1100));
    await store.upsertFarms([{ ...site, lat: site.lat + 0.001 }]);
    try {
      await eventually(
        async () => (await app.inject(Q)).body,
        (body) => body !== json0.body,
        3000,
      );
      const json1 = await app.inject({ url: Q, headers: { 'if-modified-since': String(json0.headers['last-modified']) } });
      assert.equal(json1.statusCode, 200, 'the body changed since that date');
      assert.ok(Date.parse(String(json1.headers['last-modified'])) > Date.parse(String(json0.headers['last-modified'])));
      assert.equal((await app.inject({ url: Q, headers: { 'if-modified-since': String(json1.headers['last-modified']) } })).statusCode, 304);
      const csv1 = await app.inject({ url: csvUrl, headers: { 'if-modified-since': String(csv0.headers['last-modified']) } });
      assert.equal(csv1.statusCode, 304, 'the CSV file holds no coordinates');
    } finally {
      await store.upsertFarms([site]);
    }
  });

  test('errors carry no validators', async () => {
    const r = await app.inject('/api/v1/forecast?farm_id=NOPE');
    assert.equal(r.statusCode, 404);
    assert.equal(r.headers.etag, undefined);
  });
});

describe('replacing a run', () => {
  test('a replaced run gets a new ETag, and its cached body is never served again (same handle)', async () => {
    const old = await app.inject(LATEST);
    const oldBody = JSON.parse(old.body);
    assert.equal(oldBody.data.items[1].t2m, cellValue('2026112012', 1, 0));
    await publish(store, 'WF_A', '2026112012', (k, e) => k * 100 + e + 0.5);
    const now = await app.inject(LATEST);
    assert.notEqual(now.headers.etag, old.headers.etag);
    assert.equal(JSON.parse(now.body).data.items[1].t2m, 100.5);
    const revalidate = await app.inject({ url: LATEST, headers: { 'if-none-match': String(old.headers.etag) } });
    assert.equal(revalidate.statusCode, 200);
    assert.equal(revalidate.body, now.body);
  });

  /**
   * Asks until `ok` holds, for at most the store's bound on seeing other
   * processes' commits (10 ms on SQLite; a NOTIFY round trip, bounded by 1 s, on
   * PostgreSQL). Returns the last answer.
   */
  const within = (url: string, ok: (body: any) => boolean) =>
    eventually(() => app.inject(url), (r) => ok(JSON.parse(r.body)), store.changePollMs + 500);

  test('a run replaced by another process (another connection) is served new within the store\'s bound', async () => {
    const before = await app.inject(Q);
    const other = await openStore(url);
    try {
      await publish(other, 'WF_A', '2026112000', (k, e) => -(k + e) - 0.25);
    } finally {
      await other.close();
    }
    const after = await within(Q, (b) => b.data.items[2].t2m === -2.25);
    assert.notEqual(after.headers.etag, before.headers.etag);
    assert.equal(JSON.parse(after.body).data.items[2].t2m, -2.25);
  });

  test('a newer run published elsewhere becomes the implied latest within the store\'s bound', async () => {
    const other = await openStore(url);
    try {
      await publish(other, 'PV_B', '2026112100');
    } finally {
      await other.close();
    }
    const r = await within('/api/v1/forecast?farm_id=PV_B&size=1', (b) => b.data.issue_time_utc === '2026-11-21T00:00:00Z');
    assert.equal(JSON.parse(r.body).data.issue_time_utc, '2026-11-21T00:00:00Z');
  });

  test('moving a site (farms import) changes its forecast body and tag', async () => {
    const before = await app.inject(Q);
    await store.upsertFarms([{ farmId: 'WF_A', lat: 40.75, lon: 95.25, name: 'Wind A', extra: [] }]);
    const after = await app.inject(Q);
    assert.equal(JSON.parse(after.body).data.lat, 40.75);
    assert.notEqual(after.headers.etag, before.headers.etag);
  });
});

describe('compression', () => {
  test('gzip and br bodies decompress to exactly the identity body, with their own tags', async () => {
    for (const url of [Q, Q + '&format=csv', LATEST]) {
      const plain = await app.inject(url);
      assert.equal(plain.headers['content-encoding'], undefined);
      const gz = await app.inject({ url, headers: { 'accept-encoding': 'gzip' } });
      const br = await app.inject({ url, headers: { 'accept-encoding': 'gzip, deflate, br' } });
      assert.equal(gz.headers['content-encoding'], 'gzip');
      assert.equal(br.headers['content-encoding'], 'br');
      assert.ok(gunzipSync(gz.rawPayload).equals(plain.rawPayload));
      assert.ok(brotliDecompressSync(br.rawPayload).equals(plain.rawPayload));
      assert.ok(gz.rawPayload.length < plain.rawPayload.length);
      assert.equal(new Set([plain.headers.etag, gz.headers.etag, br.headers.etag]).size, 3);
      assert.match(String(plain.headers.vary), /Accept-Encoding/);
      // Any coding's tag revalidates the resource.
      const r = await app.inject({ url, headers: { 'if-none-match': String(gz.headers.etag) } });
      assert.equal(r.statusCode, 304);
      // The identity answer's headers, kept with the remembered answer, are not those of a coded one.
      const again = await app.inject(url);
      assert.equal(again.headers['content-encoding'], undefined);
      assert.equal(again.headers.etag, plain.headers.etag);
      assert.equal(again.headers['content-length'], String(plain.rawPayload.length));
      assert.ok(again.rawPayload.equals(plain.rawPayload));
    }
  });

  test('q=0 refuses a coding; bodies under 1 KB stay identity', async () => {
    const noBr = await app.inject({ url: Q, headers: { 'accept-encoding': 'br;q=0, gzip' } });
    assert.equal(noBr.headers['content-encoding'], 'gzip');
    const none = await app.inject({ url: Q, headers: { 'accept-encoding': 'identity' } });
    assert.equal(none.headers['content-encoding'], undefined);
    const small = await app.inject({ url: '/api/v1/forecast?farm_id=WF_A&size=1&elements=t2m', headers: { 'accept-encoding': 'gzip, br' } });
    assert.ok(small.rawPayload.length < 1024);
    assert.equal(small.headers['content-encoding'], undefined);
  });

  test('a 304 carries the tag of the coding the 200 would have used: the compressed one, or identity for a small body', async () => {
    const smallUrl = '/api/v1/forecast?farm_id=WF_A&size=1&elements=t2m';
    for (const url of [Q, Q + '&page=4', smallUrl, smallUrl + '&page=2']) {
      const headers = { 'accept-encoding': 'gzip' };
      // Asked afresh each time (a new URL for the first two sightings too): not kept, kept, remembered.
      for (let i = 0; i < 3; i++) {
        const full = await app.inject({ url, headers });
        const plain = await app.inject(url);
        const notModified = await app.inject({ url, headers: { ...headers, 'if-none-match': String(full.headers.etag) } });
        assert.equal(notModified.statusCode, 304, url);
        assert.equal(notModified.headers.etag, full.headers.etag, url);
        if (url.startsWith(smallUrl)) assert.equal(full.headers.etag, plain.headers.etag, url);
        else assert.notEqual(full.headers.etag, plain.headers.etag, url);
      }
    }
  });
});

describe('cached and uncached answers are byte-identical', () => {
  test('the same URL answers by its Accept header each time, however often it was asked', async () => {
    for (let i = 0; i < 3; i++) {
      const json = await app.inject(Q);
      const csv = await app.inject({ url: Q, headers: { accept: 'text/csv' } });
      assert.match(String(json.headers['content-type']), /^application\/json/);
      assert.match(String(csv.headers['content-type']), /^text\/csv/);
      assert.match(csv.body, /^date_time,t2m,spd100,tr\n/);
      assert.notEqual(json.headers.etag, csv.headers.etag);
    }
  });

  test('for JSON pages, CSV downloads and coordinate queries', async () => {
    const uncached = await appWith({ seriesMb: 0, bodyMb: 0, latestMaxAgeS: 60 });
    try {
      const urls = [
        Q,
        Q + '&page=3',
        LATEST,
        '/api/v1/forecast?farm_id=PV_B&issue=2026112000&format=csv&elements=sr,tr',
        '/api/v1/forecast?lat=40.76&lon=95.25&size=7&page=5',
        '/api/v1/forecast?farm_id=WF_A&start=2026-11-20T20:00&end=2026-11-21T03:00',
      ];
      for (const url of urls) {
        // Rendered and not kept; rendered and kept (second sighting); replayed as remembered for the URL.
        const warm1 = await app.inject(url);
        const warm2 = await app.inject(url);
        const warm3 = await app.inject(url);
        const cold = await uncached.inject(url);
        assert.equal(warm1.statusCode, 200, url);
        assert.ok(warm1.rawPayload.equals(warm2.rawPayload), url);
        assert.ok(warm3.rawPayload.equals(cold.rawPayload), url);
        assert.ok(warm2.rawPayload.equals(cold.rawPayload), url);
        for (const warm of [warm1, warm2, warm3]) {
          for (const h of ['etag', 'content-type', 'last-modified', 'cache-control', 'content-length']) {
            assert.equal(warm.headers[h], cold.headers[h], `${h} of ${url}`);
          }
        }
      }
    } finally {
      await uncached.close();
    }
  });

  test('a remembered answer whose body has since left the body cache is answered afresh, with the same bytes', async () => {
    // 1 MB: bodies up to 2 KB are kept, and about 900 KB of them fit.
    const small = await appWith({ seriesMb: 8, bodyMb: 1, latestMaxAgeS: 60 });
    try {
      const first = '/api/v1/forecast?farm_id=WF_A&issue=2026112000&size=24&elements=t2m';
      const original = await small.inject(first);
      for (let i = 0; i < 3; i++) assert.ok((await small.inject(first)).rawPayload.equals(original.rawPayload));
      // Other small pages, each asked three times (kept, then read again), until more than the cache holds went through it.
      let flooded = 0;
      for (const e of ['t2m', 'rh2m', 'psfc', 'tcc', 'tp', 'spd10', 'dir10', 'spd30', 'spd50', 'spd70', 'spd100', 'dir100', 'tr', 'dr', 'sr']) {
        for (let page = 1; page <= 60; page++) {
          const url = `/api/v1/forecast?farm_id=PV_B&issue=2026112000&size=24&elements=${e}&page=${page}`;
          for (let i = 0; i < 3; i++) assert.equal((await small.inject(url)).statusCode, 200);
          flooded += (await small.inject(url)).rawPayload.length;
        }
      }
      assert.ok(flooded > 1024 * 1024, `${flooded} bytes went through a 1 MB cache`);
      const again = await small.inject(first);
      assert.equal(again.statusCode, 200);
      assert.ok(again.rawPayload.length > 0);
      assert.ok(again.rawPayload.equals(original.rawPayload));
      assert.equal(again.headers['content-length'], original.headers['content-length']);
      assert.equal(again.headers.etag, original.headers.etag);
    } finally {
      await small.close();
    }
  });
});
