/**
 * The watch-folder ingest as real processes (`forecastd ingest --watch`): killed
 * with SIGKILL at random moments while files keep arriving and started again,
 * and two at once on one folder. Each delivered file must end in done/ or
 * rejected/ exactly once, be recorded once, and the store must hold whole runs only.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { readFarmsCsv } from '../../src/ingest/farmsCsv.js';
import { openStore } from '../../src/store/openStore.js';
import type { Store } from '../../src/store/store.js';
import { BIN } from '../helpers/cli.js';
import { farmsCsv, runCsv, testDbUrl } from '../helpers/fixtures.js';
import { claimsLeft, deliver, fileSeriesText, manyFarms, placed, prng, seriesText, sha256, waitUntil } from '../helpers/watch.js';

const SITES = manyFarms(20);
const ISSUES = ['2026111300', '2026111312', '2026111400'];

interface Delivery {
  readonly rel: string;
  readonly farmId: string;
  readonly issue: string;
  readonly text: string;
  readonly bad: boolean;
  readonly sha: string;
}

/** Deliveries with distinct contents: several versions of each (site, run), some bad, in subfolders. */
function plan(n: number, random: () => number, steps: number, folder = (i: number) => ['', 'a/', 'a/b/'][i % 3]!): Delivery[] {
  const out: Delivery[] = [];
  for (let i = 0; i < n; i++) {
    const site = SITES[Math.floor(random() * SITES.length)]!;
    const issue = ISSUES[Math.floor(random() * ISSUES.length)]!;
    const bad = random() < 0.08;
    let text = runCsv(issue, { steps: Array.from({ length: steps }, (_, k) => k), value: (k, e) => Math.round((i * 7 + k + e / 8) * 1000) / 1000 });
    if (bad) text = text.replace(/\n([^\n]*),[^,\n]*\n/, '\n$1,bad\n');
    const rel = `${folder(i)}${site.farmId}_${issue}.csv`;
    out.push({ rel, farmId: site.farmId, issue, text, bad, sha: sha256(text) });
  }
  return out;
}

