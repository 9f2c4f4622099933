/** GET /api/v1/forecast against a real SQLite store file. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { ELEMENT_NAMES } from '../../src/domain/elements.js';
import { MAX_PAGE } from '../../src/domain/limits.js';
import { STEP_MS } from '../../src/domain/run.js';
import { formatBeijing, parseIssue } from '../../src/domain/time.js';
import { cellValue, FARMS, seed, testStore, testApp, type FarmFixture } from '../helpers/fixtures.js';
import { assertError, CSV_CT, JSON_CT, okData, type InjectResult } from './support.js';

const OLD = '2026112000';
const NEW = '2026112012';
const NEW_MS = parseIssue(NEW)!;
const OLD_MS = parseIssue(OLD)!;

/** WF_A in the newest run: some cells are missing. */
const missingNew = (k: number, e: number): boolean => (k % 7 === 3 && e === 4) || (k === 1440 && e === 14) || (k === 2 && e === 0);
const newValue = (k: number, e: number): number | null => (missingNew(k, e) ? null : cellValue(NEW, k, e));

const EXTRA_FARMS: FarmFixture[] = [
  // 6.67 km north of WF_A: nearer than WF_A to points north of 40.53.
  { farmId: 'WF_A2', lat: 40.56, lon: 95.25, name: 'Wind A2' },
  // Registered, never given data.
  { farmId: 'WF_D', lat: 30, lon: 110, name: 'No data' },
];

const bj = (issueMs: number, k: number): string => formatBeijing(issueMs + k * STEP_MS);
const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);

let cleanup: () => Promise<void>;
let app: FastifyInstance;
let store: Awaited<ReturnType<typeof testStore>>['store'];

const get = (url: string, headers: Record<string, string> = {}): Promise<InjectResult> =>
  app.inject({ method: 'GET', url, headers }) as unknown as Promise<InjectResult>;
const F = '/api/v1/forecast';

before(async () => {
  const s = await testStore();
  cleanup = s.cleanup;
  store = s.store;
  await seed(
    store,
    [
      { farmId: 'WF_A', issue: OLD },
      { farmId: 'WF_A', issue: NEW, opts: { value: newValue } },
      // PV_B holds data only in the older run.
      { farmId: 'PV_B', issue: OLD, opts: { steps: range(0, 10) } },
      { farmId: 'WF_A2', issue: NEW, opts: { steps: range(0, 4) } },
      // WF_C: a run with gaps.
      { farmId: 'WF_C', issue: NEW, opts: { steps: [0, 4, 8] } },
    ],
    [...FARMS, ...EXTRA_FARMS],
  );
  app = await testApp(store);
});

after(async () => {
  await app?.close();
  await cleanup?.();
});

/** Checks items against WF_A's newest run at the given steps, with the chosen fields. */
function assertNewItems(items: any[], steps: readonly number[], fields: readonly string[] = ELEMENT_NAMES): void {
  assert.equal(items.length, steps.length);
  items.forEach((item, i) => {
    const k = steps[i]!;
    assert.deepEqual(Object.keys(item), ['date_time', ...fields]);
    assert.equal(item.date_time, bj(NEW_MS, k));
    for (const f of fields) {
      const e = ELEMENT_NAMES.indexOf(f);
      assert.equal(item[f], newValue(k, e), `${f} at step ${k}`);
    }
  });
}

