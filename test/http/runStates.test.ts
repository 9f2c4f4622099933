/**
 * Run states through the issues list (INTERFACE.md section 11): transitions
 * with a short deadline, late files, scopes, ?status=, another server process
 * over the same store (and a restart) seeing the same, and Forecast-Issue on
 * every forecast answer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.js';
import { openStore } from '../../src/store/openStore.js';
import type { Store } from '../../src/store/store.js';
import { DEFAULT_RULES, seed, testStore } from '../helpers/fixtures.js';
import { bearer, createKey } from '../helpers/keys.js';

const DEADLINE_MS = 1500;
const BEIJING = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+08:00$/;

let store: Store;
let url = '';
let cleanup: () => Promise<void>;
const apps: FastifyInstance[] = [];
let scoped: Record<string, string>;
let every: Record<string, string>;

async function app(s: Store = store): Promise<FastifyInstance> {
  const a = await buildApp({ store: s, rules: DEFAULT_RULES, version: 'test', runDeadlineMs: DEADLINE_MS, access: { auth: 'required' } });
  apps.push(a);
  return a;
}

interface Item {
  issue: string;
  status: string;
  farms: number;
  farms_expected: number;
  available_at: string;
  completed_at: string | null;
  updated_at: string;
}

async function runs(a: FastifyInstance, headers: Record<string, string>, query = ''): Promise<Item[]> {
  const res = await a.inject({ url: `/api/v1/forecast/issues${query}`, headers });
  assert.equal(res.statusCode, 200, res.body);
  return (JSON.parse(res.body) as { data: { items: Item[] } }).data.items;
}

const brief = (items: Item[]): string[] => items.map((i) => `${i.issue} ${i.status} ${i.farms}/${i.farms_expected}`);

before(async () => {
  const s = await testStore();
  store = s.store;
  url = s.url;
  cleanup = s.cleanup;
  await seed(store, [
    { farmId: 'WF_A', issue: '2026112000', opts: { steps: [0] } },
    { farmId: 'PV_B', issue: '2026112000', opts: { steps: [0] } },
    { farmId: 'WF_C', issue: '2026112000', opts: { steps: [0] } },
  ]);
  scoped = bearer(await createKey(store, 'run-a', { farms: ['WF_A'] }));
  every = bearer(await createKey(store, 'run-every'));
});

after(async () => {
  for (const a of apps) await a.close();
  await cleanup?.();
});

describe('run states', () => {
  test('a complete run, then a newer one receiving, partial at its deadline (superseding the older), complete when late files land', async () => {
    const a = await app();
    assert.deepEqual(brief(await runs(a, every)), ['2026112000 complete 3/3']);
    await seed(store, [{ farmId: 'WF_A', issue: '2026112012', opts: { steps: [0, 1] } }]);
    let items = await runs(a, every);
    assert.deepEqual(brief(items), ['2026112012 receiving 1/3', '2026112000 complete 3/3'], 'receiving does not supersede');
    assert.equal(items[0]!.completed_at, null);
    for (const i of items) {
      assert.match(i.available_at, BEIJING);
      assert.match(i.updated_at, BEIJING);
    }
    // The key that sees WF_A only expects one site: for it the newer run is complete already.
    assert.deepEqual(brief(await runs(a, scoped)), ['2026112012 complete 1/1', '2026112000 superseded 1/1']);

    await new Promise((r) => setTimeout(r, DEADLINE_MS + 100));
    items = await runs(a, every);
    assert.deepEqual(brief(items), ['2026112012 partial 1/3', '2026112000 superseded 3/3']);
    const partialAt = items[0]!.completed_at;
    assert.match(partialAt!, BEIJING);
    assert.deepEqual(brief(await runs(a, every, '?status=partial')), ['2026112012 partial 1/3']);
    assert.deepEqual(brief(await runs(a, every, '?status=superseded,receiving')), ['2026112000 superseded 3/3']);

    await seed(store, [
      { farmId: 'PV_B', issue: '2026112012', opts: { steps: [0] } },
      { farmId: 'WF_C', issue: '2026112012', opts: { steps: [0] } },
    ]);
    items = await runs(a, every);
    assert.deepEqual(brief(items), ['2026112012 complete 3/3', '2026112000 superseded 3/3'], 'a late file completes a partial run');
    assert.equal(items[0]!.completed_at, partialAt, 'completed_at stays when it first left receiving');
  });

  test('another process over the same store, and a restart, see the same states', async () => {
    const first = await runs(await app(), every);
    const other = await openStore(url);
    try {
      const second = await app(other);
      assert.deepEqual(await runs(second, every), first);
      assert.deepEqual(await runs(second, scoped), await runs(await app(), scoped));
    } finally {
      for (const a of apps.splice(1)) await a.close();
      await other.close();
    }
  });

  test('the list of one site, and ?status= errors', async () => {
    const a = await app();
    assert.deepEqual(brief(await runs(a, every, '?farm_id=PV_B')), ['2026112012 complete 3/3', '2026112000 superseded 3/3']);
    const bad = await a.inject({ url: '/api/v1/forecast/issues?status=done', headers: every });
    assert.equal(bad.statusCode, 400);
    assert.match(JSON.parse(bad.body).message, /status .*"done".* not a run state/);
    const hidden = await a.inject({ url: '/api/v1/forecast/issues?farm_id=PV_B', headers: scoped });
    assert.equal(hidden.statusCode, 404);
  });

  test('Forecast-Issue names the run on every forecast answer: JSON, CSV, 304', async () => {
    const a = await app();
    for (const path of ['/api/v1/forecast?farm_id=WF_A', '/api/v1/forecast?farm_id=WF_A&format=csv', '/api/v1/forecast?farm_id=WF_A&issue=2026112000']) {
      const res = await a.inject({ url: path, headers: every });
      assert.equal(res.statusCode, 200);
      const expected = path.includes('issue=') ? '2026112000' : '2026112012';
      assert.equal(res.headers['forecast-issue'], expected, path);
      const again = await a.inject({ url: path, headers: { ...every, 'if-none-match': String(res.headers.etag) } });
      assert.equal(again.statusCode, 304);
      assert.equal(again.headers['forecast-issue'], expected, `${path} 304`);
    }
  });
});
