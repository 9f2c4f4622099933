/**
 * The door over a real port: which routes it guards, keys in both headers,
 * the one 401, rate limits and their headers, failed-key limits per address,
 * auto mode, the in-flight cap and CORS.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createServer, type IncomingMessage } from 'node:http';
import { Door, doorSettings, presentedKey } from '../../src/access/door.js';
import { Keyring } from '../../src/access/keyring.js';
import { localLimiter } from '../../src/access/rateLimit/localLimiter.js';
import { OPEN_PATHS, OPEN_PREFIXES, PROBE_PATHS } from '../../src/access/routeClass.js';
import { buildApp } from '../../src/http/app.js';
import { writeErrorAnswer } from '../../src/http/envelope.js';
import type { AppContext } from '../../src/http/context.js';
import type { Store } from '../../src/store/store.js';
import { DEFAULT_RULES, eventually, seed, testStore } from '../helpers/fixtures.js';
import { listen } from '../helpers/http.js';
import { bearer, createKey } from '../helpers/keys.js';

let store: Store;
let cleanup: () => Promise<void>;
const apps: FastifyInstance[] = [];

before(async () => {
  const s = await testStore();
  store = s.store;
  cleanup = s.cleanup;
  await seed(store, [
    { farmId: 'WF_A', issue: '2026112000', opts: { steps: [0, 1, 2] } },
    { farmId: 'PV_B', issue: '2026112000', opts: { steps: [0, 1, 2] } },
  ]);
});

after(async () => {
  for (const app of apps) await app.close();
  await cleanup?.();
});

async function serve(ctx: Partial<AppContext> = {}): Promise<{ app: FastifyInstance; at: string }> {
  const { app, base } = await listen(store, ctx);
  apps.push(app);
  return { app, at: base };
}

interface Got {
  status: number;
  headers: Headers;
  body: any;
}

async function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Got> {
  const res = await fetch(url, { headers, method });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // CSV or empty
  }
  return { status: res.status, headers: res.headers, body };
}

const isOpen = (path: string): boolean => OPEN_PATHS.includes(path) || PROBE_PATHS.includes(path) || OPEN_PREFIXES.some((p) => path.startsWith(p));

describe('presentedKey', () => {
  test('Authorization: Bearer in any letter case, one space; X-API-Key; both only when equal', () => {
    const of = (headers: Record<string, string>): string | null => presentedKey({ headers } as unknown as IncomingMessage);
    assert.equal(of({ authorization: 'Bearer K1' }), 'K1');
    assert.equal(of({ authorization: 'bEaReR K1' }), 'K1');
    assert.equal(of({ authorization: 'BEARER K1' }), 'K1');
    for (const bad of ['Basic K1', 'Bearer', 'Bearer ', 'BearerXK1', 'Bearer\tK1', 'Bearen K1', 'B\u0000arer K1']) assert.equal(of({ authorization: bad }), '', bad);
    assert.equal(of({ authorization: 'Bearer  K1' }), ' K1', 'a second space is part of the key, which then fails its form');
    assert.equal(of({ 'x-api-key': 'K1' }), 'K1');
    assert.equal(of({ authorization: 'Bearer K1', 'x-api-key': 'K1' }), 'K1');
    assert.equal(of({ authorization: 'Bearer K1', 'x-api-key': 'K2' }), '');
    assert.equal(of({}), null);
  });
});

describe('with keys required', () => {
  let at = '';
  let app: FastifyInstance;
  let key = '';
  before(async () => {
    ({ app, at } = await serve({ access: { auth: 'required', defaultRate: 1000, defaultBurst: 1000, authFailBurst: 1000 } }));
    key = await createKey(store, 'door-main');
    await eventually(() => get(`${at}/api/v1/farms`, bearer(key)), (r) => r.status === 200, 3000);
  });

  test('every registered route is guarded unless it is listed open', async () => {
    const paths = app.routePaths.list();
    assert.ok(paths.length >= 8, paths.join(' '));
    for (const path of paths) {
      const url = at + (path.endsWith('*') ? path.slice(0, -1) + 'index.html' : path === '/api/v1/forecast' ? path + '?farm_id=WF_A' : path);
      const res = await get(url);
      if (isOpen(path.replace(/\*$/, ''))) assert.notEqual(res.status, 401, `${path} is open`);
      else {
        assert.equal(res.status, 401, `${path} is guarded`);
        assert.equal(res.body.code, 40101);
      }
    }
  });

  test("a key's forecast answers are private to the caller's cache, first and replayed, JSON and CSV", async () => {
    for (const q of ['&issue=2026112000', '']) {
      for (const format of ['', '&format=csv']) {
        const expected = q === '' ? 'private, max-age=60' : 'private, max-age=3600';
        // The second is replayed from the remembered answer, the third after it was kept.
        for (let i = 0; i < 3; i++) {
          const res = await get(`${at}/api/v1/forecast?farm_id=WF_A&size=2${q}${format}`, bearer(key));
          assert.equal(res.status, 200);
          assert.equal(res.headers.get('cache-control'), expected, `${q}${format} #${i}`);
        }
      }
    }
  });

  test('paths no route takes are guarded too (no key: 401, not 404)', async () => {
    for (const path of ['/api/v1/nope', '/api/v2/forecast', '/%61pi/v1/farms', '/API/V1/FARMS', '/metrics', '/anything']) {
      assert.equal((await get(at + path)).status, 401, path);
    }
  });

  test('the key is taken from Authorization: Bearer or X-API-Key, and the forecast direct path is guarded', async () => {
    for (const h of [bearer(key), { authorization: `bearer ${key}` }, { 'x-api-key': key }, { ...bearer(key), 'x-api-key': key }]) {
      const res = await get(`${at}/api/v1/forecast?farm_id=WF_A&size=1`, h);
      assert.equal(res.status, 200, JSON.stringify(h));
    }
    assert.equal((await get(`${at}/api/v1/forecast?farm_id=WF_A&size=1`)).status, 401);
  });

  test('missing, malformed, checksum-broken, unknown and conflicting keys get the same 401', async () => {
    const broken = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    const unknown = await (async () => {
      const { mintKey } = await import('../../src/access/keyHash.js');
      return mintKey().key;
    })();
    const cases: Record<string, string>[] = [
      {},
      { authorization: 'Bearer' },
      { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
      { authorization: `Bearer  ${key}` },
      { authorization: `Bearer ${broken}` },
      { authorization: `Bearer ${unknown}` },
      { 'x-api-key': 'fcd_' },
      { ...bearer(key), 'x-api-key': unknown },
      { authorization: `Bearer ${key.toLowerCase()}` },
    ];
    const answers = [];
    for (const h of cases) {
      const res = await get(`${at}/api/v1/farms`, h);
      assert.equal(res.status, 401, JSON.stringify(h));
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="forecastd"');
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(res.headers.get('ratelimit'), null, 'a 401 carries no key budget');
      answers.push(JSON.stringify(res.body));
    }
    assert.equal(new Set(answers).size, 1, answers.join('\n'));
    assert.equal(JSON.parse(answers[0]!).code, 40101);
    for (const a of answers) assert.ok(!a.includes(key.slice(4, 12)), 'no key text in the answer');
  });

  test('a revoked key stops working', async () => {
    const k = await createKey(store, 'door-revoke');
    await eventually(() => get(`${at}/api/v1/farms`, bearer(k)), (r) => r.status === 200, 3000);
    assert.equal(await store.revokeKey('door-revoke', Date.now()), 1);
    const res = await eventually(() => get(`${at}/api/v1/farms`, bearer(k)), (r) => r.status === 401, 3000);
    assert.equal(res.status, 401);
  });

  test('/metrics: 404 to a key that is not admin, as a path that does not exist, rate-limit headers included', async () => {
    const res = await get(`${at}/metrics`, bearer(key));
    const none = await get(`${at}/nothing-here`, bearer(key));
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 40400);
    for (const r of [res, none]) {
      assert.match(r.headers.get('ratelimit-policy') ?? '', /^"default";q=\d+;w=\d+$/);
      assert.match(r.headers.get('ratelimit') ?? '', /^"default";r=\d+;t=\d+$/);
    }
    const names = (r: Got): string[] => [...r.headers.keys()].filter((h) => h !== 'date' && h !== 'x-request-id').sort();
    assert.deepEqual(names(res), names(none), 'the same headers as a path that does not exist');
  });
});

describe('rate limits', () => {
  let at = '';
  let key = '';
  before(async () => {
    // Created before the server starts: its key table holds the key from the first request on.
    key = await createKey(store, 'door-rate', { rate: 0.5, burst: 4 });
    ({ at } = await serve({ access: { auth: 'required', authFailRate: 1, authFailBurst: 3 } }));
  });

  test('a burst of B passes counting down, the next gets 429 with Retry-After, and one passes after waiting', async () => {
    const seen: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await get(`${at}/api/v1/farms`, bearer(key));
      assert.equal(res.status, 200, `request ${i + 1}`);
      assert.equal(res.headers.get('ratelimit-policy'), '"default";q=4;w=8');
      seen.push(Number(/^"default";r=(\d+);t=\d+$/.exec(res.headers.get('ratelimit')!)![1]));
    }
    assert.deepEqual(seen, [3, 2, 1, 0]);
    const refused = await get(`${at}/api/v1/farms`, bearer(key));
    assert.equal(refused.status, 429);
    assert.equal(refused.body.code, 42901);
    assert.equal(refused.body.data, null);
    assert.equal(refused.headers.get('retry-after'), '2');
    assert.match(refused.headers.get('ratelimit')!, /^"default";r=0;t=\d+$/);
    // The refusal took nothing: one token is back 2 s later.
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal((await get(`${at}/api/v1/farms`, bearer(key))).status, 200);
    assert.equal((await get(`${at}/api/v1/farms`, bearer(key))).status, 429);
  });

  test('failed keys are limited per address and never cost a key', async () => {
    const good = await createKey(store, 'door-rate-2', { rate: 100, burst: 5 });
    await eventually(() => get(`${at}/api/v1/farms`, bearer(good)), (r) => r.status === 200, 3000);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await get(`${at}/api/v1/farms`, bearer('fcd_nonsense'))).status);
    assert.ok(statuses.includes(429), statuses.join());
    const limited = await get(`${at}/api/v1/farms`, { 'x-api-key': 'garbage' });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    const res = await get(`${at}/api/v1/farms`, bearer(good));
    assert.equal(res.status, 200, 'the good key still passes from the same address');
    assert.match(res.headers.get('ratelimit')!, /^"default";r=[34];t=\d+$/);
  });
});

describe('auth auto', () => {
  test('open while no key exists, then keys are asked for within 2 s of the first', async () => {
    const s = await testStore();
    try {
      await seed(s.store, [{ farmId: 'WF_A', issue: '2026112000', opts: { steps: [0] } }]);
      const app = await buildApp({ store: s.store, rules: DEFAULT_RULES, version: 'test' });
      await app.listen({ port: 0, host: '127.0.0.1' });
      const at = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
      try {
        const open = await get(`${at}/api/v1/forecast?farm_id=WF_A`);
        assert.equal(open.status, 200);
        assert.equal(open.headers.get('ratelimit'), null, 'no limit without keys and without anon-rate');
        // Created through another handle, as another process would.
        const other = await (await import('../../src/store/openStore.js')).openStore(s.url);
        const k = await createKey(other, 'auto-first');
        await other.close();
        const t0 = Date.now();
        const closed = await eventually(() => get(`${at}/api/v1/forecast?farm_id=WF_A`), (r) => r.status === 401, 3000);
        assert.equal(closed.status, 401);
        assert.ok(Date.now() - t0 < 2500, `seen after ${Date.now() - t0} ms`);
        assert.equal((await get(`${at}/api/v1/forecast?farm_id=WF_A`, bearer(k))).status, 200);
        assert.equal((await get(`${at}/api/v1/elements`)).status, 200, 'elements stays open');
        assert.equal((await get(`${at}/api/v1/openapi.json`)).status, 200, 'the document stays open');
      } finally {
        await app.close();
      }
    } finally {
      await s.cleanup();
    }
  });
});

describe('anonymous limits, in-flight cap, CORS', () => {
  test('--anon-rate limits callers per address when no key is asked for', async () => {
    const { at } = await serve({ access: { auth: 'off', anonRate: 1, anonBurst: 2 } });
    const a = await get(`${at}/api/v1/farms`);
    assert.equal(a.headers.get('ratelimit-policy'), '"default";q=2;w=2');
    assert.equal((await get(`${at}/api/v1/farms`)).status, 200);
    const c = await get(`${at}/api/v1/farms`);
    assert.equal(c.status, 429);
    assert.equal(c.headers.get('retry-after'), '1');
  });

  test('with keys required, --anon-rate limits the open paths per address (a documented extension of the contract)', async () => {
    const { at } = await serve({ access: { auth: 'required', anonRate: 1, anonBurst: 1 } });
    assert.equal((await get(`${at}/api/v1/elements`)).status, 200);
    const limited = await get(`${at}/api/v1/elements`);
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('ratelimit-policy'), '"default";q=1;w=1');
  });

  test('health probes are outside --anon-rate: a balancer probing from one address always gets its answer', async () => {
    for (const auth of ['off', 'required'] as const) {
      const { at } = await serve({ access: { auth, anonRate: 1, anonBurst: 1 } });
      for (let i = 0; i < 5; i++) {
        for (const path of ['/healthz', '/readyz']) {
          const res = await get(`${at}${path}`);
          assert.equal(res.status, 200, `${auth} ${path} #${i}`);
          assert.equal(res.headers.get('ratelimit'), null);
        }
      }
      // The same address is limited elsewhere.
      assert.equal((await get(`${at}/api/v1/elements`)).status, 200);
      assert.equal((await get(`${at}/api/v1/elements`)).status, 429);
    }
  });

  test('beyond --max-in-flight: 503 / 50300 with Retry-After at once, and room again when one ends', async () => {
    // The door alone in front of a handler that holds its answers until told: requests stay in flight.
    const held: Array<() => void> = [];
    const door = new Door(doorSettings({ auth: 'off' }, { maxInFlight: 2 }), new Keyring(store), localLimiter(), writeErrorAnswer);
    const server = createServer((req, res) => {
      if (door.admit(req, res) === true) held.push(() => res.end("done"));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const at2 = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const first = [fetch(`${at2}/a`), fetch(`${at2}/b`)];
      await eventually(async () => held.length, (n) => n === 2, 2000);
      const t0 = performance.now();
      const refused = await get(`${at2}/c`);
      assert.ok(performance.now() - t0 < 500, 'answered at once, not queued');
      assert.equal(refused.status, 503);
      assert.equal(refused.body.code, 50300);
      assert.equal(refused.headers.get('retry-after'), '1');
      held.shift()!();
      await (await first[0]!).text();
      const next = fetch(`${at2}/d`);
      await eventually(async () => held.length, (n) => n === 2, 2000);
      for (const release of held.splice(0)) release();
      assert.equal((await next).status, 200);
      await (await first[1]!).text();
    } finally {
      for (const release of held.splice(0)) release();
      await new Promise((r) => server.close(r));
    }
  });

  test('--cors-origin answers preflights and exposes the rate-limit headers to listed origins only', async () => {
    const { at } = await serve({ access: { auth: 'off', corsOrigins: ['https://desk.example'] } });
    const pre = await get(`${at}/api/v1/forecast?farm_id=WF_A`, { origin: 'https://desk.example', 'access-control-request-method': 'GET' }, 'OPTIONS');
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), 'https://desk.example');
    for (const h of ['Authorization', 'X-API-Key', 'X-Request-Id', 'If-None-Match', 'Last-Event-ID']) {
      assert.match(pre.headers.get('access-control-allow-headers')!, new RegExp(`\\b${h}\\b`));
    }
    const res = await get(`${at}/api/v1/forecast?farm_id=WF_A`, { origin: 'https://desk.example' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://desk.example');
    for (const h of ['RateLimit', 'RateLimit-Policy', 'Retry-After', 'ETag', 'Forecast-Issue']) {
      assert.match(res.headers.get('access-control-expose-headers')!, new RegExp(h));
    }
    // The answer depends on Origin: a cache must not hand it to another origin (first and replayed alike).
    for (let i = 0; i < 3; i++) {
      const again = await get(`${at}/api/v1/forecast?farm_id=WF_A`, { origin: 'https://desk.example' });
      assert.equal(again.headers.get('vary'), 'Accept, Accept-Encoding, Origin', `#${i}`);
      assert.equal(again.headers.get('cache-control'), 'public, max-age=60', 'no key: public');
    }
    const other = await get(`${at}/api/v1/forecast?farm_id=WF_A`, { origin: 'https://evil.example' });
    assert.equal(other.headers.get('access-control-allow-origin'), null);
    assert.equal(other.headers.get('vary'), 'Accept, Accept-Encoding');
    const otherPre = await get(`${at}/api/v1/farms`, { origin: 'https://evil.example', 'access-control-request-method': 'GET' }, 'OPTIONS');
    assert.equal(otherPre.status, 405);
  });
});
