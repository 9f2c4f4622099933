/**
 * Pending notices survive serve stopping: a notice that could not be sent
 * (the receiver was down) when serve got SIGTERM, or SIGKILL, is sent by the
 * next serve; a run that became complete while no serve ran is told once one
 * starts (the notifier's mark in the store). Each notice arrives once, with
 * the webhook-id derived from (endpoint, run, type).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { noticeId } from '../../src/events/webhooks/notifier.js';
import { openStore } from '../../src/store/openStore.js';
import type { WebhookSummary } from '../../src/store/store.js';
import { importFarms, runCli, serve, type Served } from '../helpers/cli.js';
import { FARMS, runCsv, testDbUrl } from '../helpers/fixtures.js';
import { receiver, until, verified, type Receiver } from '../helpers/webhooks.js';

const ENV = { FORECASTD_TEST_WEBHOOK_RETRY_SCALE: '0.001' };
let db = '';
let dir = '';
let drop: () => Promise<void>;
let rx: Receiver;
let secret = '';
let server: Served | undefined;

const start = () => serve(['--db', db, '--workers', '1', '--webhook-allow-private'], ENV);

async function desk(): Promise<WebhookSummary> {
  const store = await openStore(db);
  try {
    return (await store.listWebhooks()).find((w) => w.name === 'desk')!;
  } finally {
    await store.close();
  }
}

/** Ingests a complete run (every site) through the command line. */
async function completeRun(issue: string): Promise<void> {
  const paths = FARMS.map((f) => {
    const p = join(dir, `${f.farmId}_${issue}.csv`);
    writeFileSync(p, runCsv(issue, { steps: [0] }));
    return p;
  });
  const r = await runCli(['ingest', ...paths, '--db', db]);
  assert.equal(r.code, 0, r.stderr);
}

async function deliveredOnce(issue: string): Promise<void> {
  const id = noticeId((await desk()).id, issue, 'issue.complete');
  assert.ok(await until(() => rx.byId(id).length > 0, 8000), `notice of ${issue} delivered`);
  assert.equal(rx.byId(id).length, 1);
  assert.equal(verified(secret, rx.byId(id)[0]!).issue, issue);
}

before(async () => {
  ({ url: db, dir, drop } = await testDbUrl());
  rx = await receiver();
  await importFarms(db, dir);
  const r = await runCli(['webhooks', 'add', `${rx.url}/desk`, '--name', 'desk', '--db', db]);
  assert.equal(r.code, 0, r.stderr);
  secret = r.stdout.trim();
});

after(async () => {
  if (server !== undefined) await server.stop();
  await rx?.close();
  await drop?.();
});

test('a notice pending when serve gets SIGTERM (the receiver down) is delivered after the restart', async () => {
  server = await start();
  await rx.down();
  await completeRun('2026112000');
  assert.ok(await until(async () => (await desk()).lastResult === 'connection refused', 8000), 'an attempt failed');
  assert.equal(await server.stop(), 0, server.stderr());
  await rx.up();
  assert.equal((await desk()).pending, 1);
  server = await start();
  await deliveredOnce('2026112000');
});

test('after SIGKILL, the next serve delivers what was pending and tells of a run that became complete meanwhile', async () => {
  assert.ok(server !== undefined);
  await rx.down();
  await completeRun('2026112012');
  assert.ok(await until(async () => (await desk()).lastResult === 'connection refused', 8000), 'an attempt failed');
  const killed = new Promise((r) => server!.child.once('exit', r));
  server.child.kill('SIGKILL');
  await killed;
  server = undefined;
  await rx.up();
  // Complete while no serve runs: no notice exists yet; the next serve follows the log from its mark.
  await completeRun('2026112100');
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(rx.received.length, 1);
  server = await start();
  await deliveredOnce('2026112012');
  await deliveredOnce('2026112100');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(rx.received.length, 3, 'nothing told twice');
  assert.equal((await desk()).pending, 0);
});
