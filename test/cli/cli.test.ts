/** End to end: the real command line, a real store file, a real HTTP port. */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cellValue, eventually, farmsCsv, runCsv, testDbUrl } from '../helpers/fixtures.js';
import { spawn } from 'node:child_process';
import { openStore } from '../../src/store/openStore.js';
import { listeningUrl } from '../../src/cli/serveCommand.js';
import { BIN, childPids, commandLine, importFarms, runCli, serve } from '../helpers/cli.js';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

describe('help, version and usage errors', () => {
  test('--help on the program and on each command exits 0', async () => {
    for (const args of [['--help'], ['serve', '--help'], ['ingest', '--help'], ['farms', '--help'], ['farms', 'import', '--help'], ['demo', '-h']]) {
      const r = await runCli(args);
      assert.equal(r.code, 0, args.join(' '));
      assert.match(r.stdout, /Usage: forecastd/);
    }
  });

  test('a command whose store cannot be reached exits 1, as its help says', async () => {
    const url = 'postgres://nobody@127.0.0.1:1/none';
    for (const command of ['prune', 'keys']) {
      const help = (await runCli([command, '--help'])).stdout;
      assert.match(help, /Exit status: 0 [^\n]*; 1 [^\n]*store[^\n]*; 2 usage error/, command);
    }
    const r = await runCli(['prune', '--db', url]);
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  });

  test('--version prints the package version', async () => {
    const r = await runCli(['--version']);
    assert.equal(r.code, 0);
    assert.equal(r.stdout.trim(), `forecastd ${pkg.version}`);
  });

  test('usage errors exit 2 with a message on stderr', async () => {
    for (const args of [[], ['bogus'], ['ingest'], ['farms'], ['farms', 'export', 'x'], ['serve', '--port', 'abc'], ['serve', '--nope'], ['serve', '--range', '1,2,3'], ['serve', '--db', 'sqlite:/tmp/x.db', '--read-db', 'postgres://h/db'], ['serve', '--db', 'mysql://x'], ['status', '--db', 'postgress://postgres@127.0.0.1/x'], ['config', '--db', 'file:///tmp/x.db']]) {
      const r = await runCli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    }
    const r = await runCli(['serve', '--port', '99999']);
    assert.match(r.stderr, /setting port from flag --port: must be a whole number from 0 to 65535, got "99999"/);
  });
});

