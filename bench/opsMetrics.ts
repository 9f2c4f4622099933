/**
 * npm run bench:ops: what counting an answer and naming a request cost, per
 * call, in this process (no network): the plain counters the server keeps
 * (src/ops/httpStats.ts) against prom-client's own labelled inc/observe,
 * request ids from a prefix and a counter against a UUID, an access log line,
 * and a whole answer (response created, head and body written to a socket
 * stand-in that drops the bytes) through Node's ServerResponse against the
 * server's observed one. Each figure is a median of 7 runs, in ns per call.
 */
import { randomUUID } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { Counter, Histogram, Registry } from 'prom-client';
import { DURATION_BUCKETS_S, HttpStats } from '../src/ops/httpStats.js';
import { AnswerLog } from '../src/ops/answerLog.js';
import { observedResponse, withRequestId } from '../src/ops/observedResponse.js';
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

console.log('\na whole answer: response created, 16 headers and a 420-byte body written, to a socket that drops the bytes');
const socket = new Writable({
  write: (_c, _e, done) => done(),
  writev: (_c, done) => done(),
}) as unknown as Socket;
(socket as unknown as { setTimeout: () => void }).setTimeout = () => undefined;
const Observed = observedResponse(new AnswerLog(stats));
const page = Buffer.alloc(420, 97);
function answer(Response: typeof ServerResponse): void {
  const req = new IncomingMessage(socket);
  req.method = 'GET';
  req.url = URLS[0]!;
  req.headers = { host: 'forecast.example', accept: '*/*' };
  const res = new Response(req);
  res.assignSocket(socket);
  res.writeHead(200, headers);
  res.end(page);
  res.detachSocket(socket);
}
/** Answers in batches, letting the event loop run the writes' callbacks between them. */
async function nsPerAnswer(Response: typeof ServerResponse): Promise<number> {
  const n = 100_000;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i += 200) {
    for (let j = 0; j < 200; j++) answer(Response);
    await new Promise((r) => setImmediate(r));
  }
  return Number(process.hrtime.bigint() - t0) / n;
}
const plainRuns: number[] = [];
const observedRuns: number[] = [];
for (let r = 0; r < RUNS + 1; r++) {
  // Alternating which goes first; the first round warms up.
  const [a, b] = r % 2 ? [ServerResponse, Observed] : [Observed, ServerResponse];
  const ta = await nsPerAnswer(a);
  const tb = await nsPerAnswer(b);
  if (r === 0) continue;
  (a === ServerResponse ? plainRuns : observedRuns).push(ta);
  (b === ServerResponse ? plainRuns : observedRuns).push(tb);
}
const med = (xs: number[]): number => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;
console.log(`${"Node's ServerResponse".padEnd(64)} ${med(plainRuns).toFixed(1).padStart(8)} ns`);
console.log(`${'the observed response (id, timing, counting)'.padEnd(64)} ${med(observedRuns).toFixed(1).padStart(8)} ns`);
console.log(`${'difference'.padEnd(64)} ${(med(observedRuns) - med(plainRuns)).toFixed(1).padStart(8)} ns`);

console.log(`\nprom-client per answer / plain counters: ${(prom / plain).toFixed(1)}x; UUID / counter id: ${(uuidCost / idsCost).toFixed(1)}x`);
if (sink === 42) console.log('');
