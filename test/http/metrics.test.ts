/**
 * GET /metrics and X-Request-Id over a real socket: the scrape is valid
 * Prometheus text, every answer (the direct forecast path, the framework's
 * routes, the door's refusals, 404, 405, a request Node's parser refuses) moves
 * the counters by exactly one under its route template and status, failed store
 * calls are counted, no label names a site, a run or a key, every answer
 * carries a request id (the client's when acceptable), and the access log names
 * the key's name but never the key.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp, type AppOptions } from '../../src/http/app.js';
import type { AppContext } from '../../src/http/context.js';
import { StoreUnavailableError, type Store } from '../../src/store/store.js';
import { DEFAULT_RULES, seed, testStore } from '../helpers/fixtures.js';
import { bearer, createKey } from '../helpers/keys.js';
import { havePromtool, labelValues, parsePromText, PROCESS_METRICS, promtoolCheck, valueOf, type Family } from '../ops/promText.js';

let store: Store;
let cleanup: () => Promise<void>;
const apps: FastifyInstance[] = [];
const keys = { ops: '', desk: '', tight: '' };

/** What the app's store does on demand: fail reads of runs, fail or hold readiness pings. */
const faults = { runs: false, ping: false, hold: undefined as Promise<void> | undefined };

/** The store the apps get: the real one, with the faults above. */
function faultyStore(s: Store): Store {
  return new Proxy(s, {
    get(target, prop) {
      if (prop === 'getRun' && faults.runs) return () => Promise.reject(new StoreUnavailableError('connection refused'));
      if (prop === 'ping') {
        return async () => {
          await faults.hold;
          if (faults.ping) throw new StoreUnavailableError('connection refused');
          return target.ping();
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

before(async () => {
  ({ store, cleanup } = await testStore());
  await seed(store, [
    { farmId: 'WF_A', issue: '2026112000', opts: { steps: [0, 1, 2] } },
    { farmId: 'WF_A', issue: '2026112012', opts: { steps: [0, 1, 2] } },
    { farmId: 'PV_B', issue: '2026112000', opts: { steps: [0, 1, 2] } },
  ]);
  keys.ops = await createKey(store, 'ops-admin', { admin: true });
  keys.desk = await createKey(store, 'desk-key');
  keys.tight = await createKey(store, 'tight-key', { rate: 0.001, burst: 1 });
});

after(async () => {
  for (const app of apps) await app.close();
  await cleanup?.();
});

async function serve(ctx: Partial<AppContext> = {}, opts: AppOptions = {}): Promise<string> {
  const app = await buildApp({ store: faultyStore(store), rules: DEFAULT_RULES, version: 'test', ...ctx }, opts);
  await app.listen({ port: 0, host: '127.0.0.1' });
  apps.push(app);
  const addr = app.server.address();
  assert.ok(addr && typeof addr === 'object');
  return `http://127.0.0.1:${addr.port}`;
}

interface Got {
  status: number;
  headers: Headers;
  text: string;
}

async function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Got> {
  const res = await fetch(url, { headers, method });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Writes raw bytes on a new connection and returns what comes back. */
function raw(at: string, bytes: string): Promise<string> {
  const { port } = new URL(at);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.end(bytes));
    let got = '';
    socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
    socket.on('close', () => resolve(got));
    socket.on('error', reject);
  });
}

async function scrape(at: string, key = keys.ops): Promise<{ families: Map<string, Family>; text: string }> {
  const res = await get(`${at}/metrics`, bearer(key));
  assert.equal(res.status, 200, res.text.slice(0, 300));
  assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  return { families: parsePromText(res.text), text: res.text };
}

/** `route|code` -> count, for every series of forecastd_http_requests_total. */
function requestCounts(families: Map<string, Family>): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of families.get('forecastd_http_requests_total')?.samples ?? []) out.set(`${s.labels.route}|${s.labels.code}`, s.value);
  return out;
}

function deltas(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of new Set([...before.keys(), ...after.keys()])) {
    const d = (after.get(k) ?? 0) - (before.get(k) ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

const GENERATED_ID = /^[0-9a-z]{8}-[0-9a-z]+$/;

describe('with keys required', () => {
  let at = '';
  before(async () => {
    // A deadline of 1 ms: both runs (published just now, neither holding every site) are partial at once,
    // so the freshness gauge measures the newest of them (20 12Z); with the default deadline neither counts (below).
    at = await serve({
      access: { auth: 'required', defaultRate: 1000, defaultBurst: 1000, authFailBurst: 1000 },
      limits: { maxInFlight: 4 },
      runDeadlineMs: 1,
    });
  });

  test('counters move by exactly the answers sent, under their route template and status', async () => {
    const forecast = `${at}/api/v1/forecast?farm_id=WF_A`;
    const first = await get(forecast, bearer(keys.desk));
    assert.equal(first.status, 200);
    const before = await scrape(at);

    for (let i = 0; i < 5; i++) assert.equal((await get(forecast, bearer(keys.desk))).status, 200);
    assert.equal((await get(forecast, { ...bearer(keys.desk), 'if-none-match': first.headers.get('etag')! })).status, 304);
    for (let i = 0; i < 2; i++) assert.equal((await get(`${forecast}&size=0`, bearer(keys.desk))).status, 400);
    assert.equal((await get(`${at}/api/v1/forecast?farm_id=NOPE`, bearer(keys.desk))).status, 404);
    for (let i = 0; i < 3; i++) assert.equal((await get(`${at}/api/v1/farms`)).status, 401);
    assert.equal((await get(`${at}/api/v1/farms`, bearer(keys.tight))).status, 200);
    assert.equal((await get(`${at}/api/v1/farms`, bearer(keys.tight))).status, 429);
    assert.equal((await get(`${at}/api/v1/farms`, bearer(keys.desk), 'HEAD')).status, 200);
    assert.equal((await get(`${at}/api/v1/farms`, bearer(keys.desk), 'POST')).status, 405);
    assert.equal((await get(`${at}/api/v1/forecast/issues`, bearer(keys.desk))).status, 200);
    for (let i = 0; i < 2; i++) assert.equal((await get(`${at}/nope/WF_A/2026112000`, bearer(keys.desk))).status, 404);
    assert.equal((await get(`${at}/metrics`, bearer(keys.desk))).status, 404);
    assert.equal((await get(`${at}/metrics`)).status, 401);
    assert.equal((await get(`${at}/healthz`)).status, 200);
    assert.match(await raw(at, 'NOT A REQUEST\r\n\r\n'), /^HTTP\/1\.1 400 /);

    const afterScrape = await scrape(at);
    assert.deepEqual(deltas(requestCounts(before.families), requestCounts(afterScrape.families)), {
      '/api/v1/forecast|200': 5,
      '/api/v1/forecast|304': 1,
      '/api/v1/forecast|400': 2,
      '/api/v1/forecast|404': 1,
      '/api/v1/farms|401': 3,
      '/api/v1/farms|200': 2,
      '/api/v1/farms|429': 1,
      '/api/v1/farms|405': 1,
      '/api/v1/forecast/issues|200': 1,
      'other|404': 2,
      'other|400': 1,
      '/metrics|404': 1,
      '/metrics|401': 1,
      // The first scrape is counted once it has been answered.
      '/metrics|200': 1,
      '/healthz|200': 1,
    });
    // The histogram counts the same answers.
    const count = (f: Map<string, Family>, route: string): number => valueOf(f, 'forecastd_http_request_duration_seconds_count', { route });
    for (const [route, n] of [['/api/v1/forecast', 9], ['/api/v1/farms', 7], ['other', 3], ['/metrics', 3]] as const) {
      assert.equal(count(afterScrape.families, route) - count(before.families, route), n, route);
    }
    const moved = (name: string, labels: Record<string, string> = {}): number => valueOf(afterScrape.families, name, labels) - valueOf(before.families, name, labels);
    assert.equal(moved('forecastd_rate_limited_total'), 1);
    assert.equal(moved('forecastd_store_errors_total'), 0);
    const body = moved('forecastd_cache_requests_total', { cache: 'body', result: 'hit' }) + moved('forecastd_cache_requests_total', { cache: 'body', result: 'miss' });
    assert.ok(body >= 6, `body cache lookups ${body}`);
    assert.ok(moved('forecastd_cache_requests_total', { cache: 'body', result: 'hit' }) >= 4);
  });

  test('the scrape is valid Prometheus text with every metric of section 13, and no label names a site, a run or a key', async (t) => {
    const { families, text } = await scrape(at);
    for (const name of [...PROCESS_METRICS, 'forecastd_runs', 'forecastd_latest_run_age_seconds']) {
      assert.ok(families.has(name), name);
    }
    assert.equal(valueOf(families, 'forecastd_sites'), 3);
    assert.equal(valueOf(families, 'forecastd_runs'), 2);
    assert.equal(valueOf(families, 'forecastd_site_runs'), 3);
    const age = valueOf(families, 'forecastd_latest_run_age_seconds');
    const expected = (Date.now() - Date.UTC(2026, 10, 20, 12)) / 1000;
    assert.ok(Math.abs(age - expected) < 60, `age ${age}, expected about ${expected}`);
    // Runs still receiving do not count: under the default deadline there is no complete or partial run, so no sample.
    const receiving = await serve({ access: { auth: 'required', defaultRate: 1000, defaultBurst: 1000, authFailBurst: 1000 } });
    const fresh = (await scrape(receiving)).families.get('forecastd_latest_run_age_seconds');
    assert.ok(fresh, 'the family is declared');
    assert.deepEqual(fresh.samples, []);
    const forbidden = ['WF_A', 'PV_B', 'NOPE', '2026112000', '2026112012', 'ops-admin', 'desk-key', 'tight-key', keys.ops, keys.desk, keys.tight];
    for (const v of labelValues(families)) {
      for (const f of forbidden) assert.ok(!v.includes(f), `label value ${v} holds ${f}`);
    }
    for (const k of [keys.ops, keys.desk, keys.tight]) assert.ok(!text.includes(k.slice(4, 12)));
    if (!havePromtool()) {
      t.diagnostic('promtool is not on PATH: checked by the strict reader only');
      return;
    }
    promtoolCheck(text);
  });

  test('failed store calls are counted, on the direct path and in the framework, and answered 503', async () => {
    const before = (await scrape(at)).families;
    faults.runs = true;
    faults.ping = true;
    try {
      for (let i = 0; i < 3; i++) {
        const r = await get(`${at}/api/v1/forecast?farm_id=PV_B&issue=2026112000`, bearer(keys.desk));
        assert.equal(r.status, 503, r.text);
        assert.match(r.headers.get('x-request-id') ?? '', GENERATED_ID);
      }
      assert.equal((await get(`${at}/readyz`)).status, 503);
    } finally {
      faults.runs = false;
      faults.ping = false;
    }
    const afterScrape = (await scrape(at)).families;
    assert.equal(valueOf(afterScrape, 'forecastd_store_errors_total') - valueOf(before, 'forecastd_store_errors_total'), 4);
    const d = deltas(requestCounts(before), requestCounts(afterScrape));
    assert.equal(d['/api/v1/forecast|503'], 3);
    assert.equal(d['/readyz|503'], 1);
  });
});

describe('X-Request-Id', () => {
  let at = '';
  before(async () => {
    at = await serve({ access: { auth: 'required', defaultRate: 1000, defaultBurst: 1000, authFailBurst: 1000 }, limits: { maxInFlight: 2 } });
  });

  /** Requests of every kind of answer, each with the headers it needs (a key where one is asked for). */
  const kinds = (): Array<[string, string, Record<string, string>, string?]> => [
    ['direct 200', '/api/v1/forecast?farm_id=WF_A', bearer(keys.desk)],
    ['CSV', '/api/v1/forecast?farm_id=WF_A&format=csv', bearer(keys.desk)],
    ['framework 400', '/api/v1/forecast?farm_id=WF_A&size=0', bearer(keys.desk)],
    ['framework 404', '/api/v1/forecast?farm_id=NOPE', bearer(keys.desk)],
    ['farms', '/api/v1/farms', bearer(keys.desk)],
    ['HEAD', '/api/v1/farms', bearer(keys.desk), 'HEAD'],
    ['401', '/api/v1/farms', {}],
    ['404 path', '/nope', bearer(keys.desk)],
    ['405', '/api/v1/farms', bearer(keys.desk), 'DELETE'],
    ['metrics', '/metrics', bearer(keys.ops)],
    ['metrics 404', '/metrics', bearer(keys.desk)],
    ['open', '/api/v1/elements', {}],
    ['docs', '/docs/static/index.html', {}],
  ];

  test('every answer carries one: a new one when the request sent none, different each time', async () => {
    const seen = new Set<string>();
    for (const [what, path, headers, method] of kinds()) {
      for (let i = 0; i < 2; i++) {
        const r = await get(at + path, headers, method);
        const id = r.headers.get('x-request-id') ?? '';
        assert.match(id, GENERATED_ID, `${what}: ${id}`);
        assert.ok(!seen.has(id), `${what}: ${id} twice`);
        seen.add(id);
      }
    }
    const tight = await createKey(store, 'tight-2', { rate: 0.001, burst: 1 });
    await new Promise((r) => setTimeout(r, 2500)); // the key table is re-read within 2 s
    await get(`${at}/api/v1/farms`, bearer(tight));
    const limited = await get(`${at}/api/v1/farms`, bearer(tight));
    assert.equal(limited.status, 429);
    assert.match(limited.headers.get('x-request-id') ?? '', GENERATED_ID);
  });

  test("the client's own is echoed when it is 1-64 of A-Z a-z 0-9 . _ -, and replaced otherwise", async () => {
    const good = ['a', 'trace.1_2-3', 'x'.repeat(64)];
    const bad = ['x'.repeat(65), 'a b', 'a/b', 'a,b', '%41'];
    for (const [what, path, headers, method] of kinds()) {
      for (const id of good) {
        const r = await get(at + path, { ...headers, 'x-request-id': id }, method);
        assert.equal(r.headers.get('x-request-id'), id, what);
      }
      for (const id of bad) {
        const r = await get(at + path, { ...headers, 'x-request-id': id }, method);
        assert.match(r.headers.get('x-request-id') ?? '', GENERATED_ID, `${what}: ${id}`);
      }
    }
  });

  test("on the door's 503, and on an answer Node's parser refuses", async () => {
    let release = (): void => undefined;
    faults.hold = new Promise((r) => (release = r));
    try {
      const held = [get(`${at}/readyz`), get(`${at}/readyz`)];
      await new Promise((r) => setTimeout(r, 200));
      const refused = await get(`${at}/healthz`, { 'x-request-id': 'over-the-cap' });
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get('x-request-id'), 'over-the-cap');
      release();
      for (const h of await Promise.all(held)) assert.equal(h.status, 200);
    } finally {
      faults.hold = undefined;
      release();
    }
    const answer = await raw(at, 'NOT A REQUEST\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\nX-Request-Id: [0-9a-z]{8}-[0-9a-z]+\r\n/);
  });
});

/** A log stream that keeps what is written to it. */
function logLines(): { stream: Writable; text: () => string } {
  let out = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString();
      done();
    },
  });
  return { stream, text: () => out };
}

describe('access log and open metrics', () => {
  test('an error in a log line is its type, message and code: no stack, no file path', async () => {
    const log = logLines();
    const stream = log.stream;
    const at = await serve({ access: { auth: 'off' } }, { logger: { level: 'warn', stream } });
    faults.runs = true;
    try {
      const res = await get(`${at}/api/v1/forecast?farm_id=WF_A&issue=2026112000`);
      assert.equal(res.status, 503);
    } finally {
      faults.runs = false;
    }
    await new Promise((r) => setTimeout(r, 50));
    const out = log.text();
    const line = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg?: string; err?: Record<string, unknown> })
      .find((l) => l.msg === 'store unavailable');
    assert.ok(line?.err, out);
    assert.deepEqual(line.err, { type: 'StoreUnavailableError', message: 'connection refused' });
    assert.ok(!out.includes('stack') && !out.includes('.js:') && !out.includes('file://'), out);
  });

  test('--access-log: a JSON line per answer naming its request id, route, status, duration and key name, never the key', async () => {
    const log = logLines();
    const stream = log.stream;
    const at = await serve(
      { access: { auth: 'required', defaultRate: 1000, defaultBurst: 1000, authFailBurst: 1000, accessLog: true } },
      { logger: { level: 'warn', stream } },
    );
    const sent: Array<[Got, string | undefined, string]> = [];
    for (const [path, key] of [
      ['/api/v1/forecast?farm_id=WF_A', keys.desk],
      ['/api/v1/forecast?farm_id=WF_A&size=0', keys.desk],
      ['/api/v1/farms', keys.desk],
      ['/api/v1/farms', undefined],
      ['/metrics', keys.ops],
      ['/nope', keys.desk],
    ] as const) {
      sent.push([await get(at + path, key === undefined ? {} : { 'x-api-key': key }), key, path]);
    }
    await new Promise((r) => setTimeout(r, 50));
    const out = log.text();
    const lines = out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const byId = new Map(lines.map((l) => [l.reqId, l]));
    const names: Record<string, string> = { [keys.desk]: 'desk-key', [keys.ops]: 'ops-admin' };
    for (const [res, key, path] of sent) {
      const line = byId.get(res.headers.get('x-request-id'));
      assert.ok(line, `a line for ${path}`);
      assert.equal(line.msg, 'request');
      assert.equal(line.level, 30);
      assert.equal(line.method, 'GET');
      assert.equal(line.status, res.status);
      assert.equal(line.route, path === '/nope' ? 'other' : path.split('?')[0]);
      assert.equal(typeof line.ms, 'number');
      assert.ok((line.ms as number) >= 0);
      assert.equal(line.keyName, key === undefined ? undefined : names[key]);
      assert.ok(!JSON.stringify(line).includes('WF_A'), 'no URL');
    }
    assert.equal(lines.length, sent.length);
    for (const k of [keys.desk, keys.ops]) assert.ok(!out.includes(k) && !out.includes(k.slice(4, 20)), 'a key in the log');
  });

  test('without keys, /metrics is open like the rest', async () => {
    const at = await serve({ access: { auth: 'off' } });
    const res = await get(`${at}/metrics`);
    assert.equal(res.status, 200);
    parsePromText(res.text);
  });
});
