/** A process's registry: every metric of section 13, read from the plain counters at scrape time. */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';
import { collectDefaultMetrics } from 'prom-client';
import { Metrics } from '../../src/ops/metrics.js';
import { parsePromText, PROCESS_METRICS, valueOf } from './promText.js';

describe('Metrics', () => {
  test('every metric is there, typed, and zero before anything happened', async () => {
    const m = new Metrics();
    const families = parsePromText(await m.registry.metrics());
    for (const name of PROCESS_METRICS) assert.ok(families.has(name), name);
    assert.equal(families.get('forecastd_http_requests_total')!.type, 'counter');
    assert.equal(families.get('forecastd_http_request_duration_seconds')!.type, 'histogram');
    assert.equal(families.get('forecastd_sse_clients')!.type, 'gauge');
    for (const result of ['taken', 'rejected']) assert.equal(valueOf(families, 'forecastd_ingest_files_total', { result }), 0);
    for (const cache of ['body', 'run']) {
      for (const result of ['hit', 'miss']) assert.ok(families.get('forecastd_cache_requests_total')!.samples.some((s) => s.labels.cache === cache && s.labels.result === result));
    }
    for (const result of ['delivered', 'retry', 'refused', 'gave-up', 'gone']) {
      assert.ok(families.get('forecastd_webhook_deliveries_total')!.samples.some((s) => s.labels.result === result && s.value === 0));
    }
    assert.equal(families.get('forecastd_http_requests_total')!.samples.length, 0);
  });

  test("prom-client's process and Node.js metrics are all there but the garbage collector's histogram, which observes every collection", async () => {
    const families = parsePromText(await new Metrics().registry.metrics());
    const require = createRequire(import.meta.url);
    const namesOf = (collector: string): string[] => (require(`prom-client/lib/metrics/${collector}.js`) as { metricNames: string[] }).metricNames;
    assert.ok(collectDefaultMetrics.metricsList.includes('gc'));
    for (const collector of collectDefaultMetrics.metricsList) {
      for (const name of namesOf(collector)) assert.equal(families.has(name), collector !== 'gc', `${collector}: ${name}`);
    }
    assert.ok(!families.has('nodejs_gc_duration_seconds'));
  });

  test("the caches' memory is read from them at scrape time: bytes held and capacity, by cache", async () => {
    const m = new Metrics();
    let body = 0;
    m.watch({
      cacheMemory: () => [
        { cache: 'body', bytes: body, capacity: 1000 },
        { cache: 'memo', bytes: 7, capacity: 40 },
        { cache: 'run', bytes: 0, capacity: 200 },
      ],
    });
    body = 640;
    const f = parsePromText(await m.registry.metrics());
    assert.equal(f.get('forecastd_cache_bytes')!.type, 'gauge');
    assert.equal(valueOf(f, 'forecastd_cache_bytes', { cache: 'body' }), 640);
    assert.equal(valueOf(f, 'forecastd_cache_bytes', { cache: 'memo' }), 7);
    assert.equal(valueOf(f, 'forecastd_cache_bytes', { cache: 'run' }), 0);
    assert.equal(valueOf(f, 'forecastd_cache_capacity_bytes', { cache: 'body' }), 1000);
    assert.equal(valueOf(f, 'forecastd_cache_capacity_bytes', { cache: 'run' }), 200);
  });

  test('scrapes read the counters kept elsewhere, as they are at that moment', async () => {
    const m = new Metrics();
    for (const r of ['/api/v1/forecast', '/api/v1/farms']) m.http.addRoute(r);
    const body = { hits: 0, misses: 0 };
    const door = { rateLimited: 0 };
    m.watch({ bodyCache: body, runCache: { hits: 7, misses: 2 }, door, limiter: { faults: 1 } });
    m.http.record('/api/v1/forecast?farm_id=WF_A', 200, 0.05);
    m.http.record('/api/v1/forecast?farm_id=WF_A', 200, 3);
    m.http.record('/api/v1/forecast?farm_id=NOPE', 404, 0.2);
    m.http.record('/nope', 404, 0.2);
    body.hits = 5;
    body.misses = 3;
    door.rateLimited = 4;
    m.storeErrors = 2;
    m.sseClients = 3;
    m.countIngestedFile({ ok: true, records: 1441 });
    m.countIngestedFile({ ok: true, records: 97 });
    m.countIngestedFile({ ok: false });
    m.webhookDeliveries.retry = 1;
    const f = parsePromText(await m.registry.metrics());
    assert.equal(valueOf(f, 'forecastd_http_requests_total', { route: '/api/v1/forecast', code: '200' }), 2);
    assert.equal(valueOf(f, 'forecastd_http_requests_total', { route: '/api/v1/forecast', code: '404' }), 1);
    assert.equal(valueOf(f, 'forecastd_http_requests_total', { route: 'other', code: '404' }), 1);
    assert.equal(f.get('forecastd_http_requests_total')!.samples.length, 3);
    const h = 'forecastd_http_request_duration_seconds';
    assert.equal(valueOf(f, `${h}_count`, { route: '/api/v1/forecast' }), 3);
    assert.equal(valueOf(f, `${h}_bucket`, { route: '/api/v1/forecast', le: '0.0001' }), 1);
    assert.equal(valueOf(f, `${h}_bucket`, { route: '/api/v1/forecast', le: '0.00025' }), 2);
    assert.equal(valueOf(f, `${h}_bucket`, { route: '/api/v1/forecast', le: '0.0025' }), 2);
    assert.equal(valueOf(f, `${h}_bucket`, { route: '/api/v1/forecast', le: '0.005' }), 3);
    assert.equal(valueOf(f, `${h}_bucket`, { route: '/api/v1/forecast', le: '+Inf' }), 3);
    assert.ok(Math.abs(valueOf(f, `${h}_sum`, { route: '/api/v1/forecast' }) - 0.00325) < 1e-12);
    assert.ok(!f.get(h)!.samples.some((s) => s.labels.route === '/api/v1/farms'), 'no series for a route never asked');
    assert.equal(valueOf(f, 'forecastd_cache_requests_total', { cache: 'body', result: 'hit' }), 5);
    assert.equal(valueOf(f, 'forecastd_cache_requests_total', { cache: 'body', result: 'miss' }), 3);
    assert.equal(valueOf(f, 'forecastd_cache_requests_total', { cache: 'run', result: 'hit' }), 7);
    assert.equal(valueOf(f, 'forecastd_cache_requests_total', { cache: 'run', result: 'miss' }), 2);
    assert.equal(valueOf(f, 'forecastd_rate_limited_total'), 4);
    assert.equal(valueOf(f, 'forecastd_rate_limit_faults_total'), 1);
    assert.equal(valueOf(f, 'forecastd_store_errors_total'), 2);
    assert.equal(valueOf(f, 'forecastd_sse_clients'), 3);
    assert.equal(valueOf(f, 'forecastd_workers'), 1);
    assert.equal(valueOf(f, 'forecastd_ingest_files_total', { result: 'taken' }), 2);
    assert.equal(valueOf(f, 'forecastd_ingest_files_total', { result: 'rejected' }), 1);
    assert.equal(valueOf(f, 'forecastd_ingest_records_total'), 1538);
    assert.equal(valueOf(f, 'forecastd_webhook_deliveries_total', { result: 'retry' }), 1);
    // Read again without change: the same values (collect() sets, it does not add).
    const again = parsePromText(await m.registry.metrics());
    assert.equal(valueOf(again, 'forecastd_http_requests_total', { route: '/api/v1/forecast', code: '200' }), 2);
    assert.equal(valueOf(again, 'forecastd_rate_limited_total'), 4);
  });
});
