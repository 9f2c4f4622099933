/**
 * The direct forecast path: which queries it takes, that it answers them itself,
 * and that over a real socket every answer (direct or handed to the framework)
 * is byte for byte what the framework alone gives for the same request.
 */
import assert from 'node:assert/strict';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { admitAs, ANONYMOUS } from '../../src/access/principal.js';
import { buildApp } from '../../src/http/app.js';
import { directForecast, directQuery } from '../../src/http/directForecast.js';
import { ForecastService } from '../../src/http/forecastService.js';
import { readRunCsv } from '../../src/ingest/runCsv.js';
import type { Store } from '../../src/store/store.js';
import { DEFAULT_RULES, runCsv, seed, testStore, THREE_RUNS } from '../helpers/fixtures.js';
import { prng } from '../helpers/watch.js';

let store: Store;
let cleanup: () => Promise<void>;
/** Listens on a real port: its forecast requests meet the direct path first. */
let served: FastifyInstance;
let base: string;
/** Never listens: inject() goes through the framework alone. */
let framework: FastifyInstance;

// Bodies up to 64 KB are kept (a 512th of the cache): every page asked here.
const CACHE = { seriesMb: 8, bodyMb: 32, latestMaxAgeS: 60 };
/** Headers that depend on the connection or the clock, not on the answer. */
const TRANSPORT = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

interface Answer {
  status: number;
  headers: [string, string][];
  body: Buffer;
}

/** Sent with every request of both servers, so that both answers carry the same X-Request-Id (their own). */
const REQUEST_ID = { 'x-request-id': 'same-answer.1' };

