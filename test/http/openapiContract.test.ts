/**
 * The served OpenAPI document as its clients use it: linted with a maintained
 * linter's recommended rules, and every answer of a real listening server
 * checked against it as a validating proxy would (status declared, media type
 * declared, body valid for that media type's schema, headers valid).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { OpenAPIBackend, ValidationContext, type Operation } from 'openapi-backend';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.js';
import { DEFAULT_RULES, seed, testStore } from '../helpers/fixtures.js';
import { bearer, createKey } from '../helpers/keys.js';

let app: FastifyInstance;
let cleanup: () => Promise<void>;
let base = '';
let docText = '';
let key = '';
let tiny = '';

before(async () => {
  const s = await testStore();
  cleanup = s.cleanup;
  await seed(s.store, [
    { farmId: 'WF_A', issue: '2026112000' },
    { farmId: 'PV_B', issue: '2026112012', opts: { steps: [0, 1, 2, 3], value: (k, e) => (e === 4 && k === 2 ? null : k + e / 10) } },
  ]);
  key = await createKey(s.store, 'contract', { rate: 1000, burst: 100000 });
  tiny = await createKey(s.store, 'tiny', { rate: 0.001, burst: 1 });
  app = await buildApp({ store: s.store, rules: DEFAULT_RULES, version: 'test', access: { auth: 'required' } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  assert.ok(addr && typeof addr === 'object');
  base = `http://127.0.0.1:${addr.port}`;
  docText = await (await fetch(`${base}/api/v1/openapi.json`)).text();
  assert.match(docText, /"openapi"/, 'the document is open');
});

after(async () => {
  await app?.close();
  await cleanup?.();
});

/**
 * Linter findings the docs list as accepted (rule id and where), with why: none
 * today. A finding of severity error is never accepted.
 */
const ACCEPTED_WARNINGS: ReadonlyArray<string> = [];

describe('the OpenAPI document under a maintained linter', () => {
  test('the recommended rules find no error and no warning that is not listed', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: docText, absoluteRef: 'openapi.json', config });
    const found = problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`);
    assert.deepEqual(
      problems.filter((p) => p.severity === 'error').map((p) => p.ruleId),
      [],
      found.join('\n'),
    );
    const warnings = problems.filter((p) => p.severity !== 'error').map((p) => `${p.ruleId} ${p.location[0]?.pointer ?? ''}`);
    assert.deepEqual(warnings.filter((w) => !ACCEPTED_WARNINGS.includes(w)), [], found.join('\n'));
  });

  test('names a server and gives every operation a summary and an operationId', () => {
    const doc = JSON.parse(docText);
    assert.ok(Array.isArray(doc.servers) && doc.servers.length > 0 && typeof doc.servers[0].url === 'string');
    const ops = Object.values(doc.paths as Record<string, Record<string, any>>).flatMap((p) => Object.values(p));
    assert.ok(ops.length >= 4);
    for (const op of ops) {
      assert.ok(typeof op.summary === 'string' && op.summary.length > 0, JSON.stringify(op).slice(0, 120));
      assert.ok(typeof op.operationId === 'string' && op.operationId.length > 0);
    }
  });

  test('declares both key schemes, applies them to every operation but the open catalogue, with 401, 429 and 503', () => {
    const doc = JSON.parse(docText);
    assert.deepEqual(doc.components.securitySchemes.bearerAuth, {
      type: 'http',
      scheme: 'bearer',
      description: doc.components.securitySchemes.bearerAuth.description,
    });
    assert.equal(doc.components.securitySchemes.apiKeyHeader.in, 'header');
    assert.equal(doc.components.securitySchemes.apiKeyHeader.name, 'X-API-Key');
    assert.deepEqual(doc.security, [{ bearerAuth: [] }, { apiKeyHeader: [] }]);
    for (const [path, item] of Object.entries(doc.paths as Record<string, { get: any }>)) {
      const op = item.get;
      if (path === '/api/v1/elements') {
        assert.deepEqual(op.security, [], 'the catalogue is open');
        continue;
      }
      assert.equal(op.security, undefined, `${path} takes the document's security`);
      for (const status of ['401', '429', '503']) assert.ok(op.responses[status], `${path} declares ${status}`);
      assert.ok(op.responses['401'].headers['WWW-Authenticate']);
      assert.ok(op.responses['429'].headers['Retry-After'] && op.responses['429'].headers.RateLimit);
      assert.ok(op.responses['200'].headers.RateLimit && op.responses['200'].headers['RateLimit-Policy']);
    }
  });

  test('declares X-Request-Id on every answer of every operation', () => {
    const doc = JSON.parse(docText);
    for (const [path, item] of Object.entries(doc.paths as Record<string, { get: any }>)) {
      for (const [status, response] of Object.entries(item.get.responses as Record<string, any>)) {
        assert.ok(response.headers?.['X-Request-Id'], `${path} ${status} declares X-Request-Id`);
      }
    }
  });

  test('states the versioning policy in its description', () => {
    const description = String(JSON.parse(docText).info.description);
    assert.match(description, /\/api\/v2/);
    assert.match(description, /additive/);
    assert.match(description, /Deprecation/);
    assert.match(description, /Sunset/);
    assert.match(description, /12 months/);
  });
});

interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

