/**
 * GET /api/v1/events in the OpenAPI document: a text/event-stream answer, its
 * parameters (last_event_id and the Last-Event-ID header), and the refusals a
 * stream may get (400, 401, 429, 503); the route is guarded like the others,
 * and HEAD answers the stream's head without holding the connection.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Store } from '../../src/store/store.js';
import { testStore } from '../helpers/fixtures.js';
import { bearer, createKey } from '../helpers/keys.js';
import { listen } from './support.js';

let store: Store;
let cleanup: () => Promise<void>;
let app: FastifyInstance;
let base = '';
let key = '';

before(async () => {
  ({ store, cleanup } = await testStore());
  key = await createKey(store, 'docs');
  ({ app, base } = await listen(store, { access: { auth: 'required' } }));
});

after(async () => {
  await app?.close();
  await cleanup?.();
});

test('the document declares the stream, its parameters and its refusals', async () => {
  const doc = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as any;
  const op = doc.paths['/api/v1/events']?.get;
  assert.ok(op, 'GET /api/v1/events is documented');
  assert.equal(op.operationId, 'streamEvents');
  assert.equal(op.security, undefined, 'it takes the document\'s key schemes');
  const params = Object.fromEntries(op.parameters.map((p: any) => [`${p.in}:${p.name.toLowerCase()}`, p]));
  assert.ok(params['query:last_event_id'], 'last_event_id');
  assert.ok(params['header:last-event-id'], 'Last-Event-ID');
  assert.ok(op.responses['200'].content['text/event-stream'], 'a text/event-stream answer');
  for (const status of ['200', '400', '401', '429', '503']) {
    assert.ok(op.responses[status], `declares ${status}`);
    assert.ok(op.responses[status].headers['X-Request-Id'], `${status} declares X-Request-Id`);
  }
  for (const h of ['Cache-Control', 'X-Accel-Buffering', 'RateLimit', 'RateLimit-Policy']) assert.ok(op.responses['200'].headers[h], h);
  assert.ok(op.responses['429'].headers['Retry-After'] && op.responses['503'].headers['Retry-After']);
});

test('the stream is guarded like every API route; HEAD answers its head and ends', async () => {
  const none = await fetch(`${base}/api/v1/events`);
  assert.equal(none.status, 401);
  assert.equal(((await none.json()) as { code: number }).code, 40101);
  const head = await fetch(`${base}/api/v1/events`, { method: 'HEAD', headers: bearer(key) });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  assert.equal(head.headers.get('cache-control'), 'no-cache');
  const post = await fetch(`${base}/api/v1/events`, { method: 'POST', headers: bearer(key) });
  assert.equal(post.status, 405);
});