function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { ...REQUEST_ID, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: comparable(res.headers), body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

function comparable(h: IncomingHttpHeaders | Record<string, unknown>): [string, string][] {
  return Object.entries(h)
    .filter(([k]) => !TRANSPORT.has(k))
    .map(([k, v]): [string, string] => [k, String(v)])
    .sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

async function injected(path: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET'): Promise<Answer> {
  const r = await framework.inject({ method, url: path, headers: { ...REQUEST_ID, ...headers } });
  return { status: r.statusCode, headers: comparable(r.headers), body: r.rawPayload };
}

before(async () => {
  ({ store, cleanup } = await testStore());
  await seed(store, THREE_RUNS);
  served = await buildApp({ store, rules: DEFAULT_RULES, version: 'test', cache: CACHE });
  base = await served.listen({ port: 0, host: '127.0.0.1' });
  framework = await buildApp({ store, rules: DEFAULT_RULES, version: 'test', cache: CACHE });
  await framework.ready();
});
after(async () => {
  await served.close();
  await framework.close();
  await cleanup();
});

describe('directQuery', () => {
  test('takes a farm_id query in canonical form, typed as the validator types it', () => {
    // Every field is present (one object shape); those not given are undefined.
    const given = (qs: string): Record<string, unknown> | undefined => {
      const q = directQuery(qs);
      return q && Object.fromEntries(Object.entries(q).filter(([, v]) => v !== undefined));
    };
    assert.deepEqual(
      given('farm_id=WF_A&issue=2026112000&start=2026-11-20T08:00:00%2B08:00&end=2026-11-21&elements=t2m,tr&page=2&size=48&format=csv'),
      {
        farm_id: 'WF_A',
        issue: '2026112000',
        start: '2026-11-20T08:00:00+08:00',
        end: '2026-11-21',
        elements: ['t2m,tr'],
        page: 2,
        size: 48,
        format: 'csv',
      },
    );
    assert.deepEqual(given('farm_id=WF%20A'), { farm_id: 'WF A' });
    assert.deepEqual(given('lon=95.25&lat=40.5&size=5'), { lon: 95.25, lat: 40.5, size: 5 });
    assert.deepEqual(given('lat=%2B40.&lon=-.5'), { lat: 40, lon: -0.5 });
    assert.deepEqual(given('lat=90&lon=-180'), { lat: 90, lon: -180 });
    assert.deepEqual(Object.keys(directQuery('size=5&lat=1&lon=2')!), Object.keys(directQuery('farm_id=A')!));
  });

  test('leaves to the framework whatever it would coerce, reject or ignore', () => {
    for (const qs of [
      '',
      'issue=2026112000',
      'lat=40.5',
      'lon=95.25',
      'farm_id=WF_A&lat=40.5',
      'farm_id=WF_A&lat=40.5&lon=95.25',
      'lat=90.0001&lon=95',
      'lat=40&lon=180.5',
      'lat=1e1&lon=95',
      'lat=0x10&lon=95',
      'lat=Infinity&lon=95',
      'lat=+40&lon=95',
      'lat=40&lon=95&lat=41',
      'lat=40&lon=',
      'farm_id=WF_A&farm_id=WF_B',
      'farm_id=WF_A&elements=t2m&elements=tr',
      'farm_id=',
      'farm_id=WF_A&elements=',
      'farm_id=WF_A&extra=1',
      'farm_id=WF_A&page=0',
      'farm_id=WF_A&page=01',
      'farm_id=WF_A&page=1.0',
      'farm_id=WF_A&page=%2B1',
      'farm_id=WF_A&page=1e1',
      'farm_id=WF_A&page=1234567890',
      'farm_id=WF_A&size=1442',
      'farm_id=WF_A&size=-1',
      'farm_id=WF_A&format=xml',
      'farm_id=WF_A&issue=202611200',
      'farm_id=WF_A&issue=2026112000x',
      'farm_id=%E0%A4%A',
      'farm_id=WF_A&constructor=1',
      'farm_id=WF_A&__proto__=1',
    ]) {
      assert.equal(directQuery(qs), undefined, qs);
    }
  });
});

describe('the direct listener', () => {
  test('answers well-formed queries itself and hands everything else on', async () => {
    const service = new ForecastService({ store, rules: DEFAULT_RULES, version: 'test', cache: CACHE });
    const handedOn: string[] = [];
    const direct = directForecast(service, () => false, (req, res) => {
      handedOn.push(`${req.method} ${req.url}`);
      res.writeHead(299).end();
    });
    // As the door admits a caller of a server that asks for no key.
    const server: Server = createServer((req, res) => (admitAs(req, ANONYMOUS), direct(req, res)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const at = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const ok = await get(`${at}/api/v1/forecast?farm_id=WF_A&size=2&elements=t2m`);
      assert.equal(ok.status, 200);
      assert.equal(JSON.parse(ok.body.toString()).data.items.length, 2);
      assert.deepEqual(handedOn, []);
      for (const [path, method] of [
        ['/api/v1/forecast?farm_id=WF_A&size=0', 'GET'],
        ['/api/v1/forecast?farm_id=NOPE', 'GET'],
        ['/api/v1/forecast?farm_id=WF_A&issue=2026112100', 'GET'],
        ['/api/v1/forecast?farm_id=WF_A&start=tomorrow', 'GET'],
        ['/api/v1/forecast?farm_id=WF_A', 'HEAD'],
        ['/api/v1/forecast/?farm_id=WF_A', 'GET'],
        ['/api/v1/forecasts?farm_id=WF_A', 'GET'],
        ['/api/v1/farms', 'GET'],
      ] as const) {
        const r = await get(at + path, {}, method);
        assert.equal(r.status, 299, `${method} ${path}`);
      }
      assert.equal(handedOn.length, 8);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  test('hands on while the server is closing', async () => {
    const service = new ForecastService({ store, rules: DEFAULT_RULES, version: 'test', cache: CACHE });
    let handed = 0;
    const server = createServer(directForecast(service, () => true, (_req, res) => (handed++, res.writeHead(299).end())));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const r = await get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/forecast?farm_id=WF_A`);
      assert.equal(r.status, 299);
      assert.equal(handed, 1);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe('over a real socket, the same bytes as the framework alone', () => {
  const paths = [
    '/api/v1/forecast?farm_id=WF_A',
    '/api/v1/forecast?farm_id=WF_A&issue=2026112000',
    '/api/v1/forecast?farm_id=WF_A&issue=2026112000&elements=t2m,spd100,tr&size=24&page=3',
    '/api/v1/forecast?farm_id=WF_A&start=2026-11-21T08:00:00%2B08:00&end=2026-11-21T20:00:00Z&size=10',
    '/api/v1/forecast?farm_id=PV_B&issue=2026112000&format=csv',
    '/api/v1/forecast?farm_id=PV_B&issue=2026112000&format=json&size=1441',
    '/api/v1/forecast?farm_id=WF_A&page=999',
    '/api/v1/forecast?farm_id=WF_A&size=1442',
    '/api/v1/forecast?farm_id=WF_A&size=0',
    '/api/v1/forecast?farm_id=WF_A&page=01',
    '/api/v1/forecast?farm_id=WF_A&elements=t2m,nope',
    '/api/v1/forecast?farm_id=WF_A&elements=t2m,,tr',
    '/api/v1/forecast?farm_id=WF_A&start=2026-11-22&end=2026-11-21',
    '/api/v1/forecast?farm_id=WF_A&start=yesterday',
    '/api/v1/forecast?farm_id=WF_A&issue=2026112100',
    '/api/v1/forecast?farm_id=WF_A&issue=2026133000',
    '/api/v1/forecast?farm_id=WF_C',
    '/api/v1/forecast?farm_id=NOPE',
    '/api/v1/forecast?farm_id=WF_A&farm_id=PV_B',
    '/api/v1/forecast?farm_id=WF_A&format=xml',
    '/api/v1/forecast?farm_id=WF_A&unknown=1',
    '/api/v1/forecast?farm_id=%E0%A4%A',
    '/api/v1/forecast?lon=95.25&lat=40.5&size=5',
    '/api/v1/forecast?lat=40.51&lon=95.26&issue=2026112000&elements=tr&size=3',
    '/api/v1/forecast?lat=%2B36.125&lon=101.5&format=csv',
    '/api/v1/forecast?lat=10&lon=10',
    '/api/v1/forecast?lat=41.5&lon=97',
    '/api/v1/forecast?lat=91&lon=95',
    '/api/v1/forecast?lat=1e1&lon=95',
    '/api/v1/forecast?lat=40.5',
    '/api/v1/forecast?farm_id=WF_A&lat=40.5&lon=95.25',
    '/api/v1/forecast',
    '/api/v1/forecast?',
  ];

  for (const path of paths) {
    test(path, async () => {
      // Twice: the second answer may come from the body cache or the remembered answer.
      for (let i = 0; i < 3; i++) {
        const direct = await get(base + path);
        const alone = await injected(path);
        assert.equal(direct.status, alone.status);
        assert.deepEqual(direct.headers, alone.headers);
        assert.ok(direct.body.equals(alone.body), 'same body bytes');
      }
    });
  }

  // Random queries drawn from names and values that the validator takes, coerces, rejects or ignores: whatever
  // the direct path takes must be answered as the framework answers it, and the rest handed on unchanged.
  const NAMES = ['farm_id', 'issue', 'start', 'end', 'elements', 'page', 'size', 'format', 'lat', 'lon', 'Farm_id', 'farm%5Fid', 'farm_id%20', 'x', '', 'farm_id[]', 'size%00'];
  const VALUES: Record<string, string[]> = {
    farm_id: ['WF_A', 'PV_B', 'WF_C', 'NOPE', '', 'WF_A%20', '%57F_A', 'wf_a', 'WF_A+', 'WF%5FA', '%E4%B8%AD', 'WF_A%00', 'a'.repeat(70), 'WF_A,PV_B'],
    issue: ['2026112000', '2026112012', '2026112100', '20261120', '2026112000 ', '2026112000%20', '+2026112000', '2026112000.0', '', '2026113000', '0000000000'],
    start: ['2026-11-21T08:00:00%2B08:00', '2026-11-21T08:00:00+08:00', '2026-11-21', '2026-11-21T00:00:00Z', '2026-11-21T08:00', '2026-11-21 08:00:00', 'x', '', '2026-02-30', '2026-11-21T08:00:00.000Z', '2026-11-21T08:07:00Z', '2026-11-20T00:00:00Z'],
    end: ['2026-11-22T08:00:00%2B08:00', '2026-11-22', '2026-11-21T00:00:00Z', 'y', '', '2026-12-31', '2026-11-21T08:00:00Z'],
    elements: ['t2m', 't2m,spd100', 'T2M', 't2m,,tr', ',t2m', 't2m,', 't2m%2Cspd100', 'nope', '', 't2m,t2m', 'tr,dr,sr,t2m,rh2m,spd100'],
    page: ['1', '2', '0', '-1', '01', '1.0', '1e0', '+1', '999999999', '9999999999', '', ' 1', '2%20'],
    size: ['1', '24', '96', '1441', '1442', '0', '01', '1.5', '1e2', '+5', '', '100000000000'],
    format: ['json', 'csv', 'CSV', 'xml', '', 'json%20'],
    lat: ['40.5', '40.51', '+36.125', '-0', '91', '-91', '1e1', '40.', '.5', '', '0x10', '40.5000000000000000001', 'NaN', 'Infinity'],
    lon: ['95.25', '95.26', '101.5', '181', '-181', '', '95.25e0', ' 95.25'],
  };
  const ALL_VALUES = Object.values(VALUES).flat();

  function randomPath(r: () => number): string {
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const n = Math.floor(r() * 5);
    const pairs: string[] = [];
    if (r() < 0.8) pairs.push(`farm_id=${pick(VALUES.farm_id!)}`);
    for (let i = 0; i < n; i++) {
      const name = pick(NAMES);
      const vals = VALUES[name] ?? ALL_VALUES;
      const v = r() < 0.9 ? pick(vals) : pick(ALL_VALUES);
      pairs.push(r() < 0.05 ? name : `${name}=${v}`);
    }
    for (let i = pairs.length - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      [pairs[i], pairs[j]] = [pairs[j]!, pairs[i]!];
    }
    const sep = r() < 0.05 ? '&&' : '&';
    const tail = r() < 0.05 ? '&' : '';
    return `/api/v1/forecast?${pairs.join(sep)}${tail}`;
  }

  test('random queries, well-formed or not: byte for byte the same answers', async () => {
    const r = prng(1);
    const bad: string[] = [];
    for (let i = 0; i < 1000; i++) {
      const path = randomPath(r);
      const direct = await get(base + path);
      const alone = await injected(path);
      if (direct.status !== alone.status || JSON.stringify(direct.headers) !== JSON.stringify(alone.headers) || !direct.body.equals(alone.body)) {
        bad.push(`${path}: ${direct.status} ${direct.body.subarray(0, 120).toString()} | ${alone.status} ${alone.body.subarray(0, 120).toString()}`);
      }
    }
    assert.deepEqual(bad.slice(0, 20), []);
  });

  test('content negotiation, compression and conditional requests', async () => {
    const path = '/api/v1/forecast?farm_id=WF_A&issue=2026112000&elements=t2m,tr';
    const first = await get(base + path);
    const etag = first.headers.find(([k]) => k === 'etag')![1];
    const lastModified = first.headers.find(([k]) => k === 'last-modified')![1];
    for (const headers of [
      { accept: 'text/csv' },
      { accept: 'text/csv;q=0.5, application/json' },
      { 'accept-encoding': 'gzip' },
      { 'accept-encoding': 'br, gzip' },
      { 'if-none-match': etag },
      { 'if-none-match': `W/${etag}` },
      { 'if-none-match': '"other"' },
      { 'if-modified-since': lastModified },
    ] as Record<string, string>[]) {
      for (let i = 0; i < 2; i++) {
        const direct = await get(base + path, headers);
        const alone = await injected(path, headers);
        assert.equal(direct.status, alone.status, JSON.stringify(headers));
        assert.deepEqual(direct.headers, alone.headers, JSON.stringify(headers));
        assert.ok(direct.body.equals(alone.body), JSON.stringify(headers));
      }
    }
    assert.equal((await get(base + path, { 'if-none-match': etag })).status, 304);
  });

  test('HEAD is the framework’s, without a body', async () => {
    const path = '/api/v1/forecast?farm_id=WF_A&size=3';
    const direct = await get(base + path, {}, 'HEAD');
    const alone = await injected(path, {}, 'HEAD');
    assert.equal(direct.status, 200);
    assert.deepEqual(direct.headers, alone.headers);
    assert.equal(direct.body.length, 0);
  });

  test('a replaced run is answered with its new values and a new ETag at once', async () => {
    const path = '/api/v1/forecast?farm_id=PV_B&issue=2026112000&size=2&elements=t2m';
    const before1 = await get(base + path);
    const before2 = await get(base + path);
    assert.ok(before1.body.equals(before2.body));
    const run = readRunCsv('PV_B_2026112000.csv', Buffer.from(runCsv('2026112000', { value: (k, e) => 1000 + k + e / 8 })));
    await store.putRun({ farmId: 'PV_B', issue: '2026112000', series: run.series });
    const after = await get(base + path);
    assert.equal(after.status, 200);
    assert.notDeepEqual(after.headers.find(([k]) => k === 'etag'), before1.headers.find(([k]) => k === 'etag'));
    const t2m = JSON.parse(after.body.toString()).data.items.map((r: { t2m: number }) => r.t2m);
    assert.deepEqual(t2m, [1000, 1001]);
    const alone = await injected(path);
    assert.ok(after.body.equals(alone.body));
  });
});
