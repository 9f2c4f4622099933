/** End to end: `forecastd ingest --watch` and `forecastd serve --watch`, real processes, a real store. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, runCli, serve } from '../helpers/cli.js';
import { cellValue, farmsCsv, runCsv, testDbUrl } from '../helpers/fixtures.js';
import { deliver, placed, waitUntil } from '../helpers/watch.js';

let dir: string;
let db: string;
let drop: () => Promise<void>;

before(async () => {
  ({ dir, url: db, drop } = await testDbUrl());
  writeFileSync(join(dir, 'farms.csv'), farmsCsv());
  const r = await runCli(['farms', 'import', join(dir, 'farms.csv'), '--db', db]);
  assert.equal(r.code, 0, r.stderr);
});
after(() => drop());

const folder = (name: string): string => {
  const p = join(dir, name);
  mkdirSync(p);
  return p;
};

interface ForecastBody {
  data: { total: number; items: Record<string, number | string>[] };
}

describe('ingest --watch', () => {
  test('prints a line per file taken (stdout) or rejected (stderr) and exits 0 on SIGTERM', async () => {
    const root = folder('in1');
    const child = spawn(process.execPath, [BIN, 'ingest', '--watch', root, '--settle', '200ms'], { env: { ...process.env, FORECASTD_DB: db }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      deliver(root, 'WF_A_2026112100.csv', runCsv('2026112100'));
      deliver(root, 'sub/PV_B_2026112100.csv', runCsv('2026112100', { steps: [0, 1, 2] }));
      deliver(root, 'NOPE_2026112100.csv', runCsv('2026112100'));
      await waitUntil(() => out.split('\n').length >= 3 && err.includes('\n'), 10_000, () => out + err);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, err);
    assert.deepEqual(out.trim().split('\n').sort(), [
      `ingested ${join(root, 'WF_A_2026112100.csv')}: farm WF_A, issue 2026112100, 1441 records`,
      `ingested ${join(root, 'sub/PV_B_2026112100.csv')}: farm PV_B, issue 2026112100, 3 records`,
    ]);
    const report = `${join(root, 'NOPE_2026112100.csv')}: line 0, column 0: farm_id "NOPE" is not registered; import it with "forecastd farms import" first`;
    assert.equal(err, `${report}\n`);
    assert.equal(readFileSync(join(root, 'rejected', 'NOPE_2026112100.csv.error.txt'), 'utf8'), `${report}\n`);
    assert.equal(placed(root).done.length, 2);
    // Stopped cleanly: nothing of this watcher is left in the claims folder.
    assert.deepEqual(readdirSync(join(root, '.forecastd', 'claims')), []);
  });

  test('a folder that is not there, a bad settle time, or paths with --watch are usage errors (exit 2)', async () => {
    let r = await runCli(['ingest', '--watch', join(dir, 'nowhere'), '--db', db]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /setting watch from flag --watch: no such folder/);
    r = await runCli(['ingest', '--watch', dir, '--settle', '2', '--db', db]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /setting settle from flag --settle: must be a duration/);
    r = await runCli(['ingest', join(dir, 'farms.csv'), '--watch', dir, '--db', db]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /not both/);
    r = await runCli(['serve', '--watch', join(dir, 'nowhere'), '--db', db, '--port', '0']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /setting watch from flag --watch: no such folder/);
  });
});

describe('serve --watch', () => {
  test('one process: files put into the folder are served at once', async () => {
    const root = folder('in2');
    const s = await serve(['--db', db, '--workers', '1', '--watch', root, '--settle', '200ms']);
    try {
      deliver(root, 'WF_C_2026112200.csv', runCsv('2026112200'));
      await waitUntil(() => placed(root).done.length === 1, 10_000, () => s.stderr());
      const body = (await (await fetch(`${s.base}/api/v1/forecast?farm_id=WF_C&issue=2026112200&size=1&page=7&elements=t2m`)).json()) as ForecastBody;
      assert.equal(body.data.total, 1441);
      assert.equal(body.data.items[0]!.t2m, cellValue('2026112200', 6, 0));
    } finally {
      assert.equal(await s.stop(), 0, s.stderr());
    }
  });

  test('a cluster watches the folder in its primary only, and every worker serves what was taken', async () => {
    const root = folder('in3');
    const s = await serve(['--db', db, '--workers', '2', '--watch', root, '--settle', '200ms', '--log-level', 'info']);
    try {
      const owners = readdirSync(join(root, '.forecastd', 'claims'));
      assert.equal(owners.length, 1, 'one watcher');
      const beat = JSON.parse(readFileSync(join(root, '.forecastd', 'claims', owners[0]!, '.alive'), 'utf8')) as { pid: number };
      assert.equal(beat.pid, s.child.pid, 'in the primary');
      for (const farmId of ['WF_A', 'PV_B', 'WF_C']) deliver(root, `${farmId}_2026112212.csv`, runCsv('2026112212'));
      deliver(root, 'WF_A_2026112212x.csv', 'x');
      // Each file is logged once it is in its place.
      await waitUntil(() => (s.stderr().match(/"msg":"watch: file (taken|rejected)"/g) ?? []).length === 4, 10_000, () => s.stderr());
      assert.deepEqual([placed(root).done.length, placed(root).rejected.length], [3, 1]);
      assert.match(s.stderr(), /"msg":"watch: file rejected"/);
      assert.equal((s.stderr().match(/"msg":"watch: file taken"/g) ?? []).length, 3);
      // Several requests, so that both workers answer some; each sees every run.
      for (let i = 0; i < 8; i++) {
        for (const farmId of ['WF_A', 'PV_B', 'WF_C']) {
          const res = await fetch(`${s.base}/api/v1/forecast?farm_id=${farmId}&issue=2026112212&size=1&elements=tr`);
          assert.equal(res.status, 200, farmId);
          assert.equal(((await res.json()) as ForecastBody).data.items[0]!.tr, cellValue('2026112212', 0, 12));
        }
      }
    } finally {
      assert.equal(await s.stop(), 0, s.stderr());
    }
    assert.deepEqual(readdirSync(join(root, '.forecastd', 'claims')), []);
  });
});
