/**
 * npm run bench:ops: what counting an answer and naming a request cost, per
 * call, in this process (no HTTP): the plain counters the server keeps
 * (src/ops/httpStats.ts) against prom-client's own labelled inc/observe, and
 * request ids from a prefix and a counter against a UUID. Each figure is the
 * median of 7 runs of 2,000,000 calls, in ns per call.
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { Counter, Histogram, Registry } from 'prom-client';
import { DURATION_BUCKETS_S, HttpStats } from '../src/ops/httpStats.js';
import { withRequestId } from '../src/ops/observedResponse.js';
import { acceptableRequestId, RequestIds } from '../src/ops/requestId.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 2_000_000);
const RUNS = 7;

/** A sink the optimiser cannot see through. */
let sink = 0;

function nsPerCall(name: string, body: (i: number) => void): number {
  const times: number[] = [];
  for (let r = 0; r < RUNS + 1; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < CALLS; i++) body(i);
    const ns = Number(process.hrtime.bigint() - t0) / CALLS;
    if (r > 0) times.push(ns); // the first run warms up
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  console.log(`${name.padEnd(64)} ${median.toFixed(1).padStart(8)} ns`);
  return median;
}

// The routes of the app, and the URLs of a hot-path load: mostly forecasts, some of the rest.
const ROUTES = ['/api/v1/forecast', '/api/v1/forecast/issues', '/api/v1/farms', '/api/v1/elements', '/healthz', '/readyz', '/metrics', '/docs/static/*'];
const URLS = ['/api/v1/forecast?farm_id=WF_GS01&size=4', '/api/v1/forecast?farm_id=PV_QH02', '/api/v1/forecast?lat=40.5&lon=95.25'];
const MIXED = [...URLS, '/api/v1/farms?size=10', '/api/v1/forecast/issues', '/nope'];
const STATUSES = [200, 200, 200, 304, 200, 404];
const ms = (i: number): number => 0.02 + (i % 17) * 0.003;

const stats = new HttpStats();
for (const r of ROUTES) stats.addRoute(r);

const registry = new Registry();
const counter = new Counter({ name: 'req_total', help: 'h', labelNames: ['route', 'code'], registers: [registry] });
const histogram = new Histogram({ name: 'req_seconds', help: 'h', labelNames: ['route'], buckets: [...DURATION_BUCKETS_S], registers: [registry] });

console.log(`forecastd ops micro-benchmark: median of ${RUNS} runs of ${CALLS} calls (node ${process.version})`);
console.log('\ncounting one answer (route, status, duration)');
const plain = nsPerCall('plain counters: HttpStats.record (forecast URLs)', (i) => stats.record(URLS[i % 3]!, 200, ms(i)));
nsPerCall('plain counters: HttpStats.record (mixed URLs and statuses)', (i) => stats.record(MIXED[i % 6]!, STATUSES[i % 6]!, ms(i)));
const prom = nsPerCall('prom-client: counter.inc({route, code}) + histogram.observe({route}, s)', (i) => {
  counter.inc({ route: ROUTES[0]!, code: '200' });
  histogram.observe({ route: ROUTES[0]! }, ms(i) / 1000);
});
nsPerCall('prom-client: the same through labels(...) children', (i) => {
  counter.labels(ROUTES[0]!, '200').inc();
  histogram.labels(ROUTES[0]!).observe(ms(i) / 1000);
});
nsPerCall('two clock reads (performance.now)', () => {
  const t = performance.now();
  sink += performance.now() - t;
});

console.log('\nrequest ids');
const ids = new RequestIds();
const idsCost = nsPerCall('prefix + counter (RequestIds.next)', () => {
  sink += ids.next().length;
});
const uuidCost = nsPerCall('crypto.randomUUID()', () => {
  sink += randomUUID().length;
});
nsPerCall("a client's id checked (20 characters)", (i) => {
  sink += acceptableRequestId(i & 1 ? 'k3f9x2qa-1b7.client_' : 'a-client-request-id') ? 1 : 0;
});
const headers = ['etag', '"r-1j355rd"', 'last-modified', 'Wed, 25 Nov 2026 02:24:37 GMT', 'cache-control', 'public, max-age=60', 'vary', 'Accept, Accept-Encoding',
  'forecast-issue', '2026112500', 'x-content-type-options', 'nosniff', 'content-type', 'application/json; charset=utf-8', 'content-length', '420'];
nsPerCall('the header list copied with the id added (16 entries)', () => {
  sink += withRequestId(headers, 'k3f9x2qa-1b7').length;
});

console.log('\naccess log (--access-log)');
const discard = new Writable({ write: (_c, _e, done) => done() });
const accessLog = Fastify({ logger: { level: 'warn', stream: discard } }).log.child({}, { level: 'info' });
nsPerCall('one access log line (pino, to a stream that drops it)', (i) => {
  accessLog.info({ reqId: 'k3f9x2qa-1b7', method: 'GET', route: ROUTES[0], status: 200, ms: ms(i), keyName: 'desk-trading' }, 'request');
});

console.log(`\nprom-client per answer / plain counters: ${(prom / plain).toFixed(1)}x; UUID / counter id: ${(uuidCost / idsCost).toFixed(1)}x`);
if (sink === 42) console.log('');