describe('farms import, ingest, serve, SIGTERM', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let db: string;
  before(async () => {
    ({ dir, drop: cleanup, url: db } = await testDbUrl());
    writeFileSync(join(dir, 'farms.csv'), farmsCsv(undefined, { header: ['kind'], cells: (f) => [f.farmId.startsWith('WF') ? 'wind' : 'solar'] }));
    mkdirSync(join(dir, 'runs'));
    writeFileSync(join(dir, 'runs', 'WF_A_2026112000.csv'), runCsv('2026112000'));
    writeFileSync(join(dir, 'runs', 'PV_B_2026112000.csv'), runCsv('2026112000', { steps: [0, 1, 2, 3] }));
    const bad = runCsv('2026112000').split('\n');
    bad[9] = bad[9]!.replace(',', ',x');
    writeFileSync(join(dir, 'runs', 'WF_C_2026112000.csv'), bad.join('\n'));
    writeFileSync(join(dir, 'WF_A_2026113100.csv'), 'date_time\n');
  });
  after(() => cleanup());

  test('farms import registers the sites', async () => {
    const r = await runCli(['farms', 'import', join(dir, 'farms.csv'), '--db', db]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /imported 3 farms/);
  });

  test('a rejected registry exits 1 with file, line and column on stderr', async () => {
    writeFileSync(join(dir, 'bad-farms.csv'), 'farm_id,lat,lon,name\nX1,95,100,n\n');
    const r = await runCli(['farms', 'import', join(dir, 'bad-farms.csv'), '--db', db]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /bad-farms\.csv: line 2, column 2: lat "95"/);
  });

  test('ingest takes the good files, rejects the bad ones with one stderr line each, exits 1', async () => {
    const r = await runCli(['ingest', join(dir, 'runs'), join(dir, 'WF_A_2026113100.csv')], { FORECASTD_DB: db });
    assert.equal(r.code, 1);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 2, r.stderr);
    assert.match(r.stderr, /WF_C_2026112000\.csv: line 10, column 2: t2m value "x/);
    assert.match(r.stderr, /WF_A_2026113100\.csv: line 0, column 0: .*issue "2026113100"/);
    assert.match(r.stdout, /2 files ingested, 2 rejected/);
  });

  test('ingest of good files only exits 0', async () => {
    const r = await runCli(['ingest', join(dir, 'runs', 'PV_B_2026112000.csv'), '--db', db]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
  });

  test('ingest whose reader closes the output goes on: every good file taken, exit by what was rejected, no crash', async (t) => {
    // A store of its own: the runs taken here would be the latest of WF_A in the tests that follow.
    const own = await testDbUrl();
    t.after(() => own.drop());
    await importFarms(own.url, own.dir);
    const many = join(own.dir, 'many');
    mkdirSync(many);
    const issues = ['2026112100', '2026112112', '2026112200', '2026112212', '2026112300', '2026112312'];
    for (const issue of issues) writeFileSync(join(many, `WF_A_${issue}.csv`), runCsv(issue));
    // The reader of stdout goes away before the first line: every write to it fails (EPIPE).
    const child = spawn(process.execPath, [BIN, 'ingest', many, '--db', own.url, '--ingest-threads', '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const code = await new Promise<number | null>((r) => child.on('close', r));
    assert.equal(code, 0, stderr);
    assert.equal(stderr, '');
    const store = await openStore(own.url);
    try {
      for (const issue of issues) assert.ok(await store.getRun('WF_A', issue), `${issue} taken`);
    } finally {
      await store.close();
    }
  });

  test('serve answers over HTTP, sees new ingests without restart, and exits 0 on SIGTERM', async () => {
    const s = await serve(['--db', db]);
    try {
      const health = await fetch(`${s.base}/healthz`);
      assert.equal(health.status, 200);
      const farms = (await (await fetch(`${s.base}/api/v1/farms`)).json()) as { data: { items: { farm_id: string; kind: string }[] } };
      assert.deepEqual(farms.data.items.map((f) => [f.farm_id, f.kind]), [['PV_B', 'solar'], ['WF_A', 'wind'], ['WF_C', 'wind']]);

      const res = await fetch(`${s.base}/api/v1/forecast?farm_id=WF_A&size=2&page=3&elements=tr,t2m`);
      assert.equal(res.status, 200);
      const body = (await res.json()) as { code: number; data: { total: number; items: Record<string, unknown>[] } };
      assert.equal(body.code, 0);
      assert.equal(body.data.total, 1441);
      assert.deepEqual(body.data.items[0], { date_time: '2026-11-20T09:00:00+08:00', t2m: cellValue('2026112000', 4, 0), tr: cellValue('2026112000', 4, 12) });

      const missing = await fetch(`${s.base}/api/v1/forecast?farm_id=WF_C`);
      assert.equal(missing.status, 404);

      // A run ingested while the server runs is served without a restart.
      writeFileSync(join(dir, 'WF_C_2026112012.csv'), runCsv('2026112012'));
      const r = await runCli(['ingest', join(dir, 'WF_C_2026112012.csv'), '--db', db]);
      assert.equal(r.code, 0, r.stderr);
      const now = await fetch(`${s.base}/api/v1/forecast?farm_id=WF_C&size=1`);
      assert.equal(now.status, 200);
      const issues = (await (await fetch(`${s.base}/api/v1/forecast/issues`)).json()) as {
        data: { items: { issue: string; issue_time_utc: string; status: string; farms: number; farms_expected: number }[] };
      };
      assert.deepEqual(
        issues.data.items.map((i) => ({ issue: i.issue, issue_time_utc: i.issue_time_utc, status: i.status, farms: i.farms, farms_expected: i.farms_expected })),
        [
          { issue: '2026112012', issue_time_utc: '2026-11-20T12:00:00Z', status: 'receiving', farms: 1, farms_expected: 3 },
          { issue: '2026112000', issue_time_utc: '2026-11-20T00:00:00Z', status: 'receiving', farms: 2, farms_expected: 3 },
        ],
      );
    } finally {
      const code = await s.stop();
      assert.equal(code, 0, s.stderr());
    }
  });

  test('a run replaced by another process while serve runs: new values, a new ETag, the old tag no longer matches', async () => {
    const s = await serve(['--db', db]);
    try {
      const path = '/api/v1/forecast?farm_id=PV_B&issue=2026112000&size=2&elements=t2m,tr';
      const latest = '/api/v1/forecast?farm_id=PV_B&size=2&elements=t2m';
      const before = await fetch(s.base + path);
      assert.equal(before.status, 200);
      const tag = before.headers.get('etag')!;
      const lastModified = before.headers.get('last-modified')!;
      assert.match(tag, /^"[^"]+"$/);
      const oldItems = ((await before.json()) as { data: { items: unknown[] } }).data.items;
      // Asked twice more, so that the answer is remembered and its body kept (and the gzip variant made).
      assert.equal((await fetch(s.base + path, { headers: { 'if-none-match': tag } })).status, 304);
      await fetch(s.base + path, { headers: { 'accept-encoding': 'gzip' } });
      await fetch(s.base + latest);
      await fetch(s.base + latest);

      writeFileSync(join(dir, 'PV_B_2026112000.csv'), runCsv('2026112000', { steps: [0, 1, 2, 3], value: (k, e) => 5000 + k + e / 4 }));
      const r = await runCli(['ingest', join(dir, 'PV_B_2026112000.csv'), '--db', db]);
      assert.equal(r.code, 0, r.stderr);
      // Another process's commit is promised within the store's poll bound (SQLite: 1 ms; PostgreSQL: by NOTIFY, 1 s).
      const seen = await eventually(() => fetch(s.base + path, { headers: { 'if-none-match': tag } }), (res) => res.status === 200, 2000);
      assert.equal(seen.status, 200, 'the replacement is seen within 2 s');

      for (const headers of [{}, { 'accept-encoding': 'gzip' }, { 'if-none-match': tag }, { 'if-modified-since': lastModified }] as Record<string, string>[]) {
        const after = await fetch(s.base + path, { headers });
        assert.equal(after.status, 200, JSON.stringify(headers));
        assert.notEqual(after.headers.get('etag')!.replace(/-gz2"$/, '"'), tag, JSON.stringify(headers));
        const items = ((await after.json()) as { data: { items: { t2m: number; tr: number }[] } }).data.items;
        assert.notDeepEqual(items, oldItems);
        assert.deepEqual(items.map((i) => [i.t2m, i.tr]), [[5000, 5003], [5001, 5004]], JSON.stringify(headers));
      }
      const now = (await (await fetch(s.base + latest)).json()) as { data: { items: { t2m: number }[] } };
      assert.deepEqual(now.data.items.map((i) => i.t2m), [5000, 5001]);
    } finally {
      const code = await s.stop();
      assert.equal(code, 0, s.stderr());
    }
  });

  test('serve --workers 2 shares one port between two processes, and SIGTERM stops them all with 0', async () => {
    // Run as the command itself: its first line starts node with its V8 flags, which the workers inherit.
    const s = await serve(['--db', db, '--workers', '2'], {}, { asCommand: true });
    let pids: number[] = [];
    try {
      const bodies = await Promise.all(
        Array.from({ length: 20 }, () => fetch(`${s.base}/api/v1/forecast?farm_id=WF_A&size=1&issue=2026112000`).then((r) => r.text())),
      );
      assert.equal(new Set(bodies).size, 1);
      assert.equal(JSON.parse(bodies[0]!).code, 0);
      pids = childPids(s.child.pid!);
      assert.equal(pids.length, 2, 'two workers');
      for (const pid of [s.child.pid!, ...pids]) {
        for (const flag of ['--single-threaded-gc', '--no-allocation-site-pretenuring', '--max-semi-space-size=4']) assert.ok(commandLine(pid).includes(flag), `${flag}: ${commandLine(pid).join(' ')}`);
      }
    } finally {
      assert.equal(await s.stop(), 0, s.stderr());
    }
    for (const pid of pids) assert.throws(() => process.kill(pid, 0), 'worker gone');
  });

  test('serve announces the host it was given: --host 0.0.0.0 is listening on http://0.0.0.0:PORT, with one worker or several', async () => {
    for (const workers of ['1', '2']) {
      const s = await serve(['--db', db, '--workers', workers, '--host', '0.0.0.0']);
      try {
        assert.match(s.base, /^http:\/\/0\.0\.0\.0:\d+$/);
        const { port } = new URL(s.base);
        assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
      } finally {
        assert.equal(await s.stop(), 0, s.stderr());
      }
    }
    assert.equal(listeningUrl('::', 8080), 'http://[::]:8080');
    assert.equal(listeningUrl('localhost', 1), 'http://localhost:1');
  });

  test('serve on a port already taken exits 1 and says so once, with one worker or several', { timeout: 30_000 }, async () => {
    const s = await serve(['--db', db, '--workers', '1']);
    try {
      const { port } = new URL(s.base);
      for (const workers of ['1', '2']) {
        // A hang here (a worker kept alive by its channel to the primary) fails the test by its timeout.
        const r = await runCli(['serve', '--db', db, '--port', port, '--workers', workers]);
        assert.equal(r.code, 1, `--workers ${workers}: ${r.stderr}`);
        const lines = r.stderr.trim().split('\n');
        assert.deepEqual(lines, [`forecastd: cannot listen on 127.0.0.1:${port}: the port is already in use`], `--workers ${workers}`);
        assert.equal(r.stdout, '', 'never announced as listening');
      }
    } finally {
      assert.equal(await s.stop(), 0, s.stderr());
    }
  });
});
