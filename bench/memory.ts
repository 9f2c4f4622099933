/**
 * npm run bench:memory: the peak RSS of one serving process with the default --cache-mb once every cache is
 * full, on the 10,000-site x 2-run store of bench:scale. Hot load fills the body cache with the hot pages;
 * each mixed load is run twice with the same seed, so that its answers are seen twice and kept (a one-off
 * answer never is), pushing bodies through the cache and runs through the run cache; hot load between them
 * brings back the hot pages that were pushed out. Prints, after each phase, the peak RSS (VmHWM) and what
 * /metrics says of V8's heap and external memory. BENCH_LARGE_SITES, BENCH_RUNS, BENCH_SECONDS.
 */
import { benchIssues, benchSites, benchStore } from './lib/benchStore.js';
import { CLIENT_CORE, SERVER_CORE, startServe } from './lib/httpRun.js';
import { ensureWrk, peakRssMb } from './lib/proc.js';
import { hotPaths, mixedLua } from './lib/requests.js';
import { wrk } from './lib/wrk.js';

const SITES = Number(process.env.BENCH_LARGE_SITES ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 2);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const TARGET_MB = 500;
/** Each mixed seed twice: the second pass's answers are kept. */
const PHASES = ['hot', 'mixed 1', 'mixed 1', 'mixed 2', 'mixed 2', 'hot', 'mixed 3', 'mixed 3', 'hot'];

ensureWrk();
const db = await benchStore(SITES, RUNS);
const server = await startServe(db);
try {
  const farmIds = benchSites(SITES).map((s) => s.farmId);
  const hot = hotPaths(farmIds);
  const mixed = { lua: mixedLua(farmIds, benchIssues(RUNS)) };
  const metric = (text: string, name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
  console.log(`forecastd memory benchmark: ${SITES} sites x ${RUNS} runs, default --cache-mb, phases of ${SECONDS} s`);
  console.log('phase       req/s   CPU µs/req  peak RSS MB  heap MB  external MB');
  let peak = 0;
  for (const phase of PHASES) {
    const [scenario, seed] = phase.split(' ');
    const r = await wrk(server.base, phase, scenario === 'hot' ? hot : mixed, { core: CLIENT_CORE, serverPid: server.child.pid!, seconds: SECONDS, seed: Number(seed ?? 1) });
    const m = await (await fetch(`${server.base}/metrics`)).text();
    peak = peakRssMb(server.child.pid!);
    console.log(
      `${phase.padEnd(9)} ${r.rps.toFixed(0).padStart(7)} ${r.cpuUs.toFixed(1).padStart(12)} ${peak.toFixed(0).padStart(12)} ` +
        `${metric(m, 'nodejs_heap_size_total_bytes').toFixed(0).padStart(8)} ${metric(m, 'nodejs_external_memory_bytes').toFixed(0).padStart(12)}`,
    );
  }
  console.log(`peak RSS with every cache full: ${peak.toFixed(0)} MB (target <= ${TARGET_MB} MB)`);
} finally {
  await server.stop();
}
