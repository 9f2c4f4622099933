/**
 * npm run bench:compare -- REF: the CPU per request of this working tree against
 * an earlier commit, under the same load, the two servers measured alternately
 * (old, new, old, new, ...) so that a machine whose speed drifts from minute to
 * minute affects both alike. Each server is started afresh per round, pinned to
 * core 0, warmed for 3 s, then measured with wrk on core 1.
 *
 * REF is checked out and built as bench/lib/refTree.ts says. Each side serves
 * the bench store as its own code builds it, so that a change of format is
 * measured too.
 *
 * BENCH_SCENARIO: mixed (default) or hot; BENCH_ROUNDS (3), BENCH_SECONDS (5);
 * BENCH_SITES x BENCH_RUNS (200 x 8) picks the store.
 */
import { benchIssues, benchSites, benchStore } from './lib/benchStore.js';
import { BIN, ensureWrk } from './lib/proc.js';
import { refBin, refStore } from './lib/refTree.js';
import { hotPaths, mixedLua } from './lib/requests.js';
import { median, wrk, type Requests } from './lib/wrk.js';
import { CLIENT_CORE, startServe } from './lib/httpRun.js';

const ref = process.argv[2] ?? 'HEAD~1';
const scenario = process.env.BENCH_SCENARIO === 'hot' ? 'hot' : 'mixed';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
ensureWrk();
const SITES = Number(process.env.BENCH_SITES ?? 200);
const RUNS = Number(process.env.BENCH_RUNS ?? 8);
const oldBin = refBin(ref);
const newBin = BIN;
const newDb = process.env.BENCH_STORE_URL ?? (await benchStore(SITES, RUNS));
const oldDb = process.env.BENCH_STORE_URL ?? refStore(oldBin, SITES, RUNS);
const farmIds = benchSites(SITES).map((s) => s.farmId);
const requests: Requests = scenario === 'hot' ? hotPaths(farmIds) : { lua: mixedLua(farmIds, benchIssues(RUNS)) };

const cpu: Record<'old' | 'new', number[]> = { old: [], new: [] };
for (let round = 1; round <= ROUNDS; round++) {
  // Each in turn first: any effect of the order falls on both sides alike.
  for (const which of round % 2 === 1 ? (['old', 'new'] as const) : (['new', 'old'] as const)) {
    const server = await startServe(which === 'old' ? oldDb : newDb, [], {}, which === 'old' ? oldBin : newBin);
    try {
      const o = { core: CLIENT_CORE, serverPid: server.child.pid! };
      await wrk(server.base, `compare-${SITES}-${scenario}`, requests, { ...o, seconds: 3 });
      const r = await wrk(server.base, `compare-${SITES}-${scenario}`, requests, { ...o, seconds: SECONDS, seed: round });
      cpu[which].push(r.cpuUs);
      process.stderr.write(
        `round ${round} ${which} ${r.rps.toFixed(0).padStart(7)} req/s  p99 ${r.p99ms.toFixed(2)} ms  ${r.cpuUs.toFixed(1)} µs CPU/req  non-2xx ${r.non2xx}\n`,
      );
    } finally {
      await server.stop();
    }
  }
}
const pairs = cpu.new.map((n, i) => n / cpu.old[i]!);
console.log(`\n${scenario} on ${SITES} x ${RUNS}: ${ref} against the working tree, ${ROUNDS} alternating rounds of ${SECONDS} s`);
console.log(`CPU µs/req  old ${median(cpu.old).toFixed(1)}  new ${median(cpu.new).toFixed(1)}  (medians)`);
console.log(`new / old by round: ${pairs.map((p) => p.toFixed(2)).join(' ')}; median ${median(pairs).toFixed(2)}`);
