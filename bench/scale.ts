/**
 * npm run bench:scale: hot and mixed at 2,000 sites x 4 runs against 200 x 4,
 * to show how the cost per request grows with the store. One server per store,
 * both started at once and pinned to the same core; the rounds alternate
 * between them (small hot, large hot, small mixed, large mixed, ...), so that a
 * machine whose speed drifts affects both stores alike.
 */
import { BENCH_DIR, benchIssues, benchSites, benchStore } from './lib/benchStore.js';
import { CLIENT_CORE, SERVER_CORE } from './lib/httpRun.js';
import { BIN_ARGS, ensureWrk, peakRssMb, startPinned, type Server } from './lib/proc.js';
import { hotPaths, mixedLua } from './lib/requests.js';
import { median, wrk, type Requests, type WrkResult } from './lib/wrk.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SMALL = Number(process.env.BENCH_SMALL_SITES ?? 200);
const LARGE = Number(process.env.BENCH_LARGE_SITES ?? 2000);
const RUNS = 4;
const SCENARIOS = ['hot', 'mixed'] as const;

ensureWrk();
const sizes = [SMALL, LARGE];
const servers = new Map<number, Server>();
try {
  const load = new Map<number, Record<(typeof SCENARIOS)[number], Requests>>();
  for (const sites of sizes) {
    const db = await benchStore(sites, RUNS);
    servers.set(sites, await startPinned(SERVER_CORE, process.execPath, [...BIN_ARGS, 'serve', '--workers', '1', '--port', '0', '--db', db]));
    const farmIds = benchSites(sites).map((s) => s.farmId);
    load.set(sites, { hot: hotPaths(farmIds), mixed: { lua: mixedLua(farmIds, benchIssues(RUNS)) } });
  }
  const run = (sites: number, scenario: (typeof SCENARIOS)[number], seconds: number, seed?: number): Promise<WrkResult> => {
    const server = servers.get(sites)!;
    return wrk(server.base, `${sites}-${scenario}`, load.get(sites)![scenario], {
      core: CLIENT_CORE,
      serverPid: server.child.pid!,
      seconds,
      seed,
    });
  };
  process.stderr.write(`stores under ${BENCH_DIR}; warming up\n`);
  for (const scenario of SCENARIOS) for (const sites of sizes) await run(sites, scenario, 3);
  const results = new Map<string, WrkResult[]>();
  for (let round = 1; round <= ROUNDS; round++) {
    for (const scenario of SCENARIOS) {
      for (const sites of sizes) {
        const r = await run(sites, scenario, SECONDS, round);
        const key = `${scenario}@${sites}`;
        results.set(key, [...(results.get(key) ?? []), r]);
        process.stderr.write(
          `round ${round} ${scenario.padEnd(5)} @${String(sites).padEnd(5)} ${r.rps.toFixed(0).padStart(7)} req/s  p99 ${r.p99ms.toFixed(2)} ms  ` +
            `${r.cpuUs.toFixed(1)} µs CPU/req  non-2xx ${r.non2xx + r.errors}\n`,
        );
      }
    }
  }
  const med = (scenario: string, sites: number, f: (r: WrkResult) => number): number => median(results.get(`${scenario}@${sites}`)!.map(f));
  console.log(`\nforecastd scale benchmark: ${SMALL} vs ${LARGE} sites x ${RUNS} runs, wrk -t1 -c32 -d${SECONDS}s, ${ROUNDS} alternating rounds (medians)`);
  console.log(`scenario  CPU µs/req @${SMALL}  CPU µs/req @${LARGE}  growth   req/s @${SMALL}  req/s @${LARGE}`);
  for (const scenario of SCENARIOS) {
    const a = med(scenario, SMALL, (r) => r.cpuUs);
    const b = med(scenario, LARGE, (r) => r.cpuUs);
    console.log(
      `${scenario.padEnd(8)} ${a.toFixed(1).padStart(16)} ${b.toFixed(1).padStart(18)}  ${((b / a - 1) * 100).toFixed(1).padStart(5)}%` +
        `  ${med(scenario, SMALL, (r) => r.rps).toFixed(0).padStart(11)}  ${med(scenario, LARGE, (r) => r.rps).toFixed(0).padStart(12)}`,
    );
  }
  console.log(`peak RSS: ${sizes.map((s) => `${peakRssMb(servers.get(s)!.child.pid!).toFixed(0)} MB @${s}`).join(', ')}`);
} finally {
  for (const s of servers.values()) await s.stop();
}
