/**
 * One scrape for every worker: a real `forecastd serve --workers 2`, requests
 * spread over both workers (a new connection each, which the cluster deals out
 * in turn), counters that add up exactly across them, and counters that do not
 * go down when a worker dies and is replaced.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import { DEFAULT_BODY_DISK_MB, DEFAULT_RUN_DISK_MB } from '../../src/http/context.js';
import { openStore } from '../../src/store/openStore.js';
import { childPids, serve, type Served } from '../helpers/cli.js';
import { eventually, runCsv, seed, tempDir, testDbUrl } from '../helpers/fixtures.js';
import { createKey } from '../helpers/keys.js';
import { deliver, placed, waitUntil } from '../helpers/watch.js';
import { parsePromText, valueOf, type Family } from './promText.js';

let served: Served;
let admin = '';
let db = '';
let drop: () => Promise<void>;

before(async () => {
  const fresh = await testDbUrl();
  ({ drop, url: db } = fresh);
  const store = await openStore(db);
  await seed(store, [
    { farmId: 'WF_A', issue: '2026112000', opts: { steps: [0, 1, 2] } },
    { farmId: 'PV_B', issue: '2026112000', opts: { steps: [0, 1, 2] } },
  ]);
  admin = await createKey(store, 'ops', { admin: true });
  await store.close();
  served = await serve(['--db', db, '--workers', '2', '--access-log']);
});

after(async () => {
  if (served) assert.equal(await served.stop(), 0);
  await drop?.();
});

/** GET on a connection of its own (so that the cluster hands each request to the next worker). */
function get(path: string, base = served.base): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { agent: false, headers: { authorization: `Bearer ${admin}` } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    // A connection the cluster's primary hands to a worker just killed is never answered: give up on it.
    req.setTimeout(5000, () => req.destroy(new Error(`no answer to ${path} within 5 s`)));
    req.end();
  });
}

async function scrape(base = served.base): Promise<Map<string, Family>> {
  const r = await get('/metrics', base);
  assert.equal(r.status, 200, r.body.slice(0, 300));
  return parsePromText(r.body);
}

const forecasts = (f: Map<string, Family>): number => valueOf(f, 'forecastd_http_requests_total', { route: '/api/v1/forecast', code: '200' });

test('counters of both workers add up exactly in one scrape, and survive a worker that dies', async () => {
  const N = 40;
  for (let i = 0; i < N; i++) assert.equal((await get(`/api/v1/forecast?farm_id=${i % 2 ? 'WF_A' : 'PV_B'}&size=2`)).status, 200);
  for (let i = 0; i < 6; i++) assert.equal((await get('/nope')).status, 404);
  const f = await scrape();
  assert.equal(valueOf(f, 'forecastd_workers'), 2);
  assert.equal(forecasts(f), N);
  assert.equal(valueOf(f, 'forecastd_http_request_duration_seconds_count', { route: '/api/v1/forecast' }), N);
  assert.equal(valueOf(f, 'forecastd_http_requests_total', { route: 'other', code: '404' }), 6);
  assert.equal(valueOf(f, 'forecastd_sites'), 3);
  assert.equal(valueOf(f, 'forecastd_runs'), 1);
  assert.ok(valueOf(f, 'process_cpu_seconds_total') > 0);
  // Each worker's caches share the default --cache-mb (300 MiB), and each holds something once pages were asked twice.
  const caches = ['body', 'memo', 'run'];
  assert.equal(caches.reduce((sum, cache) => sum + valueOf(f, 'forecastd_cache_capacity_bytes', { cache }), 0), 2 * 300 * 2 ** 20);
  // And each its own file of run copies on local disk, of the default --run-disk-mb.
  assert.equal(valueOf(f, 'forecastd_disk_cache_capacity_bytes', { cache: 'run' }), 2 * DEFAULT_RUN_DISK_MB * 2 ** 20);
  assert.equal(valueOf(f, 'forecastd_disk_cache_capacity_bytes', { cache: 'body' }), 2 * DEFAULT_BODY_DISK_MB * 2 ** 20);
  for (const cache of caches) {
    const bytes = valueOf(f, 'forecastd_cache_bytes', { cache });
    assert.ok(bytes > 0 && bytes <= valueOf(f, 'forecastd_cache_capacity_bytes', { cache }), `${cache}: ${bytes} bytes`);
  }

  // Both workers answered: the access log names the process of each line.
  await new Promise((r) => setTimeout(r, 100));
  const lines = served
    .stderr()
    .split('\n')
    .filter((l) => l.includes('"msg":"request"'))
    .map((l) => JSON.parse(l) as { pid: number; route: string; status: number });
  const perPid = new Map<number, number>();
  for (const l of lines.filter((x) => x.route === '/api/v1/forecast')) perPid.set(l.pid, (perPid.get(l.pid) ?? 0) + 1);
  assert.equal(perPid.size, 2, `forecasts answered by ${[...perPid.keys()].join(', ')}`);
  assert.equal([...perPid.values()].reduce((a, b) => a + b, 0), N);

  // A worker killed outright is replaced; what it had counted up to the last scrape stays in the sum.
  const workers = childPids(served.child.pid!);
  assert.equal(workers.length, 2);
  process.kill(workers[0]!, 'SIGKILL');
  const replaced = await eventually(
    // While the worker is being replaced a scrape may fail (503, or a connection handed to the dead worker).
    async () => ({ pids: childPids(served.child.pid!), f: await scrape().catch(() => new Map<string, Family>()) }),
    (r) => r.pids.length === 2 && !r.pids.includes(workers[0]!) && valueOf(r.f, 'forecastd_workers') === 2,
    10_000,
  );
  assert.equal(valueOf(replaced.f, 'forecastd_workers'), 2);
  assert.equal(forecasts(replaced.f), N);
  assert.equal(valueOf(replaced.f, 'forecastd_http_request_duration_seconds_count', { route: '/api/v1/forecast' }), N);
  assert.equal((await get('/api/v1/forecast?farm_id=WF_A')).status, 200);
  assert.equal(forecasts(await scrape()), N + 1);
});

for (const workers of ['1', '2']) {
  test(`files of the watched folder are counted, taken and rejected, with --workers ${workers}`, async () => {
    const drop = tempDir();
    const watched = `${drop.dir}/in`;
    deliver(watched, 'WF_C_2026112100.csv', runCsv('2026112100', { steps: [0, 1, 2, 3] }));
    deliver(watched, 'NOPE_2026112100.csv', runCsv('2026112100', { steps: [0] }));
    deliver(watched, 'WF_A_2026112100.csv', 'date_time,t2m\n');
    const watching = await serve(['--db', db, '--workers', workers, '--watch', watched, '--settle', '100ms']);
    try {
      await waitUntil(() => placed(watched).done.length === 1 && placed(watched).rejected.length === 2, 15_000, () => JSON.stringify(placed(watched)));
      const f = await eventually(() => scrape(watching.base), (x) => valueOf(x, 'forecastd_ingest_files_total', { result: 'rejected' }) === 2, 5000);
      assert.equal(valueOf(f, 'forecastd_ingest_files_total', { result: 'taken' }), 1);
      assert.equal(valueOf(f, 'forecastd_ingest_files_total', { result: 'rejected' }), 2);
      assert.equal(valueOf(f, 'forecastd_ingest_records_total'), 4);
      assert.equal(valueOf(f, 'forecastd_workers'), Number(workers));
    } finally {
      assert.equal(await watching.stop(), 0);
      drop.cleanup();
    }
  });
}
