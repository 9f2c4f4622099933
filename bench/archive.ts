/**
 * npm run bench:archive: the CSV channel.
 *  - The bulk download of one run (GET /api/v1/forecast/archive) against node:http sending the same archive's
 *    bytes from memory, by curl: MB/s of CSV, server CPU per GB, the server's peak RSS.
 *  - Whole-run CSV downloads (format=csv, a random site and run each) against node:http sending one whole-run
 *    CSV from memory, by wrk -c32: req/s and the ratio.
 * The run's first download (every entry rendered) is timed on its own; the rounds read the entries it kept.
 * Servers on one core, the client on the other, rounds alternating. BENCH_SITES (default 2000) sites x 2 runs;
 * BENCH_ROUNDS (default 3), BENCH_SECONDS (default 10) per wrk measurement.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchIssues, benchSites, benchStore } from './lib/benchStore.js';
import { CLIENT_CORE, startCeiling, startServe } from './lib/httpRun.js';
import { cpuSeconds, ensureWrk, peakRssMb, type Server } from './lib/proc.js';
import { csvPaths } from './lib/requests.js';
import { median, wrk } from './lib/wrk.js';

const SITES = Number(process.env.BENCH_SITES ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const RUNS = 2;

interface Download {
  bytes: number;
  seconds: number;
  cpuSeconds: number;
}

/** One download by curl on the client core, body discarded or kept in `file`; the server's CPU time is read around it. */
function download(server: Server, path: string, file = '/dev/null'): Download {
  const cpu0 = cpuSeconds(server.child.pid!);
  const out = execFileSync('taskset', ['-c', String(CLIENT_CORE), 'curl', '-s', '-o', file, '-w', '%{http_code} %{size_download} %{time_total}', server.base + path], {
    encoding: 'utf8',
    maxBuffer: 1024 * 1024,
  });
  const [code, bytes, seconds] = out.trim().split(' ');
  if (code !== '200') throw new Error(`${path}: HTTP ${code}`);
  return { bytes: Number(bytes), seconds: Number(seconds), cpuSeconds: cpuSeconds(server.child.pid!) - cpu0 };
}

