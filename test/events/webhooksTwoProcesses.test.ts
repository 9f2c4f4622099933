/**
 * Two serve instances on one store (one of them a cluster of two workers,
 * whose primary runs the webhooks): each notice is sent once, counted per
 * webhook-id at the receiver; a notice that fails once is sent exactly twice.
 * The attempts are counted once in the instances' /metrics together. Runs on
 * the adapter under test (test/postgres/ runs it on PostgreSQL).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { importFarms, runCli, serve, type Served } from '../helpers/cli.js';
import { FARMS, runCsv, testDbUrl } from '../helpers/fixtures.js';
import { receiver, until, verified, type Receiver } from '../helpers/webhooks.js';
import { parsePromText, valueOf } from '../ops/promText.js';

const ENV = { FORECASTD_TEST_WEBHOOK_RETRY_SCALE: '0.02' };
let db = '';
let dir = '';
let drop: () => Promise<void>;
let rx: Receiver;
const secrets = new Map<string, string>();
let servers: Served[] = [];

before(async () => {
  ({ url: db, dir, drop } = await testDbUrl());
  rx = await receiver();
  // /b fails the first attempt of each notice.
  rx.answer = (_n, path, headers) =>
    path === '/b' && rx.byId(String(headers['webhook-id'])).length === 0 ? { status: 500 } : { status: 200 };
  await importFarms(db, dir);
  for (const name of ['a', 'b']) {
    const r = await runCli(['webhooks', 'add', `${rx.url}/${name}`, '--name', name, '--db', db]);
    assert.equal(r.code, 0, r.stderr);
    secrets.set(`/${name}`, r.stdout.trim());
  }
  servers = await Promise.all([
    serve(['--db', db, '--workers', '1', '--webhook-allow-private'], ENV),
    serve(['--db', db, '--workers', '2', '--webhook-allow-private'], ENV),
  ]);
});

after(async () => {
  for (const s of servers) assert.equal(await s.stop(), 0, s.stderr());
  await rx?.close();
  await drop?.();
});

test('two serve instances on one store send each notice once', async () => {
  const issues = ['2026112000', '2026112012', '2026112100'];
  for (const issue of issues) {
    const paths = FARMS.map((f) => {
      const p = join(dir, `${f.farmId}_${issue}.csv`);
      writeFileSync(p, runCsv(issue, { steps: [0] }));
      return p;
    });
    assert.equal((await runCli(['ingest', ...paths, '--db', db])).code, 0);
  }
  const ok = (path: string) => rx.received.filter((x) => x.path === path && x.status === 200);
  assert.ok(await until(() => ok('/a').length === 3 && ok('/b').length === 3, 8000), `a: ${ok('/a').length}, b: ${ok('/b').length}`);
  // Time for a second sender, if there were one.
  await new Promise((r) => setTimeout(r, 1500));
  const ids = (path: string) => {
    const counts = new Map<string, number>();
    for (const x of rx.received.filter((y) => y.path === path)) counts.set(String(x.headers['webhook-id']), (counts.get(String(x.headers['webhook-id'])) ?? 0) + 1);
    return counts;
  };
  assert.deepEqual([...ids('/a').values()], [1, 1, 1], 'each notice once');
  assert.deepEqual([...ids('/b').values()], [2, 2, 2], 'each notice: one failure, one success');
  assert.deepEqual(ok('/a').map((x) => verified(secrets.get('/a')!, x).issue).sort(), issues);
  assert.deepEqual(ok('/b').map((x) => verified(secrets.get('/b')!, x).issue).sort(), issues);

  // Every attempt is counted once, by the process that made it (the cluster's primary's counts are in its scrapes).
  const total = { delivered: 0, retry: 0 };
  for (const s of servers) {
    const f = parsePromText(await (await fetch(`${s.base}/metrics`)).text());
    total.delivered += valueOf(f, 'forecastd_webhook_deliveries_total', { result: 'delivered' });
    total.retry += valueOf(f, 'forecastd_webhook_deliveries_total', { result: 'retry' });
  }
  assert.deepEqual(total, { delivered: 6, retry: 3 });
});