interface Proc {
  child: ChildProcess;
  out: string;
  err: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startWatcher(root: string, db: string): Proc {
  const child = spawn(process.execPath, [BIN, 'ingest', '--watch', root, '--db', db, '--settle', '200ms'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const p: Proc = {
    child,
    out: '',
    err: '',
    exited: new Promise((r) => child.once('exit', (code, signal) => r({ code, signal }))),
  };
  child.stdout!.on('data', (d: Buffer) => (p.out += d));
  child.stderr!.on('data', (d: Buffer) => (p.err += d));
  return p;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let db: string;
let dir: string;
let drop: () => Promise<void>;
let store: Store;

before(async () => {
  ({ url: db, dir, drop } = await testDbUrl());
  store = await openStore(db);
  await store.upsertFarms(readFarmsCsv(Buffer.from(farmsCsv(SITES))));
});
after(async () => {
  await store.close();
  await drop();
});

/** The checks both tests end with: each delivery placed, recorded and stored exactly once, as delivered. */
async function assertEachOnce(root: string, deliveries: readonly Delivery[]): Promise<void> {
  const p = placed(root);
  const bad = deliveries.filter((d) => d.bad).length;
  assert.equal(p.done.length, deliveries.length - bad);
  assert.equal(p.rejected.length, bad);
  assert.equal(p.reports.length, bad);
  assert.deepEqual(claimsLeft(root), []);
  // Every placed file is one delivery's bytes, and every delivery is placed once.
  const placedShas = [...p.done.map((f) => join('done', f)), ...p.rejected.map((f) => join('rejected', f))].map((f) => sha256(readFileSync(join(root, f)))).sort();
  assert.deepEqual(placedShas, deliveries.map((d) => d.sha).sort());
  // Every delivery is recorded once, with the right result.
  const records = (await store.listIngestedFiles(0, 100_000)).filter((r) => deliveries.some((d) => d.sha === r.sha256));
  assert.equal(records.length, deliveries.length);
  assert.equal(new Set(records.map((r) => r.claim)).size, deliveries.length);
  const bySha = new Map(deliveries.map((d) => [d.sha, d]));
  for (const r of records) {
    const d = bySha.get(r.sha256)!;
    assert.equal(r.result, d.bad ? 'rejected' : 'taken');
    assert.equal(r.path, d.rel);
  }
  for (const f of p.reports) {
    const rec = records.find((r) => r.result === 'rejected' && f.startsWith(r.path.slice(r.path.lastIndexOf('/') + 1, -4)))!;
    assert.ok(rec, f);
    assert.match(readFileSync(join(root, 'rejected', f), 'utf8'), /: line \d+, column \d+: .*\n$/);
  }
  // Every (site, run) holds the version of its last taken record.
  const last = new Map<string, string>();
  for (const r of [...records].sort((a, b) => a.id - b.id)) if (r.result === 'taken') last.set(`${r.farmId}_${r.issue}`, r.sha256);
  for (const [key, sha] of last) {
    const d = bySha.get(sha)!;
    const run = await store.getRun(d.farmId, d.issue);
    assert.equal(seriesText(run!.view.toSeries()), fileSeriesText(`${key}.csv`, d.text), key);
  }
}

describe('watch folder: processes', () => {
  test('killed (SIGKILL) 8 times at random moments while files arrive: each file is taken once and runs are only seen whole', async (t) => {
    const random = prng(20261113);
    const root = join(dir, 'crash');
    mkdirSync(root);
    const deliveries = plan(100, random, 289);
    // What a reader may see of each (site, run): one of its good versions, whole.
    const versions = new Map<string, Set<string>>();
    for (const d of deliveries) {
      if (d.bad) continue;
      const key = `${d.farmId}_${d.issue}`;
      if (!versions.has(key)) versions.set(key, new Set());
      versions.get(key)!.add(fileSeriesText(`${key}.csv`, d.text));
    }
    let running = true;
    let reads = 0;
    const reader = (async () => {
      const pick = prng(7);
      while (running) {
        const site = SITES[Math.floor(pick() * SITES.length)]!;
        const issue = ISSUES[Math.floor(pick() * ISSUES.length)]!;
        const run = await store.getRun(site.farmId, issue);
        if (run !== undefined) {
          reads++;
          const key = `${site.farmId}_${issue}`;
          assert.ok(versions.get(key)?.has(seriesText(run.view.toSeries())), `a read of ${key} is one delivered version, whole`);
        }
        await sleep(2);
      }
    })();
    const delivering = (async () => {
      for (const d of deliveries) {
        // A name is delivered again once the watcher has taken the earlier file (else it would replace it).
        while (existsSync(join(root, d.rel))) await sleep(10);
        deliver(root, d.rel, d.text);
        await sleep(5 + random() * 30);
      }
    })();

    let proc = startWatcher(root, db);
    let inHand = 0;
    const claims = join(root, '.forecastd', 'claims');
    const owners = (): string[] => (existsSync(claims) ? readdirSync(claims) : []);
    const seen = new Set<string>();
    for (let kill = 0; kill < 8; kill++) {
      // Once it runs (its claims folder is there), a random moment within the next 0.5 s.
      await waitUntil(() => owners().some((o) => !seen.has(o)), 10_000);
      for (const o of owners()) seen.add(o);
      await sleep(random() * 500);
      proc.child.kill('SIGKILL');
      const { signal } = await proc.exited;
      assert.equal(signal, 'SIGKILL');
      if (claimsLeft(root).length > 0) inHand++;
      proc = startWatcher(root, db);
    }
    t.diagnostic(`killed with a claim in hand: ${inHand} of 8`);
    await delivering;
    await waitUntil(
      () => {
        const p = placed(root);
        return p.done.length + p.rejected.length === deliveries.length && claimsLeft(root).length === 0;
      },
      20_000,
      () => JSON.stringify({ done: placed(root).done.length, claims: claimsLeft(root), err: proc.err.slice(-2000) }),
    );
    proc.child.kill('SIGTERM');
    assert.deepEqual(await proc.exited, { code: 0, signal: null });
    running = false;
    await reader;
    assert.ok(reads > 20, `the reader read runs while the watcher was killed (${reads})`);
    await assertEachOnce(root, deliveries);
    assert.deepEqual(readdirSync(join(root, '.forecastd', 'claims')), [], 'no claims folder is left behind');
  });

  test('two watcher processes on one folder: each file taken once, by one of them', async () => {
    const root = join(dir, 'two');
    mkdirSync(root);
    const deliveries = plan(150, prng(2), 97, (i) => `${i}/`);
    const a = startWatcher(root, db);
    const b = startWatcher(root, db);
    await sleep(300);
    for (const d of deliveries) deliver(root, d.rel, d.text);
    await waitUntil(() => {
      const p = placed(root);
      return p.done.length + p.rejected.length === deliveries.length;
    }, 20_000);
    a.child.kill('SIGTERM');
    b.child.kill('SIGTERM');
    assert.deepEqual(await a.exited, { code: 0, signal: null });
    assert.deepEqual(await b.exited, { code: 0, signal: null });
    const taken = (s: string): string[] => s.split('\n').filter((l) => l.startsWith('ingested '));
    const lines = [...taken(a.out), ...taken(b.out)];
    assert.equal(lines.length, deliveries.filter((d) => !d.bad).length);
    const rejectedLines = [...a.err.split('\n'), ...b.err.split('\n')].filter((l) => /: line \d+, column \d+: /.test(l));
    assert.equal(rejectedLines.length, deliveries.filter((d) => d.bad).length);
    await assertEachOnce(root, deliveries);
  });
});
