/**
 * Scopes as callers see them: a key scoped to WF_A gets, for a site it may not
 * see, exactly what it gets for a site that does not exist, on every endpoint
 * and every way of naming a site; lists and counts hold visible sites only;
 * nothing a wider key caused to be cached is served across.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.js';
import { DEFAULT_RULES, seed, testStore, type FarmFixture } from '../helpers/fixtures.js';
import { bearer, createKey } from '../helpers/keys.js';

/** PV_B lies 2.2 km north of WF_A: a point between them is nearer PV_B, yet within reach of WF_A. */
const FARMS: FarmFixture[] = [
  { farmId: 'WF_A', lat: 40.5, lon: 95.25, name: 'Wind A' },
  { farmId: 'PV_B', lat: 40.52, lon: 95.25, name: 'Solar B' },
  { farmId: 'WF_C', lat: 43.8, lon: 87.6, name: 'Wind C' },
];
const BETWEEN = 'lat=40.515&lon=95.25';

let app: FastifyInstance;
let at = '';
let cleanup: () => Promise<void>;
let scoped: Record<string, string>;
let every: Record<string, string>;

before(async () => {
  const s = await testStore();
  cleanup = s.cleanup;
  await seed(
    s.store,
    [
      { farmId: 'WF_A', issue: '2026112000', opts: { steps: [0, 1, 2] } },
      { farmId: 'PV_B', issue: '2026112000', opts: { steps: [0, 1, 2] } },
      { farmId: 'PV_B', issue: '2026112012', opts: { steps: [0, 1] } },
      { farmId: 'WF_C', issue: '2026112000', opts: { steps: [0] } },
    ],
    FARMS,
  );
  scoped = bearer(await createKey(s.store, 'scoped-a', { farms: ['WF_A', 'NOT_REGISTERED'] }));
  every = bearer(await createKey(s.store, 'every'));
  app = await buildApp({ store: s.store, rules: DEFAULT_RULES, version: 'test', access: { auth: 'required', defaultBurst: 100000, defaultRate: 1000 } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  at = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
});

after(async () => {
  await app?.close();
  await cleanup?.();
});

interface Seen {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Headers that differ between any two answers (time, the caller's own budget) are left out. */
const VARYING = new Set(['date', 'ratelimit', 'x-request-id', 'keep-alive', 'connection']);

async function seen(path: string, headers: Record<string, string>, method = 'GET'): Promise<Seen> {
  const res = await fetch(at + path, { headers, method });
  const kept = Object.fromEntries([...res.headers.entries()].filter(([k]) => !VARYING.has(k)));
  return { status: res.status, headers: kept, body: await res.text() };
}

/** The two answers are the same once the names that differ in the request are swapped. */
function assertSameAnswer(hidden: Seen, missing: Seen, swap: Array<[string, string]>, what: string): void {
  let body = hidden.body;
  const headers = JSON.stringify(hidden.headers);
  let h = headers;
  for (const [from, to] of swap) {
    body = body.split(from).join(to);
    h = h.split(from).join(to);
  }
  assert.equal(hidden.status, missing.status, what);
  assert.equal(body, missing.body, what);
  assert.deepEqual(JSON.parse(h), missing.headers, what);
}

describe('a site outside the scope is answered as a site that does not exist', () => {
  const byId: Array<[string, string]> = [
    ['forecast JSON', '/api/v1/forecast?farm_id=ID'],
    ['forecast with issue', '/api/v1/forecast?farm_id=ID&issue=2026112000'],
    ['forecast with elements and paging', '/api/v1/forecast?farm_id=ID&elements=t2m,tr&page=2&size=1'],
    ['forecast CSV', '/api/v1/forecast?farm_id=ID&format=csv'],
    ['forecast with a trailing slash', '/api/v1/forecast/?farm_id=ID'],
    ['issues of a site', '/api/v1/forecast/issues?farm_id=ID'],
    ['issues of a site, paged', '/api/v1/forecast/issues?farm_id=ID&page=1&size=5'],
  ];
  for (const [what, template] of byId) {
    test(`${what}: GET and HEAD`, async () => {
      // The wider key asks first, so that whatever it leaves cached would show if it crossed.
      assert.equal((await seen(template.replace('ID', 'PV_B'), every)).status, 200, what);
      for (const method of ['GET', 'HEAD']) {
        const hidden = await seen(template.replace('ID', 'PV_B'), scoped, method);
        const missing = await seen(template.replace('ID', 'PX_Q'), scoped, method);
        assert.equal(hidden.status, 404, `${what} ${method}`);
        assertSameAnswer(hidden, missing, [['PV_B', 'PX_Q']], `${what} ${method}`);
      }
    });
  }

  test('forecast asked as CSV by Accept', async () => {
    const accept = { accept: 'text/csv' };
    assert.equal((await seen('/api/v1/forecast?farm_id=PV_B', { ...every, ...accept })).status, 200);
    const hidden = await seen('/api/v1/forecast?farm_id=PV_B', { ...scoped, ...accept });
    const missing = await seen('/api/v1/forecast?farm_id=PX_Q', { ...scoped, ...accept });
    assertSameAnswer(hidden, missing, [['PV_B', 'PX_Q']], 'Accept: text/csv');
  });

  test('conditional requests with the tag and date the site has for a wider key: 404, never 304', async () => {
    const path = '/api/v1/forecast?farm_id=PV_B&issue=2026112000';
    const full = await fetch(at + path, { headers: every });
    const etag = full.headers.get('etag')!;
    const lastModified = full.headers.get('last-modified')!;
    assert.equal((await fetch(at + path, { headers: { ...every, 'if-none-match': etag } })).status, 304);
    const conds: Record<string, string>[] = [{ 'if-none-match': etag }, { 'if-none-match': '*' }, { 'if-modified-since': lastModified }];
    for (const cond of conds) {
      const hidden = await seen(path, { ...scoped, ...cond });
      const missing = await seen(path.replace('PV_B', 'PX_Q'), { ...scoped, ...cond });
      assert.equal(hidden.status, 404, JSON.stringify(cond));
      assertSameAnswer(hidden, missing, [['PV_B', 'PX_Q']], JSON.stringify(cond));
    }
  });

  test('a point at a hidden site: as a point near no site', async () => {
    const far = '/api/v1/forecast?lat=40.56&lon=95.25';
    const everyFar = await seen(far, every);
    assert.equal(everyFar.status, 200, 'the wider key is served PV_B (4.4 km), WF_A is 6.7 km away');
    const hidden = await seen(far, scoped);
    assert.equal(hidden.status, 404);
    assert.match(JSON.parse(hidden.body).message, /No registered site lies within 5 km of lat=40\.56, lon=95\.25\./);
    // Exactly the answer for a point near nothing, once the coordinates are swapped.
    const nothing = await seen('/api/v1/forecast?lat=41.56&lon=96.25', scoped);
    assertSameAnswer(hidden, nothing, [['40.56', '41.56'], ['95.25', '96.25']], 'point');
  });

  test('a point nearer a hidden site is served by the nearest visible one, and cached answers do not cross', async () => {
    const path = `/api/v1/forecast?${BETWEEN}&size=1`;
    const wide = JSON.parse((await seen(path, every)).body);
    assert.equal(wide.data.farm_id, 'PV_B');
    const narrow = JSON.parse((await seen(path, scoped)).body);
    assert.equal(narrow.data.farm_id, 'WF_A');
    // And again, in the other order, now that both are remembered.
    assert.equal(JSON.parse((await seen(path, every)).body).data.farm_id, 'PV_B');
    assert.equal(JSON.parse((await seen(path, scoped)).body).data.farm_id, 'WF_A');
  });
});

describe('lists and counts hold visible sites only', () => {
  test('/api/v1/farms lists the scope\'s registered sites', async () => {
    const narrow = JSON.parse((await seen('/api/v1/farms', scoped)).body).data;
    assert.deepEqual(
      narrow.items.map((f: { farm_id: string }) => f.farm_id),
      ['WF_A'],
    );
    assert.equal(narrow.total, 1);
    const wide = JSON.parse((await seen('/api/v1/farms', every)).body).data;
    assert.equal(wide.total, 3);
  });

  test('/api/v1/forecast/issues lists runs holding visible data, counting visible sites', async () => {
    const narrow = JSON.parse((await seen('/api/v1/forecast/issues', scoped)).body).data;
    assert.deepEqual(narrow.items.map((i: { issue: string; farms: number }) => [i.issue, i.farms]), [['2026112000', 1]]);
    assert.equal(narrow.total, 1);
    const wide = JSON.parse((await seen('/api/v1/forecast/issues', every)).body).data;
    assert.deepEqual(wide.items.map((i: { issue: string; farms: number }) => [i.issue, i.farms]), [
      ['2026112012', 1],
      ['2026112000', 3],
    ]);
  });

  test('the run of a hidden site that is not in the scope cannot be read through a visible one', async () => {
    // WF_A has no 2026112012 run; PV_B has. Asked through WF_A: not found, as for any missing run.
    const res = await seen('/api/v1/forecast?farm_id=WF_A&issue=2026112012', scoped);
    assert.equal(res.status, 404);
    assert.match(JSON.parse(res.body).message, /Issue 2026112012 does not exist for site WF_A/);
  });
});
