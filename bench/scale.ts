/**
 * npm run bench:scale: hot and mixed at 10,000 sites x 2 runs against 200 x 2, and the ceiling (node:http
 * replying with a real page's precomputed bytes), in one run. One server per store and the ceiling, all
 * started at once and pinned to the same core, wrk on the other; the rounds alternate between them
 * (ceiling, small hot, large hot, small mixed, large mixed, ...), so that a machine whose speed drifts
 * affects all alike. BENCH_SMALL_SITES, BENCH_LARGE_SITES, BENCH_RUNS, BENCH_SECONDS, BENCH_ROUNDS.
 */
import { BENCH_DIR, benchIssues, benchSites, benchStore } from './lib/benchStore.js';
import { copyReads, copyReadsText } from './lib/runCopies.js';
import { CLIENT_CORE, startCeiling, startServe } from './lib/httpRun.js';
import { ensureWrk, peakRssMb, type Server } from './lib/proc.js';
import { hotPaths, mixedLua } from './lib/requests.js';
import { median, wrk, type Requests, type WrkResult } from './lib/wrk.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SMALL = Number(process.env.BENCH_SMALL_SITES ?? 200);
const LARGE = Number(process.env.BENCH_LARGE_SITES ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 2);
const SCENARIOS = ['hot', 'mixed'] as const;

ensureWrk();
const sizes = [SMALL, LARGE];
const servers = new Map<number, Server>();
let ceiling: Server | undefined;
try {
  const load = new Map<number, Record<(typeof SCENARIOS)[number], Requests>>();
  for (const sites of sizes) {
    const db = await benchStore(sites, RUNS);
    servers.set(sites, await startServe(db));
    const farmIds = benchSites(sites).map((s) => s.farmId);
    load.set(sites, { hot: hotPaths(farmIds), mixed: { lua: mixedLua(farmIds, benchIssues(RUNS)) } });
  }
  // The ceiling answers every request with the bytes of a real hot page.
  const small = servers.get(SMALL)!;
  ceiling = await startCeiling('scale-page.json', Buffer.from(await (await fetch(small.base + (load.get(SMALL)!.hot as string[])[0])).arrayBuffer()));
  const runCeiling = (seconds: number, seed?: number): Promise<WrkResult> =>
    wrk(ceiling!.base, 'ceiling', ['/'], { core: CLIENT_CORE, serverPid: ceiling!.child.pid!, seconds, seed });
  /** The round's result, and how its server read runs' copies on disk meanwhile (printed with the round). */
  const copies = new Map<WrkResult, string>();
  const run = async (sites: number, scenario: (typeof SCENARIOS)[number], seconds: number, seed?: number): Promise<WrkResult> => {
    const server = servers.get(sites)!;
    const before = await copyReads(server.base);
    const r = await wrk(server.base, `${sites}-${scenario}`, load.get(sites)![scenario], { core: CLIENT_CORE, serverPid: server.child.pid!, seconds, seed });
    copies.set(r, copyReadsText(before, await copyReads(server.base)));
    return r;
  };
  process.stderr.write(`stores under ${BENCH_DIR}; warming up\n`);
  await runCeiling(3);
  // Long enough for the large store's hot set to be seen twice (the body cache admits on the second sighting).
  for (const scenario of SCENARIOS) for (const sites of sizes) await run(sites, scenario, sites > 1000 ? 10 : 3);
  const results = new Map<string, WrkResult[]>();
  const record = (key: string, r: WrkResult, round: number): void => {
    results.set(key, [...(results.get(key) ?? []), r]);
    process.stderr.write(
      `round ${round} ${key.padEnd(12)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50ms.toFixed(2)} p90 ${r.p90ms.toFixed(2)} ` +
        `p99 ${r.p99ms.toFixed(2)} p99.9 ${r.p999ms.toFixed(2)} max ${r.maxMs.toFixed(1)} ms  ` +
        `${r.cpuUs.toFixed(1)} µs CPU/req  disk ${r.diskReadMb.toFixed(1)} MB  non-2xx ${r.non2xx + r.errors}${copies.get(r) ?? ''}\n`,
    );
  };
  for (let round = 1; round <= ROUNDS; round++) {
    record('ceiling', await runCeiling(SECONDS, round), round);
    for (const scenario of SCENARIOS) for (const sites of sizes) record(`${scenario}@${sites}`, await run(sites, scenario, SECONDS, round), round);
  }
  const med = (key: string, f: (r: WrkResult) => number): number => median(results.get(key)!.map(f));
  const distribution = (key: string): string =>
    [med(key, (r) => r.p50ms), med(key, (r) => r.p90ms), med(key, (r) => r.p99ms), med(key, (r) => r.p999ms), med(key, (r) => r.maxMs)]
      .map((v) => v.toFixed(2))
      .join(' / ');
  const ceilRps = med('ceiling', (r) => r.rps);
  const ceilP99 = med('ceiling', (r) => r.p99ms);
  const p99Target = Math.max(3, 2 * ceilP99);
  console.log(`\nforecastd scale benchmark: ${SMALL} vs ${LARGE} sites x ${RUNS} runs, wrk -t1 -c32 -d${SECONDS}s, ${ROUNDS} alternating rounds (medians)`);
  console.log(`ceiling (node:http, precomputed page): ${ceilRps.toFixed(0)} req/s, ${med('ceiling', (r) => r.cpuUs).toFixed(1)} µs CPU/req, latency ${distribution('ceiling')}`);
  console.log('latency in ms: p50 / p90 / p99 / p99.9 / max (each the median over the rounds)');
  console.log('disk: MB the server read from storage in the round (store pages the host had reclaimed), the median');
  console.log('scenario   sites   req/s  ÷ceiling  CPU µs/req  (event loop)  disk MB  latency');
  for (const scenario of SCENARIOS) {
    for (const sites of sizes) {
      const key = `${scenario}@${sites}`;
      const rps = med(key, (r) => r.rps);
      console.log(
        `${scenario.padEnd(8)} ${String(sites).padStart(7)} ${rps.toFixed(0).padStart(7)}  ${(rps / ceilRps).toFixed(2).padStart(8)}  ` +
          `${med(key, (r) => r.cpuUs).toFixed(1).padStart(10)}  ${`(${med(key, (r) => r.loopCpuUs).toFixed(1)})`.padStart(12)}  ` +
          `${med(key, (r) => r.diskReadMb).toFixed(1).padStart(7)}  ${distribution(key)}`,
      );
    }
  }
  for (const scenario of SCENARIOS) {
    const growth = med(`${scenario}@${LARGE}`, (r) => r.cpuUs) / med(`${scenario}@${SMALL}`, (r) => r.cpuUs);
    console.log(`${scenario}: CPU per request at ${LARGE} sites is ${growth.toFixed(2)} x that at ${SMALL} (target <= ${scenario === 'hot' ? '1.5' : '2'})`);
  }
  console.log(`p99 target: <= ${p99Target.toFixed(2)} ms (max of 3 ms and twice the ceiling's p99)`);
  console.log(`peak RSS: ${sizes.map((s) => `${peakRssMb(servers.get(s)!.child.pid!).toFixed(0)} MB @${s}`).join(', ')} (target <= 500 MB)`);
} finally {
  for (const s of servers.values()) await s.stop();
  await ceiling?.stop();
}
