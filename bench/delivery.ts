/**
 * npm run bench:delivery: what a delivery costs the customers of a busy server. One forecastd serve on the
 * 10,000-site x 2-run store of bench:scale (a copy, since the delivery writes to it) answers hot load until
 * its caches hold the hot pages; its steady hot rate is measured. Then another process writes a new run of
 * every site (one commit per site, as `forecastd ingest` does) while the load goes on in windows of 1 s,
 * and goes on for a while after the last commit, while the new latest pages are rendered and kept.
 * Prints req/s by window, the median during the delivery against the steady rate measured in the same run,
 * and how long after the delivery the rate is back within a tenth of it. BENCH_LARGE_SITES.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_DIR, BENCH_NOW, benchSites, benchStore } from './lib/benchStore.js';
import { CLIENT_CORE, SERVER_CORE, startServe } from './lib/httpRun.js';
import { cpuSeconds, ensureWrk } from './lib/proc.js';
import { hotPaths } from './lib/requests.js';
import { median, wrk } from './lib/wrk.js';
import { demoIssues, RUN_INTERVAL_MS } from '../src/demo/sites.js';

const SITES = Number(process.env.BENCH_LARGE_SITES ?? 10_000);
/** Windows of load after the last commit: the new hot pages are rendered and kept meanwhile. */
const AFTER_S = 15;

ensureWrk();
const source = await benchStore(SITES, 2);
const db = join(BENCH_DIR, `delivery-${SITES}.db`);
const removeCopy = (): void => {
  for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, { force: true });
};
removeCopy();
copyFileSync(source, db);
// The run after the newest the store holds, on the same schedule.
const nextIssueMs = demoIssues(BENCH_NOW, 1)[0]! + RUN_INTERVAL_MS;
const farmIds = benchSites(SITES).map((s) => s.farmId);

const server = await startServe(db);
try {
  const hot = hotPaths(farmIds);
  const pid = server.child.pid!;
  const load = (seconds: number, seed: number) => wrk(server.base, `${SITES}-delivery`, hot, { core: CLIENT_CORE, serverPid: pid, seconds, seed });
  await load(12, 0);
  const steady = await load(5, 1);
  console.log(`forecastd delivery benchmark: ${SITES} sites, hot load (wrk -t1 -c32) while another process writes a new run of every site`);
  console.log(`steady hot load before the delivery: ${steady.rps.toFixed(0)} req/s, ${steady.cpuUs.toFixed(1)} µs CPU/req`);

  const writer = spawn('taskset', ['-c', String(CLIENT_CORE), process.execPath, fileURLToPath(new URL('./deliveryWriter.js', import.meta.url)), db, String(SITES), String(nextIssueMs)], { stdio: 'inherit' });
  let writing = true;
  const written = new Promise<void>((resolve, reject) =>
    writer.once('exit', (code) => {
      writing = false;
      if (code === 0) resolve();
      else reject(new Error(`the delivery writer exited with ${code}`));
    }),
  );
  const t0 = performance.now();
  const during: number[] = [];
  const cpu0 = cpuSeconds(pid);
  let requests = 0;
  let seed = 2;
  while (writing) {
    const r = await load(1, seed++);
    during.push(r.rps);
    requests += r.requests;
  }
  await written;
  const deliveryS = (performance.now() - t0) / 1000;
  const cpuDuring = ((cpuSeconds(pid) - cpu0) / requests) * 1e6;
  const after: number[] = [];
  for (let i = 0; i < AFTER_S; i++) after.push((await load(1, seed++)).rps);
  const k = (xs: number[]): string => xs.map((x) => (x / 1000).toFixed(0)).join(' ');
  console.log(`the delivery: ${SITES} runs committed in ${deliveryS.toFixed(1)} s`);
  console.log(`k req/s by second during it: ${k(during)}`);
  console.log(`k req/s by second after it:  ${k(after)}`);
  const back = after.findIndex((x) => x >= 0.9 * steady.rps);
  console.log(
    `during the delivery: median ${median(during).toFixed(0)} req/s, ${cpuDuring.toFixed(1)} µs CPU/req; ` +
      `ratio to the steady rate ${(median(during) / steady.rps).toFixed(2)}`,
  );
  console.log(back < 0 ? `after the delivery: not back within a tenth of the steady rate in ${AFTER_S} s` : `after the delivery: back within a tenth of the steady rate in ${back + 1} s`);
} finally {
  await server.stop();
  removeCopy();
}
