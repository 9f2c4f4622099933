/**
 * The forecast service's answers over a real socket where the kernel cannot
 * take an answer at once: a one-off body goes out of a pooled buffer, which
 * may be handed to the next answer only once nothing needs its bytes.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.js';
import { readRunCsv } from '../../src/ingest/runCsv.js';
import { Metrics } from '../../src/ops/metrics.js';
import type { Store } from '../../src/store/store.js';
import { DEFAULT_RULES, FARMS, runCsv, seed, testStore } from '../helpers/fixtures.js';
import { listen } from '../helpers/http.js';
import { parsePromText, valueOf } from '../ops/promText.js';

let store: Store;
let cleanup: () => Promise<void>;
let app: FastifyInstance;
let base: string;

const ISSUES = ['2026112000', '2026112012', '2026112100', '2026112112'];
/** Whole-run CSV files (about 250 KB each) are never kept whole by a 32 MB body cache: each is rendered into a pooled buffer. */
const CACHE = { seriesMb: 8, bodyMb: 32, latestMaxAgeS: 60 };
const csvPath = (farmId: string, issue: string): string => `/api/v1/forecast?farm_id=${farmId}&issue=${issue}&format=csv`;
const PATHS = FARMS.flatMap((f) => ISSUES.map((i) => csvPath(f.farmId, i)));

before(async () => {
  ({ store, cleanup } = await testStore());
  await seed(store, FARMS.flatMap((f) => ISSUES.map((issue) => ({ farmId: f.farmId, issue }))));
  ({ app, base } = await listen(store, { cache: CACHE }));
});

after(async () => {
  await app?.close();
  await cleanup?.();
});

/**
 * Asks for every path on one connection, one after the other, without reading: each answer after the first
 * few meets kernel buffers already full (about 4 MB on loopback), so end() leaves it partly unsent, and the
 * rest queue behind it. Returns the connection, to be read once the other answers have been sent.
 */