describe('forecast by farm_id', () => {
  test('data has the fields of the contract in order, and items the catalogue fields', async () => {
    const data = okData(await get(`${F}?farm_id=WF_A`));
    assert.deepEqual(Object.keys(data), [
      'farm_id',
      'lat',
      'lon',
      'issue_time_utc',
      'timezone',
      'resolution_minutes',
      'total',
      'page',
      'size',
      'items',
    ]);
    assert.equal(data.farm_id, 'WF_A');
    assert.equal(data.lat, 40.5);
    assert.equal(data.lon, 95.25);
    assert.equal(data.issue_time_utc, '2026-11-20T12:00:00Z');
    assert.match(data.issue_time_utc, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    assert.equal(data.timezone, '+08:00');
    assert.equal(data.resolution_minutes, 15);
    assert.equal(data.total, 1441);
    assert.equal(data.page, 1);
    assert.equal(data.size, 96);
    assert.equal(data.items.length, 96);
    assert.equal(data.items[0].date_time, '2026-11-20T20:00:00+08:00');
    assert.equal(data.items[1].date_time, '2026-11-20T20:15:00+08:00');
    assertNewItems(data.items, range(0, 95));
  });

  test('values are exactly the ingested ones, negatives included, and missing cells are null', async () => {
    const data = okData(await get(`${F}?farm_id=WF_A&size=1441`));
    assert.equal(data.items.length, 1441);
    assertNewItems(data.items, range(0, 1440));
    // Spot checks that do not go through the helper.
    assert.equal(data.items[0].sr, -14001.2);
    assert.equal(data.items[0].t2m, 1.2);
    assert.equal(data.items[2].t2m, null);
    assert.equal(data.items[3].tp, null);
    assert.equal(data.items[1440].sr, null);
    assert.equal(data.items[1440].dr, cellValue(NEW, 1440, 13));
    assert.ok(data.items.some((it: any) => it.sr < 0));
  });

  test('without issue the run is the latest holding data for the site', async () => {
    const a = okData(await get(`${F}?farm_id=WF_A&size=1`));
    assert.equal(a.issue_time_utc, '2026-11-20T12:00:00Z');
    // PV_B has data only in the older run, although a newer run exists.
    const b = okData(await get(`${F}?farm_id=PV_B&size=20`));
    assert.equal(b.issue_time_utc, '2026-11-20T00:00:00Z');
    assert.equal(b.total, 11);
    assert.equal(b.items[0].date_time, '2026-11-20T08:00:00+08:00');
    assert.equal(b.items[10].date_time, bj(OLD_MS, 10));
    assert.equal(b.items[5].t2m, cellValue(OLD, 5, 0));
    assert.equal(b.items[5].sr, cellValue(OLD, 5, 14));
  });

  test('an explicit issue selects that run', async () => {
    const data = okData(await get(`${F}?farm_id=WF_A&issue=${OLD}&size=3`));
    assert.equal(data.issue_time_utc, '2026-11-20T00:00:00Z');
    assert.equal(data.total, 1441);
    assert.equal(data.items[0].date_time, '2026-11-20T08:00:00+08:00');
    assert.equal(data.items[2].date_time, '2026-11-20T08:30:00+08:00');
    assert.equal(data.items[2].t2m, cellValue(OLD, 2, 0));
    assert.notEqual(data.items[2].t2m, null);
    const explicitNew = okData(await get(`${F}?farm_id=WF_A&issue=${NEW}&size=3`));
    assert.equal(explicitNew.issue_time_utc, '2026-11-20T12:00:00Z');
  });

  test('an issue that does not exist, or not for this site, is 404 40401', async () => {
    assertError(await get(`${F}?farm_id=WF_A&issue=2026111900`), 404, 40401, ['2026111900']);
    assertError(await get(`${F}?farm_id=PV_B&issue=${NEW}`), 404, 40401, [NEW]);
  });

  for (const issue of ['2026023000', '2026112024', 'abc', '202611200', '20261120000', '2026-11-20']) {
    test(`malformed issue ${issue} is 400 40001`, async () => {
      assertError(await get(`${F}?farm_id=WF_A&issue=${issue}`), 400, 40001, ['issue']);
    });
  }

  test('an unknown farm_id is 404 40401', async () => {
    assertError(await get(`${F}?farm_id=NOPE`), 404, 40401, ['NOPE']);
  });

  test('a farm_id longer than any site id is quoted cut, the cut marked: never as another site that exists', async () => {
    const long = `WF_A${'x'.repeat(100)}`;
    const message = assertError(await get(`${F}?farm_id=${long}`), 404, 40401);
    assert.ok(message.includes(`"${long.slice(0, 64)}…"`), message);
  });

  test('a registered farm without data is 404 40401', async () => {
    assertError(await get(`${F}?farm_id=WF_D`), 404, 40401, ['WF_D']);
    assertError(await get(`${F}?farm_id=WF_D&issue=${NEW}`), 404, 40401, ['WF_D']);
  });
});

describe('paging', () => {
  test('default window is +0h..+360h: 1441 records in 16 pages of 96, the last with 1', async () => {
    const p1 = okData(await get(`${F}?farm_id=WF_A`));
    assert.equal(p1.total, 1441);
    const p2 = okData(await get(`${F}?farm_id=WF_A&page=2`));
    assert.equal(p2.total, 1441);
    assert.equal(p2.page, 2);
    assertNewItems(p2.items, range(96, 191));
    const p15 = okData(await get(`${F}?farm_id=WF_A&page=15`));
    assertNewItems(p15.items, range(1344, 1439));
    const p16 = okData(await get(`${F}?farm_id=WF_A&page=16`));
    assert.equal(p16.total, 1441);
    assert.equal(p16.items.length, 1);
    assert.equal(p16.items[0].date_time, '2026-12-05T20:00:00+08:00');
    assertNewItems(p16.items, [1440]);
    const p17 = okData(await get(`${F}?farm_id=WF_A&page=17`));
    assert.equal(p17.total, 1441);
    assert.equal(p17.page, 17);
    assert.equal(p17.size, 96);
    assert.deepEqual(p17.items, []);
    const far = okData(await get(`${F}?farm_id=WF_A&page=1000000000`));
    assert.deepEqual(far.items, []);
    assert.equal(far.total, 1441);
  });

  test('size selects the page length, total counts the whole window', async () => {
    const d = okData(await get(`${F}?farm_id=WF_A&size=10&page=3`));
    assert.equal(d.size, 10);
    assert.equal(d.page, 3);
    assert.equal(d.total, 1441);
    assertNewItems(d.items, range(20, 29));
    const one = okData(await get(`${F}?farm_id=WF_A&size=1`));
    assertNewItems(one.items, [0]);
  });

  test('size 1441 returns the whole run in one page', async () => {
    const d = okData(await get(`${F}?farm_id=WF_A&size=1441`));
    assert.equal(d.size, 1441);
    assert.equal(d.items.length, 1441);
  });

  for (const [name, value] of [
    ['page', '0'],
    ['page', '-1'],
    ['page', '1.5'],
    ['page', 'abc'],
    ['page', ''],
    ['page', '0x2'],
    ['size', '0'],
    ['size', '-1'],
    ['size', '1.5'],
    ['size', 'abc'],
    ['size', '1442'],
    ['size', ''],
    ['size', '1e1'],
    ['size', '9'.repeat(400)],
    ['page', '9'.repeat(400)],
  ] as const) {
    test(`${name}=${value.slice(0, 12)} is 400 40001 naming ${name}`, async () => {
      assertError(await get(`${F}?farm_id=WF_A&${name}=${value}`), 400, 40001, [name]);
    });
  }

  test('the largest page is echoed exactly; a larger one is refused as too large, never rounded', async () => {
    const at = await get(`${F}?farm_id=WF_A&page=${MAX_PAGE}`);
    assert.equal(at.statusCode, 200);
    const data = (JSON.parse(at.body) as { data: { page: number; items: unknown[] } }).data;
    assert.equal(data.page, MAX_PAGE);
    assert.deepEqual(data.items, []);
    for (const [page, message] of [
      [String(MAX_PAGE + 1), `Query parameter page must be at most ${MAX_PAGE}.`],
      ['99999999999999999999', `Query parameter page must be at most ${MAX_PAGE}.`],
      ['9'.repeat(400), 'Query parameter page is too large.'],
    ] as const) {
      const res = await get(`${F}?farm_id=WF_A&page=${page}`);
      assertError(res, 400, 40001, ['page']);
      assert.equal((JSON.parse(res.body) as { message: string }).message, message, page.slice(0, 24));
    }
  });

  test('a repeated page, size or coordinate is 400 40001 saying it was given more than once', async () => {
    for (const [name, q] of [
      ['page', 'farm_id=WF_A&page=1&page=2'],
      ['size', 'farm_id=WF_A&size=1&size=2'],
      ['lat', 'lat=40.5&lat=40.5&lon=95.8'],
      ['farm_id', 'farm_id=WF_A&farm_id=WF_A'],
    ] as const) {
      const res = await get(`${F}?${q}`);
      assertError(res, 400, 40001, [name]);
      assert.equal(JSON.parse(res.body).message, `Query parameter ${name} is given more than once; give it once.`);
    }
  });
});

describe('time window', () => {
  const cases: Array<[string, string | undefined, string | undefined, number[]]> = [
    ['Z offset', '2026-11-20T12:15:00Z', '2026-11-20T12:45:00Z', [1, 2, 3]],
    ['+08:00 encoded', '2026-11-20T20:15:00%2B08:00', '2026-11-20T20:45:00%2B08:00', [1, 2, 3]],
    ['+0800 encoded', '2026-11-20T20:15:00%2B0800', '2026-11-20T20:45%2B0800', [1, 2, 3]],
    ['negative offset', '2026-11-20T10:45:00-01:30', '2026-11-20T11:15-0130', [1, 2, 3]],
    ['no offset is Beijing time', '2026-11-20T20:15:00', '2026-11-20T20:45', [1, 2, 3]],
    ['raw + (arrives as a space)', '2026-11-20T20:15:00+08:00', '2026-11-20T20:45:00+08:00', [1, 2, 3]],
    ['raw + with ±HHmm', '2026-11-20T20:15+0800', '2026-11-20T20:45:00+0800', [1, 2, 3]],
    ['space instead of T', '2026-11-20%2020:15:00', '2026-11-20%2020:45:00%2B08:00', [1, 2, 3]],
    ['fractions, inclusive to the grid', '2026-11-20T20:00:00.001', '2026-11-20T20:59:59.999', [1, 2, 3]],
    ['inclusive at both ends', '2026-11-20T20:00:00%2B08:00', '2026-11-20T21:00:00%2B08:00', [0, 1, 2, 3, 4]],
    ['start equal to end on the grid', '2026-11-20T21:00:00', '2026-11-20T21:00:00', [4]],
    ['bare date is 00:00 Beijing time', '2026-11-21', '2026-11-21', [16]],
    ['start only, end defaults to +360h', '2026-12-05T19:30:00%2B08:00', undefined, [1438, 1439, 1440]],
    ['end only, start defaults to +0h', undefined, '2026-11-20T20:30:00%2B08:00', [0, 1, 2]],
    ['window wider than the run', '2026-11-01', '2027-01-01', range(0, 1440)],
  ];
  for (const [label, start, end, steps] of cases) {
    test(`${label}`, async () => {
      const qs = [`farm_id=WF_A`, `size=1441`];
      if (start !== undefined) qs.push(`start=${start}`);
      if (end !== undefined) qs.push(`end=${end}`);
      const d = okData(await get(`${F}?${qs.join('&')}`));
      assert.equal(d.total, steps.length);
      assertNewItems(d.items, steps);
    });
  }

  test('total counts the window, over all pages', async () => {
    const d = okData(await get(`${F}?farm_id=WF_A&start=2026-11-21&size=5&page=2`));
    assert.equal(d.total, 1441 - 16);
    assertNewItems(d.items, range(21, 25));
  });

  test('a window that holds no record is 200 with total 0 and items []', async () => {
    // WF_C has records at +0h, +1h, +2h only.
    const gap = okData(await get(`${F}?farm_id=WF_C&start=2026-11-20T20:15:00&end=2026-11-20T20:45:00`));
    assert.equal(gap.total, 0);
    assert.deepEqual(gap.items, []);
    assert.equal(gap.farm_id, 'WF_C');
    const before = okData(await get(`${F}?farm_id=WF_A&start=2020-01-01&end=2020-01-02`));
    assert.equal(before.total, 0);
    assert.deepEqual(before.items, []);
    const offGrid = okData(await get(`${F}?farm_id=WF_A&start=2026-11-20T20:07:00&end=2026-11-20T20:08:00`));
    assert.equal(offGrid.total, 0);
    assert.deepEqual(offGrid.items, []);
  });

  test('records absent from a run are not there', async () => {
    const d = okData(await get(`${F}?farm_id=WF_C`));
    assert.equal(d.total, 3);
    assert.deepEqual(
      d.items.map((i: any) => i.date_time),
      ['2026-11-20T20:00:00+08:00', '2026-11-20T21:00:00+08:00', '2026-11-20T22:00:00+08:00'],
    );
    assert.equal(d.items[1].spd100, cellValue(NEW, 4, 10));
  });

  test('start later than end is 400 40001', async () => {
    assertError(await get(`${F}?farm_id=WF_A&start=2026-11-20T21:00:00&end=2026-11-20T20:00:00`), 400, 40001, ['start', 'end']);
    assertError(await get(`${F}?farm_id=WF_A&start=2026-11-20T12:00:01Z&end=2026-11-20T20:00:00`), 400, 40001, ['start']);
  });

  const malformed = [
    'abc',
    '2026/11/20',
    '20261120',
    '2026-13-01',
    '2026-02-30',
    '2026-11-20T24:00',
    '2026-11-20T20:60',
    '2026-11-20T20:15:61',
    '2026-11-20T20',
    '2026-11-20T',
    '2026-11-20T20:15:00%2B08',
    '2026-11-20T20:15:00%2B25:00',
    '2026-11-20T20:15:00.1234',
    '2026-11-20T20:15:00%20PST',
    '2026-11-20T20:15:00ZZ',
  ];
  for (const name of ['start', 'end']) {
    for (const v of malformed) {
      test(`malformed ${name}=${v} is 400 40001`, async () => {
        assertError(await get(`${F}?farm_id=WF_A&${name}=${v}`), 400, 40001, [name]);
      });
    }
    test(`empty ${name} is 400 40001`, async () => {
      assertError(await get(`${F}?farm_id=WF_A&${name}=`), 400, 40001, [name]);
    });
  }
});

describe('elements', () => {
  test('one comma-separated value selects fields, items in catalogue order', async () => {
    const d = okData(await get(`${F}?farm_id=WF_A&elements=tr,t2m,spd100&size=5`));
    assertNewItems(d.items, range(0, 4), ['t2m', 'spd100', 'tr']);
  });

  test('the parameter may be repeated', async () => {
    const d = okData(await get(`${F}?farm_id=WF_A&elements=sr&elements=tp,rh2m&size=4`));
    assertNewItems(d.items, range(0, 3), ['rh2m', 'tp', 'sr']);
  });

  test('spaces around names are ignored', async () => {
    const d = okData(await get(`${F}?farm_id=WF_A&elements=%20tr%20,%20t2m&elements=+dir10+&size=2`));
    assertNewItems(d.items, [0, 1], ['t2m', 'dir10', 'tr']);
  });

  test('duplicates collapse', async () => {
    const d = okData(await get(`${F}?farm_id=WF_A&elements=tr,tr,t2m&elements=t2m&size=2`));
    assertNewItems(d.items, [0, 1], ['t2m', 'tr']);
  });

  test('missing cells of a selected field are null', async () => {
    const d = okData(await get(`${F}?farm_id=WF_A&elements=tp&size=4`));
    assert.deepEqual(d.items[3], { date_time: bj(NEW_MS, 3), tp: null });
  });

  test('an unknown name is 400 40001 naming it', async () => {
    assertError(await get(`${F}?farm_id=WF_A&elements=t2m,foo`), 400, 40001, ['elements', 'foo']);
    assertError(await get(`${F}?farm_id=WF_A&elements=t2m&elements=T2M`), 400, 40001, ['elements', 'T2M']);
    assertError(await get(`${F}?farm_id=WF_A&elements=date_time`), 400, 40001, ['elements', 'date_time']);
  });

  for (const qs of ['elements=', 'elements=t2m,,tr', 'elements=t2m,', 'elements=,', 'elements=t2m&elements=', 'elements=%20']) {
    test(`an empty value (${qs}) is 400 40001`, async () => {
      assertError(await get(`${F}?farm_id=WF_A&${qs}`), 400, 40001, ['elements']);
    });
  }
});

describe('naming the site by coordinates', () => {
  test('a point within 5 km of a site gets that site', async () => {
    const d = okData(await get(`${F}?lat=40.51&lon=95.26&size=2`));
    assert.equal(d.farm_id, 'WF_A');
    assert.equal(d.lat, 40.5);
    assert.equal(d.lon, 95.25);
    assert.equal(d.issue_time_utc, '2026-11-20T12:00:00Z');
    assertNewItems(d.items, [0, 1]);
  });

  test('the nearest site within the radius wins', async () => {
    // 4.4 km from WF_A, 2.2 km from WF_A2.
    const d = okData(await get(`${F}?lon=95.25&lat=40.54`));
    assert.equal(d.farm_id, 'WF_A2');
    assert.equal(d.lat, 40.56);
    assert.equal(d.lon, 95.25);
    assert.equal(d.total, 5);
    const e = okData(await get(`${F}?lon=95.25&lat=40.52`));
    assert.equal(e.farm_id, 'WF_A');
  });

  test('a point in range with no site within the radius is 404 40401 saying so', async () => {
    // 5.9 km east of WF_A.
    assertError(await get(`${F}?lat=40.5&lon=95.32`), 404, 40401, [/5 km/]);
    assertError(await get(`${F}?lat=25&lon=120`), 404, 40401, [/site/i]);
  });

  test('the service range box includes its edges', async () => {
    assertError(await get(`${F}?lat=0&lon=70`), 404, 40401);
    assertError(await get(`${F}?lat=60&lon=140`), 404, 40401);
  });

  for (const [lat, lon] of [
    ['40.5', '30'],
    ['-0.001', '100'],
    ['60.001', '100'],
    ['40', '69.999'],
    ['40', '140.001'],
    ['90', '180'],
    ['-90', '-180'],
  ]) {
    test(`a point in bounds but outside the range (lat=${lat}, lon=${lon}) is 422 42201`, async () => {
      assertError(await get(`${F}?lat=${lat}&lon=${lon}`), 422, 42201, [/lat/, /lon/]);
    });
  }

  test('farm_id together with coordinates is 400 40001', async () => {
    assertError(await get(`${F}?farm_id=WF_A&lat=40.5&lon=95.25`), 400, 40001, ['farm_id']);
    assertError(await get(`${F}?farm_id=WF_A&lat=40.5`), 400, 40001, ['farm_id']);
    assertError(await get(`${F}?farm_id=WF_A&lon=95.25`), 400, 40001, ['farm_id']);
  });

  test('one coordinate alone is 400 40001 naming the missing one', async () => {
    assertError(await get(`${F}?lat=40.5`), 400, 40001, ['lon']);
    assertError(await get(`${F}?lon=95.25`), 400, 40001, ['lat']);
  });

  test('neither farm_id nor coordinates is 400 40001', async () => {
    assertError(await get(F), 400, 40001, ['farm_id']);
    assertError(await get(`${F}?issue=${NEW}&elements=t2m`), 400, 40001, ['farm_id']);
  });

  for (const [name, value] of [
    ['lat', '91'],
    ['lat', '-90.5'],
    ['lat', 'abc'],
    ['lat', ''],
    ['lat', 'NaN'],
    ['lat', 'Infinity'],
    ['lat', '0x28'],
    ['lat', '4.05e1'],
    ['lon', '181'],
    ['lon', '-180.01'],
    ['lon', 'abc'],
    ['lon', ''],
    ['lon', '-Infinity'],
    ['lat', '9'.repeat(400)],
    ['lon', '-' + '9'.repeat(400)],
    ['lat', '%2040.5'],
  ] as const) {
    test(`${name}=${value.slice(0, 12)} is 400 40001 naming ${name}`, async () => {
      const q = name === 'lat' ? `lat=${value}&lon=95.25` : `lat=40.5&lon=${value}`;
      assertError(await get(`${F}?${q}`), 400, 40001, [name]);
    });
  }

  test('repeated coordinates are 400 40001', async () => {
    assertError(await get(`${F}?lat=40.5&lat=40.5&lon=95.25`), 400, 40001, ['lat']);
  });

  test('custom rules: range box and match radius', async () => {
    const custom = await testApp(store, { range: { lonMin: 90, latMin: 35, lonMax: 100, latMax: 45 }, matchRadiusKm: 10 });
    try {
      const near = (await custom.inject(`${F}?lat=40.5&lon=95.32`)) as unknown as InjectResult;
      const d = okData(near);
      assert.equal(d.farm_id, 'WF_A');
      const outside = (await custom.inject(`${F}?lat=36.125&lon=101.5`)) as unknown as InjectResult;
      assertError(outside, 422, 42201, [/lat/, /lon/]);
      const far = (await custom.inject(`${F}?lat=42&lon=95.25`)) as unknown as InjectResult;
      assertError(far, 404, 40401, [/10 km/]);
      // farm_id does not go through the range.
      const byId = (await custom.inject(`${F}?farm_id=PV_B`)) as unknown as InjectResult;
      assert.equal(okData(byId).farm_id, 'PV_B');
    } finally {
      await custom.close();
    }
    // The default radius of 5 km does not reach that far.
    assertError(await get(`${F}?lat=40.5&lon=95.32`), 404, 40401);
  });

  test('custom rules: a wider range accepts lon 30', async () => {
    const custom = await testApp(store, { range: { lonMin: -180, latMin: -90, lonMax: 180, latMax: 90 }, matchRadiusKm: 5 });
    try {
      const res = (await custom.inject(`${F}?lat=40.5&lon=30`)) as unknown as InjectResult;
      assertError(res, 404, 40401);
    } finally {
      await custom.close();
    }
  });
});

describe('CSV download', () => {
  function parseCsv(body: string): { header: string[]; rows: string[][] } {
    assert.ok(!body.startsWith('\uFEFF'), 'no BOM');
    assert.ok(!body.includes('\r'), 'LF line ends');
    assert.ok(body.endsWith('\n'));
    const lines = body.slice(0, -1).split('\n');
    return { header: lines[0]!.split(','), rows: lines.slice(1).map((l) => l.split(',')) };
  }

  function assertCsvRows(rows: string[][], steps: readonly number[], fields: readonly string[]): void {
    assert.equal(rows.length, steps.length);
    rows.forEach((cells, i) => {
      const k = steps[i]!;
      assert.equal(cells.length, fields.length + 1);
      assert.equal(cells[0], bj(NEW_MS, k));
      fields.forEach((f, j) => {
        const want = newValue(k, ELEMENT_NAMES.indexOf(f));
        if (want === null) assert.equal(cells[j + 1], '', `${f} at ${k} is empty`);
        else assert.equal(Number(cells[j + 1]), want, `${f} at ${k}`);
      });
    });
  }

  test('format=csv returns the whole window, without paging, all fields', async () => {
    const res = await get(`${F}?farm_id=WF_A&format=csv&size=2&page=3`);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], CSV_CT);
    assert.equal(res.headers['content-disposition'], `attachment; filename="WF_A_${NEW}.csv"`);
    const { header, rows } = parseCsv(res.body);
    assert.deepEqual(header, ['date_time', ...ELEMENT_NAMES]);
    assertCsvRows(rows, range(0, 1440), ELEMENT_NAMES);
    assert.equal(rows[2]![1], '');
    assert.equal(rows[0]![15], '-14001.2');
  });

  test('elements choose the columns, in catalogue order; the window applies', async () => {
    const res = await get(`${F}?farm_id=WF_A&format=csv&elements=tp,sr,t2m&start=2026-11-20T20:15:00&end=2026-11-20T21:00:00`);
    assert.equal(res.statusCode, 200);
    const { header, rows } = parseCsv(res.body);
    assert.deepEqual(header, ['date_time', 't2m', 'tp', 'sr']);
    assertCsvRows(rows, [1, 2, 3, 4], ['t2m', 'tp', 'sr']);
  });

  test('an explicit issue names the file', async () => {
    const res = await get(`${F}?farm_id=PV_B&format=csv`);
    assert.equal(res.headers['content-disposition'], `attachment; filename="PV_B_${OLD}.csv"`);
    assert.equal(parseCsv(res.body).rows.length, 11);
    const byPoint = await get(`${F}?lat=40.54&lon=95.25&format=csv`);
    assert.equal(byPoint.headers['content-disposition'], `attachment; filename="WF_A2_${NEW}.csv"`);
  });

  test('an empty window is a header alone', async () => {
    const res = await get(`${F}?farm_id=WF_C&format=csv&elements=t2m&start=2026-11-20T20:15:00&end=2026-11-20T20:45:00`);
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, 'date_time,t2m\n');
  });

  test('Accept: text/csv without format gives CSV; format wins over Accept', async () => {
    const csv = await get(`${F}?farm_id=WF_A&elements=t2m`, { accept: 'text/csv' });
    assert.equal(csv.headers['content-type'], CSV_CT);
    assert.equal(parseCsv(csv.body).rows.length, 1441);
    const json = await get(`${F}?farm_id=WF_A&elements=t2m&format=json`, { accept: 'text/csv' });
    assert.equal(okData(json).items.length, 96);
    const plain = await get(`${F}?farm_id=WF_A&elements=t2m`, { accept: 'application/json' });
    assert.equal(okData(plain).total, 1441);
  });

  test('format=xml is 400 40001', async () => {
    assertError(await get(`${F}?farm_id=WF_A&format=xml`), 400, 40001, ['format']);
    // The message quotes the value and names the allowed ones; an issue of the wrong form says which form.
    assert.equal(assertError(await get(`${F}?farm_id=WF_A&format=CSV`), 400, 40001), 'Query parameter format "CSV" is not allowed; use json or csv.');
    assert.equal(
      assertError(await get(`${F}?farm_id=WF_A&issue=202611280`), 400, 40001),
      'Query parameter issue "202611280" is not an issue time yyyyMMddHH (10 digits, UTC), such as 2026112000.',
    );
    assertError(await get(`${F}?farm_id=WF_A&format=`), 400, 40001, ['format']);
  });

  test('errors stay JSON envelopes with format=csv or Accept: text/csv', async () => {
    assertError(await get(`${F}?farm_id=NOPE&format=csv`), 404, 40401, ['NOPE']);
    assertError(await get(`${F}?farm_id=WF_A&format=csv&elements=foo`), 400, 40001, ['foo']);
    assertError(await get(`${F}?lat=40.5&lon=30&format=csv`), 422, 42201);
    assertError(await get(`${F}?farm_id=NOPE`, { accept: 'text/csv' }), 404, 40401);
    assertError(await get(`${F}?farm_id=WF_A&page=0`, { accept: 'text/csv' }), 400, 40001, ['page']);
  });
});