const db = await benchStore(SITES, RUNS);
const issue = benchIssues(RUNS)[0]!;
const path = `/api/v1/forecast/archive?issue=${issue}`;
const product = await startServe(db);
let ceiling: Server | undefined;
let csvCeiling: Server | undefined;
ensureWrk();
try {
  // The first download of the run renders every entry (and keeps it); the rounds read them back. The ceiling
  // sends exactly the archive the product sends.
  const zipFile = join(tmpdir(), `forecastd-archive-${process.pid}.zip`);
  const first = download(product, path, zipFile);
  const body = readFileSync(zipFile);
  rmSync(zipFile);
  ceiling = await startCeiling(`archive-${SITES}.zip`, body, 'application/zip');
  const csvBytes = csvBytesOf(body);
  const firstRate = csvBytes / 1e6 / first.seconds;
  process.stderr.write(`${SITES} sites, run ${issue}: archive ${(body.length / 1e6).toFixed(1)} MB, ${(csvBytes / 1e6).toFixed(1)} MB of CSV\n`);
  process.stderr.write(`first download: forecastd ${firstRate.toFixed(0)} MB/s of CSV (${first.seconds.toFixed(2)} s, CPU ${first.cpuSeconds.toFixed(2)} s)\n`);
  const rates = { product: [] as number[], ceiling: [] as number[], cpuPerGb: [] as number[] };
  for (let round = 1; round <= ROUNDS; round++) {
    const p = download(product, path);
    const c = download(ceiling, '/');
    if (p.bytes !== body.length || c.bytes !== body.length) throw new Error(`sizes differ: ${p.bytes} ${c.bytes} ${body.length}`);
    rates.product.push(csvBytes / 1e6 / p.seconds);
    rates.ceiling.push(csvBytes / 1e6 / c.seconds);
    rates.cpuPerGb.push(p.cpuSeconds / (csvBytes / 1e9));
    process.stderr.write(`round ${round}: forecastd ${(csvBytes / 1e6 / p.seconds).toFixed(0)} MB/s of CSV (${p.seconds.toFixed(2)} s, CPU ${p.cpuSeconds.toFixed(2)} s); ceiling ${(csvBytes / 1e6 / c.seconds).toFixed(0)} MB/s\n`);
  }
  const mp = median(rates.product);
  const mc = median(rates.ceiling);
  console.log(`\nforecastd bulk download: ${SITES} sites, one run, curl on its own core, ${ROUNDS} alternating rounds (medians)`);
  console.log(`forecastd  ${mp.toFixed(0)} MB/s of CSV   ${median(rates.cpuPerGb).toFixed(2)} CPU s per GB   peak RSS ${peakRssMb(product.child.pid!).toFixed(0)} MB`);
  console.log(`first      ${firstRate.toFixed(0)} MB/s of CSV, ${(first.cpuSeconds / (csvBytes / 1e9)).toFixed(2)} CPU s per GB (the run's first download, every entry rendered)`);
  console.log(`ceiling    ${mc.toFixed(0)} MB/s (node:http sending the same archive from memory)`);
  console.log(`ratio      ${(mp / mc).toFixed(2)} of the ceiling; target >= 200 MB/s of CSV`);

  // Whole-run CSV downloads: random sites and runs from forecastd, one precomputed whole-run CSV from the ceiling.
  const paths = csvPaths(benchSites(SITES).map((s) => s.farmId), benchIssues(RUNS), 4096);
  // By curl: fetch's pooled connection from the archive download above may have been closed by the server meanwhile.
  const csvBody = execFileSync('curl', ['-s', product.base + paths[0]!], { maxBuffer: 16 * 1024 * 1024 });
  csvCeiling = await startCeiling(`archive-${SITES}.csv`, csvBody, 'text/csv; charset=utf-8');
  const csvRuns = { product: [] as number[], ceiling: [] as number[], cpu: [] as number[] };
  await wrk(product.base, 'csv-warm', paths, { core: CLIENT_CORE, serverPid: product.child.pid!, seconds: 3 });
  await wrk(csvCeiling.base, 'csv-ceiling', ['/'], { core: CLIENT_CORE, serverPid: csvCeiling.child.pid!, seconds: 3 });
  for (let round = 1; round <= ROUNDS; round++) {
    const p = await wrk(product.base, 'csv', paths, { core: CLIENT_CORE, serverPid: product.child.pid!, seconds: SECONDS, seed: round });
    const c = await wrk(csvCeiling.base, 'csv-ceiling', ['/'], { core: CLIENT_CORE, serverPid: csvCeiling.child.pid!, seconds: SECONDS, seed: round });
    if (p.non2xx + p.errors > 0) throw new Error(`csv: ${p.non2xx + p.errors} failed requests`);
    csvRuns.product.push(p.rps);
    csvRuns.ceiling.push(c.rps);
    csvRuns.cpu.push(p.cpuUs);
    process.stderr.write(`round ${round}: whole-run CSV ${p.rps.toFixed(0)} req/s (${p.cpuUs.toFixed(0)} µs CPU each, p99 ${p.p99ms.toFixed(1)} ms); ceiling ${c.rps.toFixed(0)} req/s\n`);
  }
  const cp = median(csvRuns.product);
  const cc = median(csvRuns.ceiling);
  console.log(`\nwhole-run CSV downloads (${(csvBody.length / 1e3).toFixed(0)} KB each), wrk -t1 -c32 -d${SECONDS}s, ${ROUNDS} alternating rounds (medians)`);
  console.log(`forecastd  ${cp.toFixed(0)} req/s   ${median(csvRuns.cpu).toFixed(0)} µs CPU per download`);
  console.log(`ceiling    ${cc.toFixed(0)} req/s (node:http sending one whole-run CSV from memory)`);
  console.log(`ratio      ${(cp / cc).toFixed(2)} of the ceiling; target >= 0.25`);
} finally {
  await product.stop();
  await ceiling?.stop();
  await csvCeiling?.stop();
}

/** The CSV bytes in a stored zip: the sizes its central directory lists. */
function csvBytesOf(zip: Buffer): number {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  let at = zip.readUInt32LE(eocd + 16);
  let total = 0;
  while (zip.readUInt32LE(at) === 0x02014b50) {
    total += zip.readUInt32LE(at + 24);
    at += 46 + zip.readUInt16LE(at + 28) + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return total;
}
