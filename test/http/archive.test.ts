/**
 * GET /api/v1/forecast/archive over a real port: a zip of one entry per visible site of the run, each
 * byte-identical to that site's CSV download for the same fields and window; read back by Python's zipfile
 * (an independent reader), with the scope, the default run, the validators and the errors of section 17.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../src/http/context.js';
import { Metrics } from '../../src/ops/metrics.js';
import { StoreUnavailableError, type Store } from '../../src/store/store.js';
import { eventually, seed, tempDir, testStore } from '../helpers/fixtures.js';
import { listen } from '../helpers/http.js';
import { bearer, createKey } from '../helpers/keys.js';
import { parsePromText, valueOf } from '../ops/promText.js';

const OLD = '2026112000';
const NEW = '2026112012';

let store: Store;
let cleanup: () => Promise<void>;
const apps: FastifyInstance[] = [];
const tmp = tempDir('forecastd-archive-');

async function serve(ctx: Partial<AppContext> = {}): Promise<string> {
  const { app, base } = await listen(store, ctx);
  apps.push(app);
  return base;
}

interface Unzipped {
  ok: boolean;
  entries: { name: string; method: number; data: string }[];
}

/** The archive as Python's zipfile reads it: CRCs checked, names and bytes (base64) in order. */
function unzip(body: Buffer): Unzipped {
  const file = join(tmp.dir, `a${Math.random().toString(36).slice(2)}.zip`);
  writeFileSync(file, body);
  const py = spawnSync(
    'python3',
    [
      '-c',
      `import sys, json, zipfile, base64
z = zipfile.ZipFile(sys.argv[1])
print(json.dumps({"ok": z.testzip() is None, "entries": [{"name": i.filename, "method": i.compress_type, "data": base64.b64encode(z.read(i)).decode()} for i in z.infolist()]}))`,
      file,
    ],
    { encoding: 'utf8' },
  );
  assert.equal(py.status, 0, py.stderr);
  return JSON.parse(py.stdout) as Unzipped;
}

async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

before(async () => {
  ({ store, cleanup } = await testStore());
  await seed(store, [
    { farmId: 'WF_A', issue: OLD },
    { farmId: 'PV_B', issue: OLD, opts: { steps: [0, 1, 2, 3, 500, 1440] } },
    { farmId: 'WF_C', issue: OLD, opts: { value: (k, e) => (k % 7 === 3 && e === 4 ? null : k * 0.25 - e) } },
    { farmId: 'WF_A', issue: NEW },
    { farmId: 'PV_B', issue: NEW },
  ]);
});

after(async () => {
  for (const app of apps) await app.close();
  await cleanup?.();
  tmp.cleanup();
});

