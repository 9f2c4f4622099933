/**
 * npm run bench:watch: 1,000 site files of a full 1,441-row run (the files of
 * bench:ingest) dropped at once into a folder watched by `forecastd ingest
 * --watch`, against `forecastd ingest DIR` of the same files. Per round, each
 * on a fresh store: the ingest's wall time (process start included), and for the
 * watcher the time from the drop until every file is in done/, the time from the
 * first file in done/ to the last, and the watcher's peak RSS.
 *
 * BENCH_FILES (1000), BENCH_ROUNDS (3), BENCH_SETTLE (the watcher's --settle, 500ms).
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { csvFileName, renderCsv } from '../src/domain/csvFormat.js';
import { ALL_ELEMENTS } from '../src/domain/elementsParam.js';
import { SeriesView } from '../src/domain/seriesView.js';
import { formatIssue } from '../src/domain/time.js';
import { demoFarmsCsv, demoIssues } from '../src/demo/sites.js';
import { demoSeries } from '../src/demo/weather.js';
import { parseDuration } from '../src/settings/duration.js';
import { BENCH_DIR, BENCH_NOW, BENCH_SEED, benchSites } from './lib/benchStore.js';
import { BIN_ARGS, peakRssMb } from './lib/proc.js';
import { median } from './lib/wrk.js';

const FILES = Number(process.env.BENCH_FILES ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SETTLE = process.env.BENCH_SETTLE ?? '500ms';
const settleMs = parseDuration(SETTLE)!;

// The same files as bench:ingest (written once, shared).
const dir = join(BENCH_DIR, `ingest-${FILES}`);
const runsDir = join(dir, 'runs');
if (!existsSync(join(dir, 'complete'))) {
  process.stderr.write(`writing ${FILES} run files to ${runsDir}\n`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(runsDir, { recursive: true });
  const sites = benchSites(FILES);
  writeFileSync(join(dir, 'farms.csv'), demoFarmsCsv(sites));
  const issueMs = demoIssues(BENCH_NOW, 1)[0]!;
  for (const s of sites) {
    const csv = renderCsv(SeriesView.ofSeries(demoSeries(s, issueMs, BENCH_SEED)), issueMs, ALL_ELEMENTS);
    writeFileSync(join(runsDir, csvFileName(s.farmId, formatIssue(issueMs))), csv);
  }
  writeFileSync(join(dir, 'complete'), '');
}
const names = readdirSync(runsDir).filter((n) => n.endsWith('.csv')).sort();
const bytes = names.reduce((a, f) => a + statSync(join(runsDir, f)).size, 0);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function freshStore(): string {
  const db = join(dir, 'watch-store.db');
  for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
  execFileSync(process.execPath, [...BIN_ARGS, 'farms', 'import', join(dir, 'farms.csv'), '--db', db], { stdio: ['ignore', 'ignore', 'inherit'] });
  return db;
}

function timedIngest(): number {
  const db = freshStore();
  const t0 = process.hrtime.bigint();
  execFileSync(process.execPath, [...BIN_ARGS, 'ingest', runsDir, '--db', db], { stdio: ['ignore', 'ignore', 'inherit'] });
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/** Files under done/ (every dated folder). */
function doneCount(root: string): number {
  const done = join(root, 'done');
  if (!existsSync(done)) return 0;
  return readdirSync(done).reduce((n, d) => n + readdirSync(join(done, d)).length, 0);
}

async function timedWatch(): Promise<{ total: number; taking: number; rssMb: number }> {
  const db = freshStore();
  const root = join(dir, 'watch-drop');
  const staging = join(dir, 'watch-staging');
  rmSync(root, { recursive: true, force: true });
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(root);
  mkdirSync(staging);
  // Staged as links on the same file system, so that the drop is 1,000 renames.
  for (const n of names) linkSync(join(runsDir, n), join(staging, n));
  const child = spawn(process.execPath, [...BIN_ARGS, 'ingest', '--watch', root, '--db', db, '--settle', SETTLE], { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  while (!existsSync(join(root, '.forecastd', 'claims')) || readdirSync(join(root, '.forecastd', 'claims')).length === 0) await sleep(10);
  await sleep(300);
  const t0 = process.hrtime.bigint();
  for (const n of names) renameSync(join(staging, n), join(root, n));
  let first: bigint | undefined;
  for (;;) {
    const n = doneCount(root);
    if (n > 0 && first === undefined) first = process.hrtime.bigint();
    if (n === names.length) break;
    await sleep(n === 0 ? 5 : 20);
  }
  const t1 = process.hrtime.bigint();
  const rssMb = peakRssMb(child.pid!);
  child.kill('SIGTERM');
  const code = await exited;
  if (code !== 0) throw new Error(`the watcher exited with ${code}`);
  return { total: Number(t1 - t0) / 1e9, taking: Number(t1 - first!) / 1e9, rssMb };
}

const ingest: number[] = [];
const total: number[] = [];
const taking: number[] = [];
const rss: number[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  ingest.push(timedIngest());
  const w = await timedWatch();
  total.push(w.total);
  taking.push(w.taking);
  rss.push(w.rssMb);
  process.stderr.write(
    `round ${round}: ingest ${ingest.at(-1)!.toFixed(2)} s; watch drop->all done ${w.total.toFixed(2)} s, first->last ${w.taking.toFixed(2)} s, peak RSS ${w.rssMb.toFixed(0)} MB\n`,
  );
}
const ing = median(ingest);
const tot = median(total);
const tak = median(taking);
console.log(`forecastd watch benchmark: ${names.length} files x 1441 rows, ${(bytes / 1e6).toFixed(1)} MB, --settle ${SETTLE}, ${ROUNDS} rounds (medians)`);
console.log(`forecastd ingest DIR               ${ing.toFixed(2)} s  (process start included)`);
console.log(`ingest --watch: drop -> all done   ${tot.toFixed(2)} s  (the settle time ${(settleMs / 1000).toFixed(2)} s included)`);
console.log(`ingest --watch: first -> last      ${tak.toFixed(2)} s`);
console.log(`ratio (drop -> all done - settle) / ingest   ${((tot - settleMs / 1000) / ing).toFixed(2)}  (target <= 1.5)`);
console.log(`watcher peak RSS                   ${Math.max(...rss).toFixed(0)} MB  (target <= 200)`);
