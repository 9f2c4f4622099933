/**
 * npm run bench:ingest: 1,000 site files of a full 1,441-row run ingested from
 * disk into a fresh store by the real command line, against reading and
 * splitting the same files in Node without validating or storing them, and
 * against the same ingest on one thread (--ingest-threads 0).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { csvFileName, renderCsv } from '../src/domain/csvFormat.js';
import { ALL_ELEMENTS } from '../src/domain/elementsParam.js';
import { SeriesView } from '../src/domain/seriesView.js';
import { formatIssue } from '../src/domain/time.js';
import { DEMO_SITES, demoFarmsCsv, demoIssues } from '../src/demo/sites.js';
import { demoSeries } from '../src/demo/weather.js';
import { BENCH_DIR, BENCH_NOW, BENCH_SEED, benchSites } from './lib/benchStore.js';
import { BIN_ARGS } from './lib/proc.js';
import { median } from './lib/wrk.js';

const FILES = Number(process.env.BENCH_FILES ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SPLIT = fileURLToPath(new URL('./splitFiles.js', import.meta.url));

const dir = join(BENCH_DIR, `ingest-${FILES}`);
const runsDir = join(dir, 'runs');
const sites = benchSites(FILES);
if (!existsSync(join(dir, 'complete'))) {
  process.stderr.write(`writing ${FILES} run files to ${runsDir}\n`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(runsDir, { recursive: true });
  writeFileSync(join(dir, 'farms.csv'), demoFarmsCsv(sites));
  const issueMs = demoIssues(BENCH_NOW, 1)[0]!;
  for (const s of sites) {
    const csv = renderCsv(SeriesView.ofSeries(demoSeries(s, issueMs, BENCH_SEED)), issueMs, ALL_ELEMENTS);
    writeFileSync(join(runsDir, csvFileName(s.farmId, formatIssue(issueMs))), csv);
  }
  writeFileSync(join(dir, 'complete'), '');
}
const bytes = readdirSync(runsDir).reduce((a, f) => a + statSync(join(runsDir, f)).size, 0);

function timed(args: string[]): number {
  const t0 = process.hrtime.bigint();
  execFileSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

const ingest: number[] = [];
const oneThread: number[] = [];
const split: number[] = [];
/** A fresh store holding the sites, then the files through `forecastd ingest` with these options. */
function ingestFresh(options: string[]): number {
  const db = join(dir, 'store.db');
  for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
  timed([...BIN_ARGS, 'farms', 'import', join(dir, 'farms.csv'), '--db', db]);
  return timed([...BIN_ARGS, 'ingest', runsDir, '--db', db, ...options]);
}
for (let round = 1; round <= ROUNDS; round++) {
  split.push(timed([SPLIT, runsDir]));
  ingest.push(ingestFresh([]));
  oneThread.push(ingestFresh(['--ingest-threads', '0']));
  process.stderr.write(
    `round ${round}: ingest ${ingest.at(-1)!.toFixed(2)} s, on one thread ${oneThread.at(-1)!.toFixed(2)} s, read+split ${split.at(-1)!.toFixed(2)} s\n`,
  );
}
const ing = median(ingest);
const one = median(oneThread);
const spl = median(split);
const threads = availableParallelism();
console.log(`forecastd ingest benchmark: ${FILES} files x 1441 rows, ${(bytes / 1e6).toFixed(1)} MB, ${ROUNDS} rounds (medians)`);
console.log(`forecastd ingest        ${ing.toFixed(2)} s  ${(bytes / 1e6 / ing).toFixed(1)} MB/s  (${threads} reading threads, the default here)`);
console.log(`  on one thread         ${one.toFixed(2)} s  ${(bytes / 1e6 / one).toFixed(1)} MB/s  (--ingest-threads 0)`);
console.log(`read + split (Node)     ${spl.toFixed(2)} s  ${(bytes / 1e6 / spl).toFixed(1)} MB/s`);
console.log(`ratio ingest / split    ${(ing / spl).toFixed(2)}; one thread / split ${(one / spl).toFixed(2)}`);

// The demo generator (what `forecastd demo` and `npm start` run): its 24 sites x 4 runs, against rendering
// the same series as CSV files in the same process.
const demoRuns = demoIssues(BENCH_NOW, 4);
let t0 = performance.now();
const generated = DEMO_SITES.flatMap((site) => demoRuns.map((issueMs) => ({ issueMs, series: demoSeries(site, issueMs, BENCH_SEED) })));
const generateMs = performance.now() - t0;
t0 = performance.now();
for (const g of generated) renderCsv(SeriesView.ofSeries(g.series), g.issueMs, ALL_ELEMENTS);
const renderMs = performance.now() - t0;
console.log(`demo generator          ${generateMs.toFixed(0)} ms for ${generated.length} runs; rendering them as CSV ${renderMs.toFixed(0)} ms (ratio ${(generateMs / renderMs).toFixed(1)})`);