describe('without keys', () => {
  let at = '';
  before(async () => {
    at = await serve();
  });

  for (const query of ['', '&elements=t2m,spd100,tr', '&start=2026-11-20T12:00%2B08:00&end=2026-11-21T08:00%2B08:00&elements=tp', '&start=2030-01-01&end=2030-01-02']) {
    test(`every entry is the site's CSV download, byte for byte (issue=${OLD}${query})`, async () => {
      const res = await get(`${at}/api/v1/forecast/archive?issue=${OLD}${query}`);
      assert.equal(res.status, 200, res.body.toString().slice(0, 200));
      assert.equal(res.headers.get('content-type'), 'application/zip');
      assert.equal(res.headers.get('content-disposition'), `attachment; filename="forecast_${OLD}.zip"`);
      assert.equal(res.headers.get('forecast-issue'), OLD);
      const zip = unzip(res.body);
      assert.ok(zip.ok, 'a CRC does not match');
      assert.deepEqual(zip.entries.map((e) => e.name), ['PV_B_2026112000.csv', 'WF_A_2026112000.csv', 'WF_C_2026112000.csv']);
      for (const e of zip.entries) {
        assert.equal(e.method, 0);
        const farm = e.name.slice(0, -'_2026112000.csv'.length);
        const single = await get(`${at}/api/v1/forecast?farm_id=${farm}&issue=${OLD}${query}&format=csv`);
        assert.equal(single.status, 200);
        assert.equal(Buffer.from(e.data, 'base64').toString('utf8'), single.body.toString('utf8'), e.name);
      }
    });
  }

  test('without issue, the newest run; its Last-Modified is its newest publication', async () => {
    const res = await get(`${at}/api/v1/forecast/archive`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('forecast-issue'), NEW);
    assert.deepEqual(unzip(res.body).entries.map((e) => e.name), ['PV_B_2026112012.csv', 'WF_A_2026112012.csv']);
    const newest = Math.max(...(await store.runVersions(NEW)).map((r) => r.publishedAt));
    assert.equal(res.headers.get('last-modified'), new Date(newest).toUTCString());
  });

  test('If-Modified-Since revalidates like a forecast answer (If-None-Match first); HEAD sends the head of a GET', async () => {
    const first = await get(`${at}/api/v1/forecast/archive?issue=${OLD}`);
    const lastModified = first.headers.get('last-modified')!;
    assert.equal((await get(`${at}/api/v1/forecast/archive?issue=${OLD}`, { 'if-modified-since': lastModified })).status, 304);
    const earlier = new Date(Date.parse(lastModified) - 1000).toUTCString();
    assert.equal((await get(`${at}/api/v1/forecast/archive?issue=${OLD}`, { 'if-modified-since': earlier })).status, 200);
    // A tag that does not match decides, whatever the date says.
    assert.equal((await get(`${at}/api/v1/forecast/archive?issue=${OLD}`, { 'if-none-match': '"other"', 'if-modified-since': lastModified })).status, 200);
    const head = await fetch(`${at}/api/v1/forecast/archive?issue=${OLD}`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    for (const h of ['content-type', 'content-disposition', 'etag', 'last-modified', 'forecast-issue', 'cache-control']) {
      assert.equal(head.headers.get(h), first.headers.get(h), h);
    }
    assert.equal(head.headers.get('content-length'), null, 'no length: the GET streams');
  });

  test('the ETag revalidates (304) until a run in the archive is replaced', async () => {
    const first = await get(`${at}/api/v1/forecast/archive?issue=${NEW}`);
    const tag = first.headers.get('etag')!;
    assert.match(tag, /^"z[\w-]+"$/);
    const again = await get(`${at}/api/v1/forecast/archive?issue=${NEW}`, { 'if-none-match': tag });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    // Another query of the same run is another archive.
    assert.notEqual((await get(`${at}/api/v1/forecast/archive?issue=${NEW}&elements=t2m`)).headers.get('etag'), tag);
    await seed(store, [{ farmId: 'WF_A', issue: NEW, opts: { value: () => 1.5 } }]);
    const changed = await eventually(() => get(`${at}/api/v1/forecast/archive?issue=${NEW}`, { 'if-none-match': tag }), (r) => r.status === 200, 3000);
    assert.equal(changed.status, 200);
    assert.notEqual(changed.headers.get('etag'), tag);
    const a = unzip(changed.body).entries.find((e) => e.name === `WF_A_${NEW}.csv`)!;
    assert.match(Buffer.from(a.data, 'base64').toString(), /,1\.5,1\.5,/);
  });

  test('HEAD answers the headers without the archive', async () => {
    const res = await fetch(`${at}/api/v1/forecast/archive?issue=${OLD}`, { method: 'HEAD' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/zip');
    assert.equal((await res.arrayBuffer()).byteLength, 0);
  });

  test('an unknown run is 404 40401, a malformed one or a bad window 400 40001', async () => {
    const cases: [string, number, number, RegExp][] = [
      ['issue=2026111900', 404, 40401, /Issue 2026111900 does not exist/],
      ['issue=2026023000', 400, 40001, /issue/],
      ['issue=abc', 400, 40001, /issue/],
      ['start=tomorrow', 400, 40001, /start/],
      ['start=2026-11-21&end=2026-11-20', 400, 40001, /start must not be later than end/],
      // No end: the run's last time is the end, and a start after it is refused before any byte of a zip.
      [`issue=${OLD}&start=2030-01-01`, 400, 40001, /start must not be later than end/],
      ['elements=wind', 400, 40001, /wind/],
    ];
    for (const [q, status, code, message] of cases) {
      const res = await get(`${at}/api/v1/forecast/archive?${q}`);
      assert.equal(res.status, status, q);
      const body = JSON.parse(res.body.toString()) as { code: number; message: string; data: null };
      assert.equal(body.code, code, q);
      assert.match(body.message, message, q);
    }
  });
});

describe('with keys', () => {
  let at = '';
  let scoped = '';
  let onlyC = '';
  before(async () => {
    at = await serve({ access: { auth: 'required', defaultRate: 1000, defaultBurst: 1000, authFailBurst: 1000 } });
    scoped = await createKey(store, 'archive-ac', { farms: ['WF_A', 'WF_C'] });
    onlyC = await createKey(store, 'archive-c', { farms: ['WF_C'] });
    await eventually(() => get(`${at}/api/v1/farms`, bearer(onlyC)), (r) => r.status === 200, 3000);
  });

  test('a scoped key gets only its sites, and its newest run is the newest it may see', async () => {
    const res = await get(`${at}/api/v1/forecast/archive?issue=${OLD}`, bearer(scoped));
    assert.equal(res.status, 200);
    assert.deepEqual(unzip(res.body).entries.map((e) => e.name), [`WF_A_${OLD}.csv`, `WF_C_${OLD}.csv`]);
    assert.match(res.headers.get('ratelimit') ?? '', /^"default";r=\d+;t=\d+$/);
    const newest = await get(`${at}/api/v1/forecast/archive`, bearer(onlyC));
    assert.equal(newest.headers.get('forecast-issue'), OLD);
  });

  test('a run none of whose sites the key may see is answered as one that does not exist', async () => {
    const hidden = await get(`${at}/api/v1/forecast/archive?issue=${NEW}`, bearer(onlyC));
    const missing = await get(`${at}/api/v1/forecast/archive?issue=2026111900`, bearer(onlyC));
    assert.equal(hidden.status, 404);
    assert.equal(missing.status, 404);
    assert.equal(hidden.body.toString(), missing.body.toString().replace('2026111900', NEW));
  });

  test('no key, no archive', async () => {
    const res = await get(`${at}/api/v1/forecast/archive?issue=${OLD}`);
    assert.equal(res.status, 401);
    assert.equal(JSON.parse(res.body.toString()).code, 40101);
  });
});

describe('a store failing during the download', () => {
  test('before the first entry: answered 503 with the envelope, as on any route', async () => {
    const failing = new Proxy(store, {
      get: (target, key) =>
        key === 'getRun' ? () => Promise.reject(new StoreUnavailableError('store unavailable')) : Reflect.get(target, key),
    });
    const { app, base } = await listen(failing, { access: { auth: 'off' } });
    apps.push(app);
    const res = await get(`${base}/api/v1/forecast/archive?issue=${OLD}`);
    assert.equal(res.status, 503);
    assert.equal((JSON.parse(res.body.toString()) as { code: number }).code, 50300);
    assert.ok(res.headers.get('retry-after'));
    assert.notEqual(res.headers.get('content-type'), 'application/zip');
  });

  test('cuts the download after the entries already sent, logs why, and the server answers the next request', async () => {
    // The store as it is, but its run reads fail from the second site of the archive on.
    const failing = new Proxy(store, {
      get: (target, key) =>
        key === 'getRun'
          ? (farmId: string, issue: string) => (farmId > 'PV_B' ? Promise.reject(new Error('store unavailable')) : target.getRun(farmId, issue))
          : Reflect.get(target, key),
    });
    const lines: string[] = [];
    const stream = { write: (line: string) => void lines.push(line) };
    const { app, base } = await listen(failing, { access: { auth: 'off' } }, { logger: { level: 'error', stream } });
    apps.push(app);
    const res = await fetch(`${base}/api/v1/forecast/archive?issue=${OLD}`);
    assert.equal(res.status, 200, 'the status goes out with the first entry');
    await assert.rejects(res.arrayBuffer(), 'the body ends before the archive does');
    await eventually(async () => lines.join(''), (text) => text.includes('bulk download cut short'), 5000);
    assert.match(lines.join(''), /store unavailable/);
    const next = await get(`${base}/api/v1/forecast?farm_id=PV_B&issue=${OLD}&format=csv`);
    assert.equal(next.status, 200);
  });
});

describe('entries kept as copies on disk (--body-disk-mb)', () => {
  const metrics = new Metrics();
  let at = '';
  /** Room in memory for whole-run files (up to a 512th of it each), though none is asked for twice here. */
  const cache = { seriesMb: 8, bodyMb: 128, latestMaxAgeS: 60, bodyDiskMb: 8, diskDir: tmp.dir };
  const count = async (name: string, labels: Record<string, string>): Promise<number> =>
    valueOf(parsePromText(await metrics.registry.metrics()), name, labels);

  before(async () => {
    const { app, base } = await listen(store, { cache, access: { auth: 'off' } }, { metrics });
    apps.push(app);
    at = base;
  });

  test('the next archive of a run reads the entries the first kept, the same bytes; single downloads find them too', async () => {
    const first = await get(`${at}/api/v1/forecast/archive?issue=${OLD}`);
    assert.equal(first.status, 200);
    const entries = unzip(first.body).entries;
    const size = entries.reduce((n, e) => n + Buffer.from(e.data, 'base64').length, 0);
    const kept = await eventually(() => count('forecastd_disk_cache_bytes', { cache: 'body' }), (b) => b === size, 5000);
    assert.equal(kept, size, 'each entry kept once, as its bytes');
    assert.equal(await count('forecastd_disk_cache_reads_total', { cache: 'body', way: 'at_once' }), 0);

    const second = await get(`${at}/api/v1/forecast/archive?issue=${OLD}`);
    assert.ok(second.body.equals(first.body), 'the same archive, byte for byte');
    // Every entry read back, unless a read came from the disk (a machine under load): then the rest were rendered.
    const readBack = await count('forecastd_disk_cache_reads_total', { cache: 'body', way: 'at_once' });
    if ((await count('forecastd_disk_cache_slow_reads_total', { cache: 'body' })) === 0) assert.equal(readBack, entries.length, 'every entry read back');
    else assert.ok(readBack >= 1);
    assert.ok(unzip(second.body).ok, 'a CRC kept with a copy does not match');

    // An entry is kept under its single download's key: that download, once asked before, is read back too.
    const url = `${at}/api/v1/forecast?farm_id=WF_C&issue=${OLD}&format=csv`;
    const downloads = [await get(url), await get(url)];
    assert.equal(await count('forecastd_disk_cache_reads_total', { cache: 'body', way: 'at_once' }), readBack + 1);
    const entry = entries.find((e) => e.name === `WF_C_${OLD}.csv`)!;
    for (const d of downloads) assert.equal(d.body.toString(), Buffer.from(entry.data, 'base64').toString());
  });

  test('a replaced run\'s entry is rendered afresh, never read from the copy of the run it replaced', async () => {
    await get(`${at}/api/v1/forecast/archive?issue=${NEW}`);
    await eventually(() => count('forecastd_disk_cache_bytes', { cache: 'body' }), (b) => b > 0, 5000);
    await seed(store, [{ farmId: 'PV_B', issue: NEW, opts: { value: () => 2.5 } }]);
    const before = await count('forecastd_disk_cache_reads_total', { cache: 'body', way: 'at_once' });
    const res = await get(`${at}/api/v1/forecast/archive?issue=${NEW}`);
    const entries = unzip(res.body).entries;
    assert.match(Buffer.from(entries.find((e) => e.name === `PV_B_${NEW}.csv`)!.data, 'base64').toString(), /,2\.5,2\.5,/);
    const slowReads = await count('forecastd_disk_cache_slow_reads_total', { cache: 'body' });
    const readBack = (await count('forecastd_disk_cache_reads_total', { cache: 'body', way: 'at_once' })) - before;
    if (slowReads === 0) assert.equal(readBack, entries.length - 1, 'only the unchanged entries read back');
    else assert.ok(readBack <= entries.length - 1, 'the replaced entry was not read back');
  });
});
