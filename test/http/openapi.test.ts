/** The OpenAPI document and the docs page. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifyInstance } from 'fastify';
import { ELEMENT_NAMES } from '../../src/domain/elements.js';
import { CODES } from '../../src/domain/errors.js';
import { FarmsQuery, ForecastQuery, IssuesQuery } from '../../src/http/schemas.js';
import { testStore, testApp } from '../helpers/fixtures.js';
import { JSON_CT, type InjectResult } from './support.js';

let app: FastifyInstance;
let cleanup: () => Promise<void>;
let doc: any;
let docText: string;

const get = (url: string): Promise<InjectResult> => app.inject(url) as unknown as Promise<InjectResult>;

before(async () => {
  const s = await testStore();
  cleanup = s.cleanup;
  app = await testApp(s.store);
  const res = await get('/api/v1/openapi.json');
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], JSON_CT);
  docText = res.body;
  doc = JSON.parse(docText);
});

after(async () => {
  await app?.close();
  await cleanup?.();
});

describe('GET /api/v1/openapi.json', () => {
  test('is a valid OpenAPI 3.1 document', async () => {
    assert.match(String(doc.openapi), /^3\.1\.\d+$/);
    const validator = new Validator();
    const result = await validator.validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1)?.slice(0, 2000));
    assert.equal(validator.version, '3.1');
  });

  const routes: Array<[string, { properties: Record<string, unknown> }]> = [
    ['/api/v1/forecast', ForecastQuery],
    ['/api/v1/farms', FarmsQuery],
    ['/api/v1/forecast/issues', IssuesQuery],
  ];
  for (const [path, schema] of routes) {
    test(`${path} lists every query parameter the route accepts`, () => {
      const op = doc.paths?.[path]?.get;
      assert.ok(op, `${path} GET is documented`);
      const params = (op.parameters ?? []).filter((p: any) => p.in === 'query');
      assert.deepEqual(
        params.map((p: any) => p.name).sort(),
        Object.keys(schema.properties).sort(),
      );
      for (const p of params) {
        assert.equal(p.required ?? false, false, `${p.name} is optional`);
        assert.ok(typeof p.description === 'string' && p.description.length > 0, `${p.name} is described`);
      }
    });
  }

  test('forecast documents the statuses 200, 400, 404 and 422, and the CSV download', () => {
    const responses = doc.paths['/api/v1/forecast'].get.responses;
    for (const s of ['200', '400', '404', '422']) assert.ok(responses[s], `status ${s}`);
    assert.ok(responses['200'].content['application/json']);
    assert.ok(responses['200'].content['text/csv'], 'text/csv response');
  });

  test('the documented limits are those of the contract', () => {
    const params = Object.fromEntries(doc.paths['/api/v1/forecast'].get.parameters.map((p: any) => [p.name, p.schema]));
    assert.equal(params.size.maximum, 1441);
    assert.equal(params.size.minimum, 1);
    assert.equal(params.size.default, 96);
    assert.equal(params.page.minimum, 1);
    assert.equal(params.lat.minimum, -90);
    assert.equal(params.lat.maximum, 90);
    assert.equal(params.lon.minimum, -180);
    assert.equal(params.lon.maximum, 180);
    const farms = Object.fromEntries(doc.paths['/api/v1/farms'].get.parameters.map((p: any) => [p.name, p.schema]));
    assert.equal(farms.size.maximum, 10000);
    assert.equal(farms.size.default, 1000);
    const issues = Object.fromEntries(doc.paths['/api/v1/forecast/issues'].get.parameters.map((p: any) => [p.name, p.schema]));
    assert.equal(issues.size.maximum, 1000);
    assert.equal(issues.size.default, 100);
  });

  test('every error code appears in the document', () => {
    for (const def of Object.values(CODES)) {
      assert.ok(docText.includes(String(def.code)), `code ${def.code}`);
    }
  });

  test('every element name appears, and forecast items list them in catalogue order', () => {
    for (const name of ELEMENT_NAMES) assert.ok(docText.includes(name), name);
    const data = doc.paths['/api/v1/forecast'].get.responses['200'].content['application/json'].schema.properties.data;
    assert.deepEqual(Object.keys(data.properties.items.items.properties), ['date_time', ...ELEMENT_NAMES]);
  });

  test('the elements catalogue endpoint is documented', () => {
    assert.ok(doc.paths['/api/v1/elements']?.get);
  });
});

describe('GET /docs/', () => {
  test('serves an HTML page whose scripts and styles come from this server', async () => {
    const res = await get('/docs/');
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    const html = res.body;
    assert.match(html, /<html/i);
    assert.doesNotMatch(html, /(?:src|href)\s*=\s*["']?(?:https?:)?\/\//i, 'no external URL in src/href');
    const scripts = [...html.matchAll(/<script[^>]*\ssrc\s*=\s*["']([^"']+)["']/gi)].map((m) => m[1]!);
    assert.ok(scripts.length > 0, 'the page loads scripts');
    const links = [...html.matchAll(/<link[^>]*\shref\s*=\s*["']([^"']+)["']/gi)].map((m) => m[1]!);
    for (const src of [...scripts, ...links]) {
      const url = new URL(src, 'http://localhost/docs/');
      assert.equal(url.host, 'localhost', `${src} is served locally`);
      const asset = await get(url.pathname);
      assert.equal(asset.statusCode, 200, `${url.pathname} loads`);
      if (scripts.includes(src)) assert.match(String(asset.headers['content-type']), /javascript/);
    }
  });

  test('the page points at this document, and the CSP allows only this server for scripts', async () => {
    const res = await get('/docs/');
    const csp = String(res.headers['content-security-policy'] ?? '');
    if (csp) assert.match(csp, /script-src 'self'(?:;|$| 'unsafe)/);
    const init = await get('/docs/static/swagger-initializer.js');
    assert.equal(init.statusCode, 200);
    assert.doesNotMatch(init.body, /url:\s*["']https?:/);
    const json = await get('/docs/json');
    assert.equal(json.statusCode, 200);
    assert.deepEqual(Object.keys(JSON.parse(json.body).paths).sort(), Object.keys(doc.paths).sort());
  });

  test('/docs without the slash redirects to /docs/, where the relative asset links resolve', async () => {
    const res = await get('/docs');
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, '/docs/');
  });
});
