/**
 * Webhooks run in this process over a real store: a run that reaches its
 * deadline with sites missing is told `issue.partial` (at the deadline), then
 * `issue.complete` when the last site arrives; a loopback receiver is refused
 * without allowPrivate; `webhooks retry NAME` (another process) makes a
 * pending notice go at once; stopping abandons an attempt that outlasts the
 * grace without recording it.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { formatBeijing } from '../../src/domain/time.js';
import { startWebhooks } from '../../src/events/webhooks/index.js';
import { newSecret } from '../../src/events/webhooks/signature.js';
import { readRunCsv } from '../../src/ingest/runCsv.js';
import { Metrics } from '../../src/ops/metrics.js';
import type { Store, WebhookSummary } from '../../src/store/store.js';
import { runCli } from '../helpers/cli.js';
import { runCsv, seed, testStore } from '../helpers/fixtures.js';
import { receiver, until, verified, type Receiver } from '../helpers/webhooks.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function setup(): Promise<{ store: Store; url: string; rx: Receiver }> {
  const t = await testStore();
  const rx = await receiver();
  cleanups.push(t.cleanup, () => rx.close());
  await seed(t.store, []);
  return { store: t.store, url: t.url, rx };
}

async function publish(store: Store, farmId: string, issue: string): Promise<number> {
  const run = readRunCsv(`${farmId}_${issue}.csv`, Buffer.from(runCsv(issue, { steps: [0] })));
  return (await store.putRun({ farmId, issue, series: run.series })).publishedAt;
}

async function hook(store: Store, name: string): Promise<WebhookSummary> {
  return (await store.listWebhooks()).find((w) => w.name === name)!;
}

describe('webhooks in one process', () => {
  test('partial at the deadline, complete when the last site arrives: two notices', async () => {
    const { store, rx } = await setup();
    const secret = newSecret();
    await store.addWebhook({ name: 'all', url: `${rx.url}/all`, secret, farms: null }, Date.now());
    const deadlineMs = 700;
    const w = startWebhooks(store, { allowPrivate: true, runDeadlineMs: deadlineMs, shutdownGraceMs: 1000 }, undefined, quiet);
    cleanups.push(() => w.stop());
    const first = await publish(store, 'WF_A', '2026112000');
    assert.ok(await until(() => rx.received.length === 1, 5000), 'partial told');
    const partial = verified(secret, rx.received[0]!);
    assert.deepEqual(partial, {
      type: 'issue.partial',
      issue: '2026112000',
      status: 'partial',
      farms: 1,
      farms_expected: 3,
      timestamp: formatBeijing(first + deadlineMs),
    });
    await publish(store, 'PV_B', '2026112000');
    const last = await publish(store, 'WF_C', '2026112000');
    assert.ok(await until(() => rx.received.length === 2, 5000), 'complete told');
    const complete = verified(secret, rx.received[1]!);
    assert.deepEqual(complete, { type: 'issue.complete', issue: '2026112000', status: 'complete', farms: 3, farms_expected: 3, timestamp: formatBeijing(last) });
    assert.notEqual(rx.received[0]!.headers['webhook-id'], rx.received[1]!.headers['webhook-id']);
  });

  test('a loopback address is refused without allowPrivate: nothing is sent, the attempt says why', async () => {
    const { store, rx } = await setup();
    await store.addWebhook({ name: 'local', url: `${rx.url}/x`, secret: newSecret(), farms: ['WF_A'] }, Date.now());
    const metrics = new Metrics({ servesHttp: false });
    const w = startWebhooks(store, { allowPrivate: false, runDeadlineMs: 3_600_000, shutdownGraceMs: 1000 }, metrics, quiet);
    cleanups.push(() => w.stop());
    await publish(store, 'WF_A', '2026112000');
    assert.ok(await until(async () => (await hook(store, 'local')).lastResult !== null, 5000));
    const h = await hook(store, 'local');
    assert.equal(h.lastResult, 'private address refused: 127.0.0.1 (loopback)');
    assert.equal(h.pending, 1);
    assert.equal(rx.received.length, 0);
    assert.equal(metrics.webhookDeliveries.refused, 1);
  });

  test('webhooks retry NAME sends a pending notice at once (a running deliverer picks it up within about 1 s)', async () => {
    const { store, url, rx } = await setup();
    rx.answer = (n) => ({ status: n === 0 ? 503 : 200 });
    await store.addWebhook({ name: 'desk', url: `${rx.url}/desk`, secret: newSecret(), farms: ['PV_B'] }, Date.now());
    // The default schedule: the next attempt would be 8-10 s after the failure.
    const w = startWebhooks(store, { allowPrivate: true, runDeadlineMs: 3_600_000, shutdownGraceMs: 1000 }, undefined, quiet);
    cleanups.push(() => w.stop());
    await publish(store, 'PV_B', '2026112000');
    assert.ok(await until(async () => (await hook(store, 'desk')).lastResult === '503', 5000));
    const r = await runCli(['webhooks', 'retry', 'desk', '--db', url]);
    assert.equal(r.code, 0, r.stderr);
    // The running deliverer sent it within the command's wait.
    assert.match(r.stderr, /1 pending delivery of webhook "desk" sent by a running server: 1 delivered/);
    assert.equal(rx.received.length, 2, 'sent again');
    assert.equal(rx.received[0]!.headers['webhook-id'], rx.received[1]!.headers['webhook-id']);
    assert.ok(await until(async () => (await hook(store, 'desk')).pending === 0, 2000));
  });

  test('webhooks retry NAME with no server running sends the pending notice itself, at once', async () => {
    const { store, url, rx } = await setup();
    rx.answer = (n) => ({ status: n === 0 ? 503 : 200 });
    await store.addWebhook({ name: 'desk', url: `${rx.url}/desk`, secret: newSecret(), farms: ['PV_B'] }, Date.now());
    const w = startWebhooks(store, { allowPrivate: true, runDeadlineMs: 3_600_000, shutdownGraceMs: 1000 }, undefined, quiet);
    await publish(store, 'PV_B', '2026112000');
    assert.ok(await until(async () => (await hook(store, 'desk')).lastResult === '503', 5000));
    // No deliverer runs any more: only the command can send it before its next time (8-10 s on).
    await w.stop();
    const t0 = performance.now();
    const r = await runCli(['webhooks', 'retry', 'desk', '--webhook-allow-private', '--db', url]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /1 pending delivery of webhook "desk" sent by this command: 1 delivered\n$/);
    assert.ok(performance.now() - t0 < 6000, `${(performance.now() - t0).toFixed(0)} ms`);
    assert.equal(rx.received.length, 2);
    assert.equal(rx.received[0]!.headers['webhook-id'], rx.received[1]!.headers['webhook-id']);
    assert.equal((await hook(store, 'desk')).pending, 0);
  });

  test('stop() abandons an attempt that outlasts the grace, recording nothing (its lease runs out, it goes again)', async () => {
    const { store } = await setup();
    const hang = http.createServer(() => undefined);
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
    cleanups.push(async () => {
      hang.closeAllConnections();
      await new Promise((r) => hang.close(r));
    });
    let requests = 0;
    hang.on('request', () => requests++);
    await store.addWebhook({ name: 'slow', url: `http://127.0.0.1:${(hang.address() as AddressInfo).port}/`, secret: newSecret(), farms: ['WF_C'] }, Date.now());
    const w = startWebhooks(store, { allowPrivate: true, runDeadlineMs: 3_600_000, shutdownGraceMs: 300 }, undefined, quiet);
    await publish(store, 'WF_C', '2026112000');
    assert.ok(await until(() => requests === 1, 5000), 'in flight');
    const t0 = performance.now();
    await w.stop();
    assert.ok(performance.now() - t0 < 1500, `stopped after ${(performance.now() - t0).toFixed(0)} ms`);
    const h = await hook(store, 'slow');
    assert.equal(h.lastResult, null);
    assert.equal(h.pending, 1);
    // Still leased to the stopped deliverer: another one claims it only when the lease ends.
    assert.equal((await store.claimDeliveries(Date.now(), 'other', 1000, 10)).length, 0);
    assert.equal((await store.claimDeliveries(Date.now() + 31_000, 'other', 1000, 10)).length, 1);
  });
});
