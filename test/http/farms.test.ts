/** GET /api/v1/farms against a real SQLite store file. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { readFarmsCsv } from '../../src/ingest/farmsCsv.js';
import { farmsCsv, FARMS, testStore, testApp, type FarmFixture } from '../helpers/fixtures.js';
import { assertError, okData, type InjectResult } from './support.js';

const EXTRA = {
  header: ['capacity_mw', 'province', 'commissioned'],
  cells: (f: FarmFixture): string[] => [String(f.farmId.length * 10), `P-${f.farmId}`, f.farmId === 'WF_C' ? '' : '2020'],
};

// Registered out of order, with mixed case and digits, to show the sort.
const MORE: FarmFixture[] = [
  { farmId: 'zz.9', lat: -10.25, lon: -170.5, name: 'Last' },
  { farmId: 'A-1', lat: 0, lon: 0, name: 'First' },
  { farmId: 'PV_A', lat: 36.1, lon: 101.4, name: 'Solar A' },
  { farmId: 'WF_B', lat: 41, lon: 96, name: 'Wind B' },
  { farmId: '0001', lat: 20.125, lon: 110.75, name: 'Digits' },
];
const ALL = [...FARMS, ...MORE];
const SORTED_IDS = ALL.map((f) => f.farmId).sort();

const stores: Array<() => Promise<void>> = [];
let app: FastifyInstance;
let bigApp: FastifyInstance;
const get = (a: FastifyInstance, url: string): Promise<InjectResult> => a.inject(url) as unknown as Promise<InjectResult>;

before(async () => {
  const s = await testStore();
  stores.push(s.cleanup);
  await s.store.upsertFarms(readFarmsCsv(Buffer.from(farmsCsv(ALL, EXTRA))));
  app = await testApp(s.store);

  // 10 001 sites, to see the default and maximum page sizes at work.
  const big = await testStore();
  stores.push(big.cleanup);
  const many: FarmFixture[] = Array.from({ length: 10_001 }, (_, i) => ({
    farmId: `S${String(10_000 - i).padStart(5, '0')}`,
    lat: 30 + (i % 100) / 10,
    lon: 100 + Math.floor(i / 100) / 10,
    name: `Site ${i}`,
  }));
  await big.store.upsertFarms(readFarmsCsv(Buffer.from(farmsCsv(many))));
  bigApp = await testApp(big.store);
});

after(async () => {
  await app?.close();
  await bigApp?.close();
  for (const c of stores) await c();
});

describe('GET /api/v1/farms', () => {
  test('items are farm_id, lat, lon, name, then the registry columns in order, sorted by farm_id', async () => {
    const data = okData(await get(app, '/api/v1/farms'));
    assert.deepEqual(Object.keys(data), ['total', 'page', 'size', 'items']);
    assert.equal(data.total, ALL.length);
    assert.equal(data.page, 1);
    assert.equal(data.size, 1000);
    assert.deepEqual(
      data.items.map((f: any) => f.farm_id),
      SORTED_IDS,
    );
    for (const item of data.items) {
      assert.deepEqual(Object.keys(item), ['farm_id', 'lat', 'lon', 'name', 'capacity_mw', 'province', 'commissioned']);
      const f = ALL.find((x) => x.farmId === item.farm_id)!;
      assert.equal(item.lat, f.lat);
      assert.equal(item.lon, f.lon);
      assert.equal(item.name, f.name);
      assert.deepEqual([item.capacity_mw, item.province, item.commissioned], EXTRA.cells(f));
    }
    const pvb = data.items.find((f: any) => f.farm_id === 'PV_B');
    assert.deepEqual(pvb, { farm_id: 'PV_B', lat: 36.125, lon: 101.5, name: 'Solar B', capacity_mw: '40', province: 'P-PV_B', commissioned: '2020' });
    const neg = data.items.find((f: any) => f.farm_id === 'zz.9');
    assert.equal(neg.lat, -10.25);
    assert.equal(neg.lon, -170.5);
  });

  test('page and size slice the sorted list; total counts all sites', async () => {
    const p2 = okData(await get(app, '/api/v1/farms?size=3&page=2'));
    assert.equal(p2.total, ALL.length);
    assert.equal(p2.page, 2);
    assert.equal(p2.size, 3);
    assert.deepEqual(p2.items.map((f: any) => f.farm_id), SORTED_IDS.slice(3, 6));
    const p3 = okData(await get(app, '/api/v1/farms?size=3&page=3'));
    assert.deepEqual(p3.items.map((f: any) => f.farm_id), SORTED_IDS.slice(6, 8));
  });

  test('a page past the end is 200 with items []', async () => {
    const d = okData(await get(app, '/api/v1/farms?size=3&page=4'));
    assert.equal(d.total, ALL.length);
    assert.deepEqual(d.items, []);
    const far = okData(await get(app, '/api/v1/farms?page=999999999&size=10000'));
    assert.deepEqual(far.items, []);
  });

  test('the default size is 1000', async () => {
    const d = okData(await get(bigApp, '/api/v1/farms'));
    assert.equal(d.total, 10_001);
    assert.equal(d.size, 1000);
    assert.equal(d.items.length, 1000);
    assert.equal(d.items[0].farm_id, 'S00000');
    assert.equal(d.items[999].farm_id, 'S00999');
    const p11 = okData(await get(bigApp, '/api/v1/farms?page=11'));
    assert.equal(p11.items.length, 1);
    assert.equal(p11.items[0].farm_id, 'S10000');
  });

  test('size 10000 is accepted and returns 10000 sites', async () => {
    const d = okData(await get(bigApp, '/api/v1/farms?size=10000'));
    assert.equal(d.size, 10_000);
    assert.equal(d.items.length, 10_000);
    const p2 = okData(await get(bigApp, '/api/v1/farms?size=10000&page=2'));
    assert.deepEqual(p2.items.map((f: any) => f.farm_id), ['S10000']);
  });

  for (const [name, value] of [
    ['size', '10001'],
    ['size', '0'],
    ['size', '-5'],
    ['size', '2.5'],
    ['size', 'all'],
    ['size', ''],
    ['page', '0'],
    ['page', '-1'],
    ['page', '1.5'],
    ['page', 'x'],
    ['page', '9'.repeat(400)],
    ['size', '0x10'],
    ['page', ''],
  ] as const) {
    test(`${name}=${value.slice(0, 12)} is 400 40001 naming ${name}`, async () => {
      assertError(await get(app, `/api/v1/farms?${name}=${value}`), 400, 40001, [name]);
    });
  }

  test('a repeated size is 400 40001, saying so', async () => {
    const res = await get(app, '/api/v1/farms?size=1&size=2');
    assertError(res, 400, 40001, ['size']);
    assert.equal((JSON.parse(res.body) as { message: string }).message, 'Query parameter size is given more than once; give it once.');
  });

  test('unknown parameters are ignored', async () => {
    const a = await get(app, '/api/v1/farms?size=2');
    const b = await get(app, '/api/v1/farms?size=2&farm_id=WF_A&q=x');
    assert.equal(b.body, a.body);
  });

  test('importing the registry again updates sites by farm_id', async () => {
    const s = await testStore();
    try {
      await s.store.upsertFarms(readFarmsCsv(Buffer.from(farmsCsv(FARMS))));
      await s.store.upsertFarms(readFarmsCsv(Buffer.from(farmsCsv([{ farmId: 'WF_A', lat: 41, lon: 96, name: 'Renamed' }]))));
      const a = await testApp(s.store);
      try {
        const d = okData(await get(a, '/api/v1/farms'));
        assert.equal(d.total, 3);
        assert.deepEqual(d.items.find((f: any) => f.farm_id === 'WF_A'), { farm_id: 'WF_A', lat: 41, lon: 96, name: 'Renamed' });
      } finally {
        await a.close();
      }
    } finally {
      await s.cleanup();
    }
  });
});
