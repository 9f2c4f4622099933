/** forecastd demo through the real command line, then served. */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parseIssue } from '../../src/domain/time.js';
import { runCli, serve } from '../helpers/cli.js';
import { testDbUrl } from '../helpers/fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;
let db: string;
before(async () => {
  ({ dir, drop: cleanup, url: db } = await testDbUrl());
});
after(() => cleanup());

test('demo registers 24 sites and ingests 4 runs each through the CSV path', async () => {
  const r = await runCli(['demo', '--db', db, '--out', join(dir, 'files')]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /24 sites registered, 96 runs ingested, 0 rejected/);
  const files = readdirSync(join(dir, 'files', 'runs'));
  assert.equal(files.length, 96);
  assert.ok(files.every((f) => /^[A-Za-z0-9_.-]+_\d{10}\.csv$/.test(f)));
});

test('demo --if-empty leaves a store with sites alone', async () => {
  const r = await runCli(['demo', '--db', db, '--if-empty', '--seed', '7']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /already holds sites/);
});

test('the demo store serves the last four 00/12 UTC runs, newest not in the future', async () => {
  const s = await serve(['--db', db]);
  try {
    const issues = (await (await fetch(`${s.base}/api/v1/forecast/issues`)).json()) as {
      data: { total: number; items: { issue: string; farms: number }[] };
    };
    assert.equal(issues.data.total, 4);
    const times = issues.data.items.map((i) => parseIssue(i.issue)!);
    assert.ok(times[0]! <= Date.now());
    assert.ok(Date.now() - times[0]! < 12 * 3600_000 + 60_000);
    times.forEach((t, i) => {
      assert.equal(new Date(t).getUTCHours() % 12, 0);
      if (i > 0) assert.equal(times[i - 1]! - t, 12 * 3600_000);
    });
    assert.ok(issues.data.items.every((i) => i.farms === 24));

    const farms = (await (await fetch(`${s.base}/api/v1/farms`)).json()) as { data: { total: number; items: { farm_id: string; lat: number; lon: number }[] } };
    assert.equal(farms.data.total, 24);
    const site = farms.data.items[0]!;
    const res = await fetch(`${s.base}/api/v1/forecast?lat=${site.lat + 0.01}&lon=${site.lon}&size=1441&elements=tr,dr,sr`);
    const body = (await res.json()) as { data: { farm_id: string; total: number; items: { tr: number; dr: number; sr: number }[] } };
    assert.equal(body.data.farm_id, site.farm_id);
    assert.equal(body.data.total, 1441);
    assert.ok(body.data.items.every((i) => i.tr === i.dr + i.sr));
    assert.ok(body.data.items.some((i) => i.tr === 0) && body.data.items.some((i) => i.tr > 0));
  } finally {
    assert.equal(await s.stop(), 0);
  }
});