describe('other request forms', () => {
  test('parameters the interface does not define are ignored', async () => {
    const plain = await get(`${F}?farm_id=WF_A&size=3`);
    const extra = await get(`${F}?farm_id=WF_A&size=3&foo=bar&api_key=x&foo=baz&version=2&empty=`);
    assert.equal(extra.body, plain.body);
    okData(extra);
  });

  test('HEAD answers like GET without a body', async () => {
    const res = (await app.inject({ method: 'HEAD', url: `${F}?farm_id=WF_A` })) as unknown as InjectResult;
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], JSON_CT);
    assert.equal(res.body, '');
    const csv = (await app.inject({ method: 'HEAD', url: `${F}?farm_id=WF_A&format=csv` })) as unknown as InjectResult;
    assert.equal(csv.statusCode, 200);
    assert.equal(csv.headers['content-type'], CSV_CT);
    const missing = (await app.inject({ method: 'HEAD', url: `${F}?farm_id=NOPE` })) as unknown as InjectResult;
    assert.equal(missing.statusCode, 404);
  });

  test('a trailing slash reaches the same endpoint', async () => {
    const d = okData(await get(`/api/v1/forecast/?farm_id=WF_A&size=1`));
    assert.equal(d.farm_id, 'WF_A');
  });

  test('percent-encoded parameter names and values are decoded', async () => {
    const d = okData(await get(`${F}?farm%5Fid=WF%5FA&elements=t2m%2Ctr&size=1`));
    assert.equal(d.farm_id, 'WF_A');
    assert.deepEqual(Object.keys(d.items[0]), ['date_time', 't2m', 'tr']);
  });
});
