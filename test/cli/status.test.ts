/**
 * forecastd status through the real command line against a seeded store:
 * sites, runs, the newest runs with their states and site counts, the age
 * of the newest complete or partial run and the store's size, as text and as JSON.
 */
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { formatAge, formatBytes } from '../../src/cli/statusCommand.js';
import { openStore, parseStoreUrl } from '../../src/store/openStore.js';
import { runCli } from '../helpers/cli.js';
import { seed, tempDir, TEST_STORE_KIND, testDbUrl } from '../helpers/fixtures.js';

let db = '';
let drop: () => Promise<void>;
const ISSUES = ['2026112000', '2026112012', '2026112100', '2026112112', '2026112200', '2026112212'];
// The newest run (22 12Z) is still receiving (2 of 3 sites, its deadline hours away): the age is that of 22 00Z, complete.
const NEWEST_DONE_MS = Date.UTC(2026, 10, 22, 0);

before(async () => {
  ({ url: db, drop } = await testDbUrl());
  const store = await openStore(db);
  // Six runs; the newest held by two of the three sites, the others by one or three.
  const runs = ISSUES.flatMap((issue, i) =>
    (i === 5 ? ['WF_A', 'PV_B'] : i % 2 ? ['WF_A'] : ['WF_A', 'PV_B', 'WF_C']).map((farmId) => ({ farmId, issue, opts: { steps: [0, 1] } })),
  );
  await seed(store, runs);
  await store.close();
});

after(() => drop?.());

describe('forecastd status', () => {
  test('--json: sites, runs, the newest five runs with their states and site counts, the newest complete run and its age, the store size', async () => {
    const t0 = Date.now();
    const r = await runCli(['status', '--db', db, '--json']);
    const t1 = Date.now();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    const s = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(s), ['sites', 'runs', 'site_runs', 'latest_run_age_seconds', 'latest_complete_issue', 'latest_runs', 'store']);
    // The help names every field --json prints.
    const help = (await runCli(['status', '--help'])).stdout;
    for (const field of [...Object.keys(s), ...Object.keys(s.latest_runs[0]), ...Object.keys(s.store)]) assert.match(help, new RegExp(`"${field}"`), field);
    assert.equal(s.sites, 3);
    assert.equal(s.runs, 6);
    assert.equal(s.site_runs, 13);
    assert.deepEqual(s.latest_runs, [
      { issue: '2026112212', issue_time_utc: '2026-11-22T12:00:00Z', status: 'receiving', farms: 2, farms_expected: 3 },
      { issue: '2026112200', issue_time_utc: '2026-11-22T00:00:00Z', status: 'complete', farms: 3, farms_expected: 3 },
      { issue: '2026112112', issue_time_utc: '2026-11-21T12:00:00Z', status: 'superseded', farms: 1, farms_expected: 3 },
      { issue: '2026112100', issue_time_utc: '2026-11-21T00:00:00Z', status: 'superseded', farms: 3, farms_expected: 3 },
      { issue: '2026112012', issue_time_utc: '2026-11-20T12:00:00Z', status: 'superseded', farms: 1, farms_expected: 3 },
    ]);
    assert.equal(s.latest_complete_issue, '2026112200');
    assert.ok(s.latest_run_age_seconds >= Math.floor((t0 - NEWEST_DONE_MS) / 1000) - 1 && s.latest_run_age_seconds <= Math.ceil((t1 - NEWEST_DONE_MS) / 1000) + 1);
    assert.equal(s.store.kind, TEST_STORE_KIND);
    assert.ok(Number.isInteger(s.store.bytes) && s.store.bytes > 0);
    if (TEST_STORE_KIND === 'sqlite') {
      const loc = parseStoreUrl(db);
      assert.equal(loc.kind, 'sqlite');
      // The file itself at least (its write-ahead log may add to it while open).
      assert.ok(s.store.bytes >= statSync(loc.path).size, `${s.store.bytes} bytes`);
    }
  });

  test('text: a line each, then the newest runs as a table', async () => {
    const r = await runCli(['status', '--db', db]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.equal(lines[0], 'sites            3');
    assert.equal(lines[1], 'runs             6 (13 site runs)');
    assert.match(lines[2]!, /^latest run age   \d+d \d+h \(2026112200\)$/);
    assert.match(lines[3]!, new RegExp(`^store            ${TEST_STORE_KIND}, [\\d.]+ (B|KiB|MiB|GiB) \\(\\d+ bytes\\)$`));
    assert.equal(lines[4], '');
    assert.equal(lines[5], 'issue        issue time (UTC)       status       sites');
    assert.deepEqual(lines.slice(6), [
      '2026112212   2026-11-22T12:00:00Z   receiving    2/3',
      '2026112200   2026-11-22T00:00:00Z   complete     3/3',
      '2026112112   2026-11-21T12:00:00Z   superseded   1/3',
      '2026112100   2026-11-21T00:00:00Z   superseded   3/3',
      '2026112012   2026-11-20T12:00:00Z   superseded   1/3',
    ]);
  });

  test('an empty store, a stray argument, help', async () => {
    const empty = await testDbUrl();
    try {
      // Made (empty) as serve or farms import would make it.
      await (await openStore(empty.url)).close();
      const r = await runCli(['status', '--db', empty.url, '--json']);
      assert.equal(r.code, 0, r.stderr);
      const s = JSON.parse(r.stdout);
      assert.equal(s.sites, 0);
      assert.equal(s.runs, 0);
      assert.deepEqual(s.latest_runs, []);
      assert.equal(s.latest_run_age_seconds, null);
      const text = await runCli(['status', '--db', empty.url]);
      assert.match(text.stdout, /^latest run age   no complete or partial run$/m);
    } finally {
      await empty.drop();
    }
    // A mistyped path names no store: said so, and nothing is made there.
    const t = tempDir();
    try {
      const missing = join(t.dir, 'typo', 'store.db');
      for (const args of [['status'], ['prune'], ['keys', 'list'], ['webhooks', 'list']]) {
        const r = await runCli([...args, '--db', missing]);
        assert.equal(r.code, 1, args.join(' '));
        assert.equal(r.stderr.trim(), `forecastd: no store at ${missing}: a store is made by forecastd farms import, ingest, demo or serve`);
        assert.equal(existsSync(join(t.dir, 'typo')), false, args.join(' '));
      }
      // Setting a store up before it is first served makes it.
      const created = await runCli(['keys', 'create', '--name', 'first', '--db', missing]);
      assert.equal(created.code, 0, created.stderr);
      assert.ok(existsSync(missing));
    } finally {
      t.cleanup();
    }
    const stray = await runCli(['status', 'now', '--db', db]);
    assert.equal(stray.code, 2);
    assert.match(stray.stderr, /status takes no arguments/);
    const help = await runCli(['status', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Usage: forecastd status/);
    assert.match((await runCli(['--help'])).stdout, /\n {2}status {9}/);
  });

  test('ages and sizes as a person reads them', () => {
    assert.equal(formatAge(0), '0s');
    assert.equal(formatAge(37), '37s');
    assert.equal(formatAge(60), '1m 0s');
    assert.equal(formatAge(4 * 3600 + 12 * 60 + 5), '4h 12m');
    assert.equal(formatAge(2 * 86400 + 3 * 3600 + 59), '2d 3h');
    assert.equal(formatAge(-5), '0s');
    assert.equal(formatBytes(0), '0 B');
    assert.equal(formatBytes(1023), '1023 B');
    assert.equal(formatBytes(1536), '1.5 KiB');
    assert.equal(formatBytes(5 * 1024 ** 3), '5.0 GiB');
  });
});
