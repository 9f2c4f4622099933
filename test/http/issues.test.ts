/** GET /api/v1/forecast/issues against a real SQLite store file. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { FARMS, seed, testStore, testApp } from '../helpers/fixtures.js';
import { assertError, okData, type InjectResult } from './support.js';

const I = '/api/v1/forecast/issues';
const SHORT = { steps: [0, 1, 2] };
const NO_DATA = { farmId: 'WF_D', lat: 30, lon: 110, name: 'No data' };

const stores: Array<() => Promise<void>> = [];
let app: FastifyInstance;
let bigApp: FastifyInstance;
const get = (a: FastifyInstance, url: string): Promise<InjectResult> => a.inject(url) as unknown as Promise<InjectResult>;

/** Issue names of 1 001 consecutive hourly runs from 2026-10-01T00Z. */
const hourly = (n: number): string[] =>
  Array.from({ length: n }, (_, h) => {
    const t = new Date(Date.UTC(2026, 9, 1, h));
    return t.toISOString().slice(0, 13).replace(/[-T]/g, '');
  });
const BIG = hourly(1001);

before(async () => {
  const s = await testStore();
  stores.push(s.cleanup);
  await seed(
    s.store,
    [
      { farmId: 'WF_C', issue: '2026111912', opts: SHORT },
      // Published out of order: the list is ordered by issue, not by arrival.
      { farmId: 'WF_A', issue: '2026112012', opts: SHORT },
      { farmId: 'WF_A', issue: '2026112000', opts: SHORT },
      { farmId: 'PV_B', issue: '2026112000', opts: SHORT },
      { farmId: 'WF_C', issue: '2026112000', opts: SHORT },
      // Published twice: still one site.
      { farmId: 'WF_C', issue: '2026112000', opts: { steps: [0] } },
    ],
    [...FARMS, NO_DATA],
  );
  app = await testApp(s.store);

  const big = await testStore();
  stores.push(big.cleanup);
  await seed(big.store, BIG.map((issue) => ({ farmId: 'WF_A', issue, opts: { steps: [0] } })));
  bigApp = await testApp(big.store);
});

after(async () => {
  await app?.close();
  await bigApp?.close();
  for (const c of stores) await c();
});

/** The members this file is about (run states have their own tests: runStates.test.ts). */
const brief = (i: { issue: string; issue_time_utc: string; farms: number }) => ({ issue: i.issue, issue_time_utc: i.issue_time_utc, farms: i.farms });

describe('GET /api/v1/forecast/issues', () => {
  test('items are {issue, issue_time_utc, status, farms, …}, newest first, farms counting sites in the run', async () => {
    const d = okData(await get(app, I));
    assert.deepEqual(Object.keys(d), ['total', 'page', 'size', 'items']);
    assert.equal(d.total, 3);
    assert.equal(d.page, 1);
    assert.equal(d.size, 100);
    assert.deepEqual(d.items.map(brief), [
      { issue: '2026112012', issue_time_utc: '2026-11-20T12:00:00Z', farms: 1 },
      { issue: '2026112000', issue_time_utc: '2026-11-20T00:00:00Z', farms: 3 },
      { issue: '2026111912', issue_time_utc: '2026-11-19T12:00:00Z', farms: 1 },
    ]);
    for (const item of d.items) {
      assert.deepEqual(Object.keys(item), ['issue', 'issue_time_utc', 'status', 'farms', 'farms_expected', 'available_at', 'completed_at', 'updated_at']);
      // Four registered sites, one of them without data in any run: the newest run is still receiving.
      assert.equal(item.farms_expected, 4);
    }
    assert.equal(d.items[0].status, 'receiving');
  });

  test('farm_id keeps the runs holding data for that site', async () => {
    const b = okData(await get(app, `${I}?farm_id=PV_B`));
    assert.equal(b.total, 1);
    assert.deepEqual(b.items.map(brief), [{ issue: '2026112000', issue_time_utc: '2026-11-20T00:00:00Z', farms: 3 }]);
    const c = okData(await get(app, `${I}?farm_id=WF_C`));
    assert.deepEqual(
      c.items.map((i: any) => [i.issue, i.farms]),
      [
        ['2026112000', 3],
        ['2026111912', 1],
      ],
    );
    const a = okData(await get(app, `${I}?farm_id=WF_A`));
    assert.deepEqual(a.items.map((i: any) => i.issue), ['2026112012', '2026112000']);
  });

  test('a registered site without data has no runs', async () => {
    const d = okData(await get(app, `${I}?farm_id=WF_D`));
    assert.equal(d.total, 0);
    assert.deepEqual(d.items, []);
  });

  test('an unknown farm_id is 404 40401', async () => {
    assertError(await get(app, `${I}?farm_id=NOPE`), 404, 40401, ['NOPE']);
  });

  test('an empty or repeated farm_id is 400 40001', async () => {
    assertError(await get(app, `${I}?farm_id=`), 400, 40001, ['farm_id']);
    assertError(await get(app, `${I}?farm_id=WF_A&farm_id=PV_B`), 400, 40001, ['farm_id']);
  });

  test('page and size slice the list; a page past the end is []', async () => {
    const p2 = okData(await get(app, `${I}?size=2&page=2`));
    assert.equal(p2.total, 3);
    assert.equal(p2.size, 2);
    assert.equal(p2.page, 2);
    assert.deepEqual(p2.items.map((i: any) => i.issue), ['2026111912']);
    const p3 = okData(await get(app, `${I}?size=2&page=3`));
    assert.equal(p3.total, 3);
    assert.deepEqual(p3.items, []);
    const fp = okData(await get(app, `${I}?farm_id=WF_A&size=1&page=2`));
    assert.equal(fp.total, 2);
    assert.deepEqual(fp.items.map((i: any) => i.issue), ['2026112000']);
  });

  test('the default size is 100, newest first across days and months', async () => {
    const d = okData(await get(bigApp, I));
    assert.equal(d.total, 1001);
    assert.equal(d.size, 100);
    assert.equal(d.items.length, 100);
    const newestFirst = [...BIG].reverse();
    assert.deepEqual(d.items.map((i: any) => i.issue), newestFirst.slice(0, 100));
    assert.equal(d.items[0].issue, '2026111116');
    assert.equal(d.items[0].issue_time_utc, '2026-11-11T16:00:00Z');
    assert.equal(d.items[0].farms, 1);
  });

  test('size 1000 is the maximum', async () => {
    const d = okData(await get(bigApp, `${I}?size=1000`));
    assert.equal(d.items.length, 1000);
    const p2 = okData(await get(bigApp, `${I}?size=1000&page=2`));
    assert.deepEqual(p2.items.map(brief), [{ issue: '2026100100', issue_time_utc: '2026-10-01T00:00:00Z', farms: 1 }]);
    assertError(await get(bigApp, `${I}?size=1001`), 400, 40001, ['size']);
  });

  for (const [name, value] of [
    ['size', '0'],
    ['size', '1.5'],
    ['size', 'x'],
    ['size', ''],
    ['page', '0'],
    ['page', '-2'],
    ['page', 'one'],
    ['page', '9'.repeat(400)],
    ['size', '0x10'],
    ['page', ''],
  ] as const) {
    test(`${name}=${value.slice(0, 12)} is 400 40001 naming ${name}`, async () => {
      assertError(await get(app, `${I}?${name}=${value}`), 400, 40001, [name]);
    });
  }
});
