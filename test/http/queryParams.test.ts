/** Query parameter checks made before validation: empty values, plain decimals, unknown names. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { seed, testApp, testStore } from '../helpers/fixtures.js';

let app: FastifyInstance;
let cleanup: () => Promise<void>;

before(async () => {
  const s = await testStore();
  cleanup = s.cleanup;
  await seed(s.store, [{ farmId: 'WF_A', issue: '2026112000' }]);
  app = await testApp(s.store);
});
after(async () => {
  await app.close();
  await cleanup();
});

test('names the interface does not define are ignored, even those of Object.prototype', async () => {
  for (const extra of ['constructor=', 'toString=x', '__proto__=1', 'hasOwnProperty=', 'foo=']) {
    const r = await app.inject(`/api/v1/forecast?farm_id=WF_A&size=1&${extra}`);
    assert.equal(r.statusCode, 200, extra);
  }
});

test('an empty or non-plain value of a defined parameter is 400 naming it, on every route', async () => {
  for (const [url, name] of [
    ['/api/v1/forecast?farm_id=WF_A&size=', 'size'],
    ['/api/v1/forecast?lat=0x10&lon=95', 'lat'],
    ['/api/v1/farms?page=1e1', 'page'],
    ['/api/v1/forecast/issues?size=%20', 'size'],
  ] as const) {
    const r = await app.inject(url);
    assert.equal(r.statusCode, 400, url);
    const body = JSON.parse(r.body) as { code: number; message: string };
    assert.equal(body.code, 40001);
    assert.match(body.message, new RegExp(`\\b${name}\\b`));
  }
});
