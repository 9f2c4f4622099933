/** GET /api/v1/elements: the element catalogue. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { ELEMENTS } from '../../src/domain/elements.js';
import { testStore, testApp } from '../helpers/fixtures.js';
import { okData, type InjectResult } from './support.js';

let app: FastifyInstance;
let cleanup: () => Promise<void>;

before(async () => {
  const s = await testStore();
  cleanup = s.cleanup;
  app = await testApp(s.store);
});

after(async () => {
  await app?.close();
  await cleanup?.();
});

test('GET /api/v1/elements returns the fifteen fields in catalogue order', async () => {
  const data = okData((await app.inject('/api/v1/elements')) as unknown as InjectResult);
  assert.deepEqual(Object.keys(data), ['total', 'items']);
  assert.equal(data.total, 15);
  assert.equal(data.items.length, 15);
  for (const item of data.items) assert.deepEqual(Object.keys(item), ['name', 'description', 'unit', 'kind']);
  assert.deepEqual(
    data.items,
    ELEMENTS.map((e) => ({ name: e.name, description: e.description, unit: e.unit, kind: e.kind })),
  );
});

test('the catalogue is the one of the contract (names, units, kinds)', async () => {
  const data = okData((await app.inject('/api/v1/elements')) as unknown as InjectResult);
  assert.deepEqual(
    data.items.map((e: any) => [e.name, e.unit, e.kind]),
    [
      ['t2m', 'K', 'instant'],
      ['rh2m', '%', 'instant'],
      ['psfc', 'Pa', 'instant'],
      ['tcc', '%', 'instant'],
      ['tp', 'kg m-2 (= mm)', 'accumulated'],
      ['spd10', 'm s-1', 'instant'],
      ['dir10', 'degree', 'instant'],
      ['spd30', 'm s-1', 'instant'],
      ['spd50', 'm s-1', 'instant'],
      ['spd70', 'm s-1', 'instant'],
      ['spd100', 'm s-1', 'instant'],
      ['dir100', 'degree', 'instant'],
      ['tr', 'J m-2', 'accumulated'],
      ['dr', 'J m-2', 'accumulated'],
      ['sr', 'J m-2', 'accumulated'],
    ],
  );
  for (const e of data.items) assert.ok(e.description.length > 0);
});

test('HEAD and a trailing slash work; other methods are 405', async () => {
  const head = (await app.inject({ method: 'HEAD', url: '/api/v1/elements' })) as unknown as InjectResult;
  assert.equal(head.statusCode, 200);
  assert.equal(head.body, '');
  okData((await app.inject('/api/v1/elements/')) as unknown as InjectResult);
  const post = (await app.inject({ method: 'POST', url: '/api/v1/elements' })) as unknown as InjectResult;
  assert.equal(post.statusCode, 405);
  assert.equal(JSON.parse(post.body).code, 40500);
});