/** What a validating proxy finds wrong with one answer to a GET of `url`, given a document. */
async function violations(docJson: string, url: string, answer: Answer): Promise<string[]> {
  const api = new OpenAPIBackend({ definition: JSON.parse(docJson), quick: true });
  await api.init();
  const u = new URL(url, base);
  const op = api.matchOperation({ method: 'get', path: u.pathname, query: Object.fromEntries(u.searchParams), headers: {} }) as
    | Operation
    | undefined;
  if (!op) return [`no operation for ${u.pathname}`];
  const declared = (op.responses ?? {}) as Record<string, any>;
  const response = declared[String(answer.status)] ?? declared.default;
  if (!response) return [`status ${answer.status} is not declared`];
  const problems: string[] = [];
  const headers = Object.fromEntries(answer.headers.entries());
  const h = api.validator.validateResponseHeaders(headers, op, { statusCode: answer.status });
  if (!h.valid) problems.push(`headers: ${JSON.stringify(h.errors)}`);
  const contentType = answer.headers.get('content-type');
  if (answer.status === 304 || answer.body === '') {
    if (response.content && Object.keys(response.content).length > 0 && answer.body !== '') problems.push('an empty body where content is declared');
    return problems;
  }
  const mediaType = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const media = response.content?.[mediaType];
  if (!media) return [...problems, `media type ${mediaType} is not declared for ${answer.status}`];
  if (mediaType === 'application/json') {
    const r = api.validator.validateResponse(JSON.parse(answer.body), op, answer.status);
    if (!r.valid) problems.push(`body: ${JSON.stringify(r.errors).slice(0, 500)}`);
  } else {
    const validate = api.validator.getAjv(ValidationContext.Response).compile(media.schema);
    if (!validate(answer.body)) problems.push(`body: ${JSON.stringify(validate.errors).slice(0, 500)}`);
  }
  if (!answer.headers.has('x-request-id')) problems.push('declared header X-Request-Id is missing');
  // Every header the document declares for this answer's kind is there: all of them for a CSV download and a bulk one.
  if (mediaType === 'text/csv' || mediaType === 'application/zip') {
    for (const name of Object.keys(response.headers ?? {})) {
      if (!answer.headers.has(name)) problems.push(`declared header ${name} is missing`);
    }
  }
  return problems;
}

/** A customer's request: with its key unless it sends its own Authorization. */
async function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${base}${url}`, { headers: { ...bearer(key), ...headers } });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

describe('every answer validates against the document', () => {
  const cases: ReadonlyArray<[string, Record<string, string>]> = [
    ['/api/v1/forecast?farm_id=WF_A&size=3', {}],
    ['/api/v1/forecast?farm_id=PV_B&elements=tp,t2m', {}],
    ['/api/v1/forecast?farm_id=WF_A&issue=2026112000&format=csv', {}],
    ['/api/v1/forecast?farm_id=PV_B&format=csv&elements=tp', {}],
    ['/api/v1/forecast?farm_id=PV_B', { accept: 'text/csv' }],
    ['/api/v1/forecast?farm_id=WF_A&format=csv', { 'accept-encoding': 'gzip' }],
    ['/api/v1/forecast?farm_id=NOPE', {}],
    ['/api/v1/forecast?farm_id=WF_A&size=0', {}],
    ['/api/v1/forecast?lon=10&lat=10', {}],
    ['/api/v1/forecast?farm_id=WF_A&format=csv&issue=2026010100', {}],
    ['/api/v1/forecast/archive?issue=2026112000', {}],
    ['/api/v1/farms', {}],
    ['/api/v1/farms?size=0', {}],
    ['/api/v1/forecast/issues', {}],
    ['/api/v1/forecast/issues?farm_id=NOPE', {}],
    ['/api/v1/elements', {}],
    ['/api/v1/elements', { authorization: '' }],
    ['/api/v1/farms', { authorization: 'Bearer fcd_wrong' }],
    ['/api/v1/forecast?farm_id=WF_A', { authorization: '' }],
  ];
  for (const [url, headers] of cases) {
    test(`GET ${url}${Object.keys(headers).length ? ' ' + JSON.stringify(headers) : ''}`, async () => {
      const answer = await get(url, headers);
      assert.deepEqual(await violations(docText, url, answer), []);
    });
  }

  test('a 429 validates too', async () => {
    const url = '/api/v1/forecast?farm_id=WF_A&size=1';
    assert.equal((await get(url, bearer(tiny))).status, 200);
    const refused = await get(url, bearer(tiny));
    assert.equal(refused.status, 429);
    assert.deepEqual(await violations(docText, url, refused), []);
  });

  test('a 304 to a CSV download validates too', async () => {
    const url = '/api/v1/forecast?farm_id=WF_A&issue=2026112000&format=csv';
    const first = await get(url);
    const again = await get(url, { 'if-none-match': first.headers.get('etag')! });
    assert.equal(again.status, 304);
    assert.deepEqual(await violations(docText, url, again), []);
  });

  test('the CSV answer is found wrong against a document that does not declare it (the check can fail)', async () => {
    const url = '/api/v1/forecast?farm_id=WF_A&issue=2026112000&format=csv';
    const answer = await get(url);
    const doc = JSON.parse(docText);
    delete doc.paths['/api/v1/forecast'].get.responses['200'].content['text/csv'];
    assert.match((await violations(JSON.stringify(doc), url, answer)).join(), /media type text\/csv is not declared/);
    const noDisposition = JSON.parse(docText);
    noDisposition.paths['/api/v1/forecast'].get.responses['200'].content['text/csv'].schema.pattern = '^nope';
    assert.match((await violations(JSON.stringify(noDisposition), url, answer)).join(), /body/);
  });
});
