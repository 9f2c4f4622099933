/**
 * Webhooks from a real serve process (SQLite file, runs ingested through the
 * command line, a real receiver on 127.0.0.1, so --webhook-allow-private): a
 * signed notice when a run becomes complete for an endpoint's sites, none for
 * a rejected file; a failing receiver gets the same webhook-id again until it
 * answers 2xx; a redirect is not followed; 410 disables the endpoint; the
 * attempts are counted in /metrics. The retry schedule is shortened for the
 * test (FORECASTD_TEST_WEBHOOK_RETRY_SCALE); its default is checked in
 * webhooksUnit.test.ts.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { noticeId } from '../../src/events/webhooks/notifier.js';
import { openStore } from '../../src/store/openStore.js';
import type { WebhookSummary } from '../../src/store/store.js';
import { importFarms, runCli, serve, type Served } from '../helpers/cli.js';
import { runCsv, testDbUrl } from '../helpers/fixtures.js';
import { receiver, until, verified, type Receiver } from '../helpers/webhooks.js';
import { parsePromText, valueOf } from '../ops/promText.js';

const SCALE = 0.02;
let db = '';
let dir = '';
let drop: () => Promise<void>;
let rx: Receiver;
let server: Served;
const secrets = new Map<string, string>();

async function addHook(name: string, path: string, more: string[] = []): Promise<void> {
  const r = await runCli(['webhooks', 'add', `${rx.url}${path}`, '--name', name, ...more, '--db', db]);
  assert.equal(r.code, 0, r.stderr);
  secrets.set(path, r.stdout.trim());
}

async function ingest(files: Record<string, string>): Promise<number | null> {
  const paths = Object.entries(files).map(([name, text]) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  });
  return (await runCli(['ingest', ...paths, '--db', db])).code;
}

async function listed(): Promise<Map<string, WebhookSummary>> {
  const store = await openStore(db);
  try {
    return new Map((await store.listWebhooks()).map((w) => [w.name, w]));
  } finally {
    await store.close();
  }
}

const at = (path: string) => rx.received.filter((x) => x.path === path);
const BEIJING = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+08:00$/;

before(async () => {
  ({ url: db, dir, drop } = await testDbUrl());
  rx = await receiver();
  rx.answer = (n, path) => {
    if (path === '/flaky') return { status: n < 2 ? 500 : 200 };
    if (path === '/moved') return { status: 302, headers: { location: `${rx.url}/elsewhere` } };
    if (path === '/gone') return { status: 410 };
    return { status: 204 };
  };
  await importFarms(db, dir);
  await addHook('all', '/all');
  await addHook('scoped', '/scoped', ['--farms', 'WF_A']);
  await addHook('flaky', '/flaky');
  await addHook('moved', '/moved');
  await addHook('gone', '/gone');
  server = await serve(['--db', db, '--workers', '1', '--webhook-allow-private', '--log-level', 'info'], { FORECASTD_TEST_WEBHOOK_RETRY_SCALE: String(SCALE) });
});

after(async () => {
  if (server !== undefined) assert.equal(await server.stop(), 0, server.stderr());
  await rx?.close();
  await drop?.();
});

describe('webhooks from serve', () => {
  test('nothing is sent for a rejected file; a run complete for an endpoint\'s sites is told to it, signed', async () => {
    const bad = runCsv('2026112000').split('\n');
    bad[9] = bad[9]!.replace(',', ',x');
    const code = await ingest({
      'WF_A_2026112000.csv': runCsv('2026112000', { steps: [0, 1] }),
      'PV_B_2026112000.csv': runCsv('2026112000', { steps: [0, 1] }),
      'WF_C_2026112000.csv': bad.join('\n'),
    });
    assert.equal(code, 1, 'one file rejected');
    // The endpoint for WF_A alone: its run is complete.
    assert.ok(await until(() => at('/scoped').length === 1, 5000), 'the scoped endpoint is told');
    const scoped = verified(secrets.get('/scoped')!, at('/scoped')[0]!);
    assert.deepEqual({ ...scoped, timestamp: undefined }, {
      type: 'issue.complete',
      issue: '2026112000',
      status: 'complete',
      farms: 1,
      farms_expected: 1,
      timestamp: undefined,
    });
    assert.match(String(scoped.timestamp), BEIJING);
    // The notices of one entry are queued together: the scoped one arrived, so one for every site would have too.
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(at('/all').length, 0, 'two of three sites: nothing for every site, nothing for the rejected file');

    assert.equal(await ingest({ 'WF_C_2026112000.csv': runCsv('2026112000', { steps: [0, 1] }) }), 0);
    assert.ok(await until(() => at('/all').length === 1, 5000), 'every site: told once the last one arrives');
    const all = at('/all')[0]!;
    const body = verified(secrets.get('/all')!, all);
    assert.equal(body.type, 'issue.complete');
    assert.equal(body.issue, '2026112000');
    assert.equal(body.status, 'complete');
    assert.equal(body.farms, 3);
    assert.equal(body.farms_expected, 3);
    assert.match(String(body.timestamp), BEIJING);
    assert.deepEqual(Object.keys(body), ['type', 'issue', 'status', 'farms', 'farms_expected', 'timestamp']);
    assert.equal(all.headers['content-type'], 'application/json');
    assert.match(String(all.headers['webhook-timestamp']), /^\d{10}$/);
    assert.ok(Math.abs(Number(all.headers['webhook-timestamp']) - Date.now() / 1000) < 30);
    const hooks = await listed();
    assert.equal(all.headers['webhook-id'], noticeId(hooks.get('all')!.id, '2026112000', 'issue.complete'));
  });

  test('a receiver that fails twice gets the notice on the third attempt, with the same webhook-id', async () => {
    assert.ok(await until(() => at('/flaky').length >= 3, 8000), `attempts: ${at('/flaky').length}`);
    await new Promise((r) => setTimeout(r, 300));
    const tries = at('/flaky');
    assert.deepEqual(tries.map((x) => x.status), [500, 500, 200]);
    assert.equal(new Set(tries.map((x) => x.headers['webhook-id'])).size, 1);
    for (const x of tries) assert.equal(verified(secrets.get('/flaky')!, x).type, 'issue.complete');
    // The first retry within 10 s of the failure, scaled as this test runs it (plus the deliverer's rhythm).
    assert.ok(tries[1]!.at - tries[0]!.at <= 10_000 * SCALE + 2500, `first retry after ${tries[1]!.at - tries[0]!.at} ms`);
    const flaky = (await listed()).get('flaky')!;
    assert.equal(flaky.lastResult, '200');
    assert.equal(flaky.pending, 0);
  });

  test('a redirect is not followed: it counts as a failure', async () => {
    assert.ok(await until(() => at('/moved').length >= 2, 5000));
    assert.equal(at('/elsewhere').length, 0);
    const moved = (await listed()).get('moved')!;
    assert.equal(moved.lastResult, 'redirect refused (302)');
    assert.equal(moved.pending, 1);
    assert.equal(moved.disabledAt, null);
  });

  test('410 disables the endpoint: nothing more is sent to it', async () => {
    assert.ok(await until(() => at('/gone').length >= 1, 5000));
    assert.ok(await until(async () => (await listed()).get('gone')!.disabledAt !== null, 3000), 'disabled');
    const gone = (await listed()).get('gone')!;
    assert.match(gone.disabledReason ?? '', /410/);
    const list = await runCli(['webhooks', 'list', '--db', db]);
    assert.match(list.stdout, /^gone\s.*disabled \(410 Gone\)$/m);
    // A newer run, complete: every active endpoint hears of it, the disabled one does not.
    assert.equal(
      await ingest({
        'WF_A_2026112012.csv': runCsv('2026112012', { steps: [0] }),
        'PV_B_2026112012.csv': runCsv('2026112012', { steps: [0] }),
        'WF_C_2026112012.csv': runCsv('2026112012', { steps: [0] }),
      }),
      0,
    );
    assert.ok(await until(() => at('/all').length === 2 && at('/scoped').length === 2, 5000));
    assert.equal(verified(secrets.get('/all')!, at('/all')[1]!).issue, '2026112012');
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(at('/gone').length, 1);
    assert.equal(at('/all').length, 2, 'the older run, now superseded, is not told again');
  });

  test('the attempts are counted in /metrics by result', async () => {
    const f = parsePromText(await (await fetch(`${server.base}/metrics`)).text());
    const n = (result: string) => valueOf(f, 'forecastd_webhook_deliveries_total', { result });
    assert.ok(n('delivered') >= 6, `delivered ${n('delivered')}`);
    assert.ok(n('retry') >= 3, `retry ${n('retry')}`);
    assert.equal(n('gone'), 1);
    assert.equal(n('refused'), 0);
  });
});