async function stalledClient(paths: readonly string[]): Promise<Socket> {
  const { hostname, port } = new URL(base);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.pause();
  for (const p of paths) {
    socket.write(`GET ${p} HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return socket;
}

/** Reads `count` answers of 200 with their bodies from the socket. */
async function readAll(socket: Socket, count: number): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.resume();
  const bodies: Buffer[] = [];
  let data = Buffer.alloc(0);
  const deadline = performance.now() + 60_000;
  while (bodies.length < count) {
    assert.ok(performance.now() < deadline, `${bodies.length} of ${count} answers after 60 s`);
    await new Promise((r) => setTimeout(r, 5));
    data = Buffer.concat([data, ...chunks.splice(0)]);
    for (;;) {
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) break;
      const head = data.subarray(0, end).toString('latin1');
      assert.match(head, /^HTTP\/1\.1 200 /, head.split('\r\n')[0]);
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)![1]);
      if (data.length < end + 4 + length) break;
      bodies.push(Buffer.from(data.subarray(end + 4, end + 4 + length)));
      data = data.subarray(end + 4 + length);
    }
  }
  return bodies;
}

test('a client that reads late gets every one-off answer byte for byte while other answers reuse the pooled buffers', async () => {
  const expected = new Map<string, Buffer>();
  for (const p of PATHS) expected.set(p, Buffer.from(await (await fetch(base + p)).arrayBuffer()));
  // About 10 MB asked on one connection that reads nothing yet.
  const stalled = Array.from({ length: 5 }, () => PATHS).flat();
  const late = await stalledClient(stalled);
  try {
    // Meanwhile other answers are rendered into pooled buffers of the same sizes, released as each is sent.
    for (let round = 0; round < 3; round++) {
      const others = await Promise.all(PATHS.map(async (p) => [p, Buffer.from(await (await fetch(base + p)).arrayBuffer())] as const));
      for (const [p, body] of others) assert.ok(body.equals(expected.get(p)!), `${p} as expected`);
    }
    const bodies = await readAll(late, stalled.length);
    stalled.forEach((p, i) => assert.ok(bodies[i]!.equals(expected.get(p)!), `answer ${i}, ${p}: the late client's bytes are the file's`));
  } finally {
    late.destroy();
  }
});

test('a remembered answer stands while its site is unchanged: a run of another site leaves it, a run of its own ends it, and any run ends a nearest-site answer', async () => {
  const own = await testStore();
  const metrics = new Metrics();
  const local = await buildApp({ store: own.store, rules: DEFAULT_RULES, version: 'test', cache: CACHE }, { metrics });
  try {
    await seed(own.store, [
      { farmId: 'WF_A', issue: '2026112000' },
      { farmId: 'PV_B', issue: '2026112000' },
    ]);
    await local.ready();
    const publish = async (farmId: string, issue: string): Promise<void> => {
      const run = readRunCsv(`${farmId}_${issue}.csv`, Buffer.from(runCsv(issue)));
      await own.store.putRun({ farmId, issue, series: run.series });
    };
    const replays = async (): Promise<{ hits: number; misses: number }> => {
      const f = parsePromText(await metrics.registry.metrics());
      const n = (result: string): number => valueOf(f, 'forecastd_cache_requests_total', { cache: 'memo', result });
      return { hits: n('hit'), misses: n('miss') };
    };
    const a = FARMS.find((f) => f.farmId === 'WF_A')!;
    const latestA = '/api/v1/forecast?farm_id=WF_A&size=24';
    const nearA = `/api/v1/forecast?lat=${a.lat}&lon=${a.lon}&size=24`;
    const ask = async (url: string): Promise<string> => {
      const r = await local.inject(url);
      assert.equal(r.statusCode, 200, url);
      return String(r.headers['forecast-issue']);
    };
    // A page of the latest run, its issue implied, is kept and remembered from its first rendering (the cache
    // has room), then sent as remembered. The nearest-site URL names the same page, already kept: remembered at once.
    for (const url of [latestA, nearA]) for (let i = 0; i < 3; i++) assert.equal(await ask(url), '2026112000');
    assert.deepEqual(await replays(), { hits: 4, misses: 2 });

    // A run of another site: the remembered answer of WF_A by farm_id still stands; the nearest-site one does not.
    await publish('PV_B', '2026112012');
    assert.equal(await ask(latestA), '2026112000');
    assert.deepEqual(await replays(), { hits: 5, misses: 2 });
    assert.equal(await ask(nearA), '2026112000');
    assert.deepEqual(await replays(), { hits: 5, misses: 3 });

    // A run of its own: the latest run of WF_A changed, and its answer is planned again with it.
    await publish('WF_A', '2026112012');
    assert.equal(await ask(latestA), '2026112012');
    assert.deepEqual(await replays(), { hits: 5, misses: 4 });
    assert.equal(await ask(nearA), '2026112012');
  } finally {
    await local.close();
    await own.cleanup();
  }
});

test('each forecast request counts once for the remembered answers: sent again (hit) or planned (miss), also one the direct path hands to the framework', async () => {
  const own = await testStore();
  const metrics = new Metrics();
  const served = await listen(own.store, { cache: CACHE }, { metrics });
  try {
    await seed(own.store, [{ farmId: 'WF_A', issue: '2026112000' }]);
    const counts = async (): Promise<{ hits: number; misses: number }> => {
      const f = parsePromText(await metrics.registry.metrics());
      const n = (result: string): number => valueOf(f, 'forecastd_cache_requests_total', { cache: 'memo', result });
      return { hits: n('hit'), misses: n('miss') };
    };
    const ask = async (path: string): Promise<void> => {
      const r = await fetch(served.base + path);
      assert.equal(r.status, 200, path);
      await r.arrayBuffer();
    };
    // The direct path takes these. A page naming its run: planned twice (rendered, then kept and remembered on
    // its second sighting), then sent again.
    for (let i = 0; i < 3; i++) await ask('/api/v1/forecast?farm_id=WF_A&issue=2026112000&size=24');
    assert.deepEqual(await counts(), { hits: 1, misses: 2 });
    // A page of the latest run, its issue implied: kept and remembered from its first rendering (the cache has
    // room), then sent again twice.
    for (let i = 0; i < 3; i++) await ask('/api/v1/forecast?farm_id=WF_A&size=48');
    assert.deepEqual(await counts(), { hits: 3, misses: 3 });
    // A size with a leading zero is the framework's to read (it coerces it): offered to the remembered
    // answers by both paths, planned once.
    await ask('/api/v1/forecast?farm_id=WF_A&size=024&page=2');
    assert.deepEqual(await counts(), { hits: 3, misses: 4 });
  } finally {
    await served.app.close();
    await own.cleanup();
  }
});
