/**
 * npm run bench:variants: servers of this tree that differ in their store, their settings or the sites their
 * load asks for, measured in turn under hot or mixed load (rounds alternate the order), so that a question
 * like "what does a larger store cost when every run is in memory" is answered within one run of a machine
 * whose speed drifts. Prints each round and the medians: CPU per request, the event loop's part, the MB read
 * from storage, p50 and p99.
 *
 * BENCH_VARIANTS: a JSON list of { name, sites, loadSites?, args?, env? } — `sites` picks the bench store
 * (sites x BENCH_RUNS), `loadSites` confines the load to that store's first sites (all by default), `args`
 * are added to `serve`, `env` to its environment. The default is the split of the 10,000-site cost in
 * docs/performance.md: 200 sites; 10,000 sites; 10,000 sites under the 200-site load; 10,000 sites with a
 * run share that holds every run.
 * BENCH_SCENARIO: mixed (default) or hot; BENCH_ROUNDS (4), BENCH_SECONDS (8), BENCH_RUNS (2).
 */
import { benchIssues, benchSites, benchStore } from './lib/benchStore.js';
import { CLIENT_CORE, startServe } from './lib/httpRun.js';
import { copyReads, copyReadsText } from './lib/runCopies.js';
import { ensureWrk, type Server } from './lib/proc.js';
import { hotPaths, mixedLua } from './lib/requests.js';
import { median, wrk, type Requests, type WrkResult } from './lib/wrk.js';

interface Variant {
  readonly name: string;
  readonly sites: number;
  readonly loadSites?: number;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

const DEFAULT_VARIANTS: readonly Variant[] = [
  { name: '200', sites: 200 },
  { name: '10k', sites: 10_000 },
  { name: '10k, 200-site load', sites: 10_000, loadSites: 200 },
  // A sixth of --cache-mb is the run share: 1,800 MB gives 300 MB, more than the 20,000 runs' 273 MB.
  { name: '10k, all runs cached', sites: 10_000, args: ['--cache-mb', '1800'] },
];

const scenario = process.env.BENCH_SCENARIO === 'hot' ? 'hot' : 'mixed';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const RUNS = Number(process.env.BENCH_RUNS ?? 2);

function variants(): Variant[] {
  const text = process.env.BENCH_VARIANTS;
  if (text === undefined) return [...DEFAULT_VARIANTS];
  const list: unknown = JSON.parse(text);
  if (!Array.isArray(list) || list.length === 0) throw new Error('BENCH_VARIANTS must be a non-empty JSON list');
  return list.map((v: Partial<Variant>, i) => {
    if (typeof v.name !== 'string' || !Number.isInteger(v.sites) || v.sites! < 1) throw new Error(`BENCH_VARIANTS[${i}] needs a name and a whole number of sites`);
    if (v.loadSites !== undefined && (!Number.isInteger(v.loadSites) || v.loadSites < 1 || v.loadSites > v.sites!)) {
      throw new Error(`BENCH_VARIANTS[${i}].loadSites must be a whole number from 1 to its sites`);
    }
    return v as Variant;
  });
}

interface Running {
  readonly variant: Variant;
  readonly server: Server;
  readonly load: Requests;
  readonly results: WrkResult[];
}

ensureWrk();
const running: Running[] = [];
try {
  for (const variant of variants()) {
    const db = await benchStore(variant.sites, RUNS);
    const server = await startServe(db, variant.args, variant.env);
    const farmIds = benchSites(variant.loadSites ?? variant.sites).map((s) => s.farmId);
    const load = scenario === 'hot' ? hotPaths(farmIds) : { lua: mixedLua(farmIds, benchIssues(RUNS)) };
    running.push({ variant, server, load, results: [] });
  }
  const measure = (r: Running, seconds: number, seed?: number): Promise<WrkResult> =>
    wrk(r.server.base, `variant-${running.indexOf(r)}`, r.load, { core: CLIENT_CORE, serverPid: r.server.child.pid!, seconds, seed });
  process.stderr.write('warming up\n');
  // Long enough for a large store's runs and pages to be asked for again (the caches keep what is asked twice).
  for (const r of running) await measure(r, (r.variant.loadSites ?? r.variant.sites) > 1000 ? 20 : 5);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const r of round % 2 === 1 ? running : [...running].reverse()) {
      const before = await copyReads(r.server.base);
      const w = await measure(r, SECONDS, round);
      const copies = copyReadsText(before, await copyReads(r.server.base));
      r.results.push(w);
      process.stderr.write(
        `round ${round} ${r.variant.name.padEnd(24)} ${w.cpuUs.toFixed(1).padStart(7)} µs CPU/req (loop ${w.loopCpuUs.toFixed(1)})  ` +
          `disk ${w.diskReadMb.toFixed(1)} MB  p50 ${w.p50ms.toFixed(2)} p99 ${w.p99ms.toFixed(2)} ms  non-2xx ${w.non2xx + w.errors}${copies}\n`,
      );
    }
  }
  const med = (r: Running, f: (w: WrkResult) => number): number => median(r.results.map(f));
  console.log(`\nforecastd variants: ${scenario} load, ${ROUNDS} rounds of ${SECONDS} s, the order alternating (medians)`);
  console.log('variant                   CPU µs/req  (event loop)  disk MB    p50    p99 (ms)');
  for (const r of running) {
    console.log(
      `${r.variant.name.padEnd(24)} ${med(r, (w) => w.cpuUs).toFixed(1).padStart(11)}  ${`(${med(r, (w) => w.loopCpuUs).toFixed(1)})`.padStart(12)}  ` +
        `${med(r, (w) => w.diskReadMb).toFixed(1).padStart(7)}  ${med(r, (w) => w.p50ms).toFixed(2).padStart(5)}  ${med(r, (w) => w.p99ms).toFixed(2).padStart(6)}`,
    );
  }
} finally {
  for (const r of running) await r.server.stop();
}
