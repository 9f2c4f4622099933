/**
 * PostgreSQL cut off during requests: answers are 503 / 50300 within 2 s (no
 * hang, no 500), /readyz says not ready, and the service recovers by itself.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.js';
import { openStore } from '../../src/store/openStore.js';
import type { Store } from '../../src/store/store.js';
import { DEFAULT_RULES, seed } from '../helpers/fixtures.js';
import { adminQuery, freshPgDatabase, pgTestOptions } from '../helpers/pg.js';

const options = await pgTestOptions();
let db: Awaited<ReturnType<typeof freshPgDatabase>>;
let store: Store;
let app: FastifyInstance;
let base: string;

async function cutOff(open: boolean): Promise<void> {
  await adminQuery(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS ${open}`);
  if (!open) {
    await adminQuery('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [db.name]);
  }
}

/** Over a real socket, as clients call: forecast requests meet the direct path first. */
async function timed(url: string): Promise<{ status: number; code: number; ms: number; retryAfter: string | null }> {
  const t0 = performance.now();
  const res = await fetch(base + url);
  const body = (await res.json()) as { code: number };
  return { status: res.status, code: body.code, ms: performance.now() - t0, retryAfter: res.headers.get('retry-after') };
}

before(async () => {
  if (options.skip) return;
  db = await freshPgDatabase();
  store = await openStore(db.url, { connectTimeoutMs: 1000, statementTimeoutMs: 2000 });
  await seed(store, [{ farmId: 'WF_A', issue: '2026112000' }]);
  app = await buildApp({ store, rules: DEFAULT_RULES, version: 'test' });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => {
  if (options.skip) return;
  await app.close();
  await store.close();
  await cutOff(true).catch(() => undefined);
  await db.drop();
});

test('requests during an outage get 503 / 50300 within 2 s, and the service recovers by itself', options, async () => {
  assert.equal((await timed('/api/v1/forecast?farm_id=WF_A')).status, 200);
  assert.equal((await timed('/readyz')).status, 200);
  await cutOff(false);
  try {
    // The listener hears its connection die; give the notice a moment to arrive.
    await sleep(300);
    const urls = ['/api/v1/forecast?farm_id=WF_A&page=2', '/api/v1/farms', '/api/v1/forecast/issues', '/readyz', '/api/v1/forecast?farm_id=WF_A'];
    // The direct path answers the outage itself, with the framework's envelope.
    const direct = await fetch(base + '/api/v1/forecast?farm_id=WF_A&size=5');
    const framework = await app.inject('/api/v1/forecast?farm_id=WF_A&size=5');
    assert.equal(direct.status, framework.statusCode);
    assert.equal(await direct.text(), framework.body);
    for (const h of ['content-type', 'content-length', 'retry-after']) assert.equal(direct.headers.get(h), framework.headers[h], h);
    for (let round = 0; round < 2; round++) {
      for (const url of urls) {
        const r = await timed(url);
        assert.equal(r.status, 503, `${url}: ${r.status}`);
        assert.equal(r.code, 50300, url);
        if (url !== '/readyz') assert.equal(r.retryAfter, '1', url);
        assert.ok(r.ms < 2000, `${url} took ${r.ms.toFixed(0)} ms`);
      }
    }
  } finally {
    await cutOff(true);
  }
  const deadline = Date.now() + 10_000;
  let last = 0;
  while (Date.now() < deadline) {
    last = (await timed('/api/v1/forecast?farm_id=WF_A&page=3')).status;
    if (last === 200) break;
    await sleep(200);
  }
  assert.equal(last, 200, 'recovered without a restart');
  assert.equal((await timed('/readyz')).status, 200);
  assert.equal((await timed('/api/v1/farms')).status, 200);
});
