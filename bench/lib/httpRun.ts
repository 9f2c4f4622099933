/**
 * One HTTP benchmark run: forecastd serve --workers 1 on a store (and optionally
 * the ceiling server), server on one core and wrk on the other, rounds
 * alternating between scenarios, medians reported.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_DIR, benchIssues, benchSites, benchStore } from './benchStore.js';
import { BIN, ensureWrk, nodeFlagsOf, peakRssMb, startPinned, type Server } from './proc.js';
import { csvPaths, hotPaths, mixedLua } from './requests.js';
import { median, wrk, type Requests, type WrkResult } from './wrk.js';

export const SERVER_CORE = 0;
export const CLIENT_CORE = 1;
const CEILING = fileURLToPath(new URL('../ceilingServer.js', import.meta.url));

export type Scenario = 'ceiling' | 'hot' | 'mixed' | 'csv';

/**
 * The ceiling: node:http on the server core replying to every request with `body`, kept in
 * BENCH_DIR/ceiling-NAME (bench/ceilingServer.ts).
 */
export function startCeiling(name: string, body: Uint8Array, contentType?: string): Promise<Server> {
  const file = join(BENCH_DIR, `ceiling-${name}`);
  writeFileSync(file, body);
  return startPinned(SERVER_CORE, process.execPath, [CEILING, file, ...(contentType === undefined ? [] : [contentType])]);
}

/**
 * forecastd serve as every benchmark measures it: one process on the server core, any free port, the store
 * `db`, then `args`; `bin` is another tree's executable (bench:compare), started with the node flags its
 * first line names.
 */
export function startServe(db: string, args: readonly string[] = [], env: NodeJS.ProcessEnv = {}, bin = BIN): Promise<Server> {
  return startPinned(SERVER_CORE, process.execPath, [...nodeFlagsOf(bin), bin, 'serve', '--workers', '1', '--port', '0', '--db', db, ...args], env);
}

export interface Summary {
  /** A Scenario, or the name of a Variant. */
  scenario: string;
  rps: number;
  p50ms: number;
  p99ms: number;
  cpuUsPerReq: number;
  non2xx: number;
  /** Medians of each probe's growth per request, for variants with probes. */
  probes?: Record<string, number>;
}

/**
 * One more scenario served by its own forecastd serve (same store, same core,
 * extra options), loaded with the requests of `load` and `headers` on every
 * request. It takes its turn in each round after the scenarios, in the order given.
 */
export interface Variant {
  name: string;
  load: Exclude<Scenario, 'ceiling'>;
  /** Options of forecastd serve after --workers 1 --port 0 --db STORE. */
  serveArgs: readonly string[];
  /** "Name: value" headers sent with every request. */
  headers?: readonly string[];
  /**
   * Cumulative counters read around every measured run (e.g. another process's
   * CPU µs), given the variant's server process id; reported as growth per request.
   */
  probes?: Record<string, (serverPid: number) => Promise<number>>;
  /** Called once its server listens, before the warm-up (e.g. to see that it refuses what it should). */
  check?: (base: string) => Promise<void>;
}

export interface RunOptions {
  sites: number;
  runs: number;
  scenarios: readonly Scenario[];
  rounds: number;
  seconds: number;
  log?: (line: string) => void;
  /** Options of the main forecastd serve (hot, mixed, csv) after --workers 1 --port 0 --db STORE. */
  serveArgs?: readonly string[];
  variants?: readonly Variant[];
}

export async function httpRun(
  o: RunOptions,
): Promise<{ summary: Summary[]; rssMb: number; pageBytes: number; variantRssMb: Record<string, number> }> {
  const log = o.log ?? ((l: string) => process.stderr.write(l + '\n'));
  ensureWrk();
  // BENCH_STORE_URL runs the same load against another store holding the same data (e.g. PostgreSQL after migrate-store).
  const db = process.env.BENCH_STORE_URL ?? (await benchStore(o.sites, o.runs, log));
  const farmIds = benchSites(o.sites).map((s) => s.farmId);
  const issues = benchIssues(o.runs);
  const serve = (args: readonly string[]): Promise<Server> => startServe(db, args);
  const server = await serve(o.serveArgs ?? []);
  const servers: Server[] = [server];
  try {
    const page = Buffer.from(await (await fetch(server.base + hotPaths(farmIds)[0])).arrayBuffer());
    type Target = { target: Server; paths: Requests; headers?: readonly string[]; probes?: Variant['probes'] };
    const targets = new Map<string, Target>();
    const load = (name: Exclude<Scenario, 'ceiling'>): Requests =>
      name === 'hot' ? hotPaths(farmIds) : name === 'mixed' ? { lua: mixedLua(farmIds, issues) } : csvPaths(farmIds, issues, 5_000);
    for (const name of o.scenarios) {
      if (name === 'ceiling') {
        const ceiling = await startCeiling('page.json', page);
        servers.push(ceiling);
        targets.set(name, { target: ceiling, paths: ['/'] });
      } else targets.set(name, { target: server, paths: load(name) });
    }
    const variantServers = new Map<string, Server>();
    for (const v of o.variants ?? []) {
      if (targets.has(v.name)) throw new Error(`variant "${v.name}" has the name of a scenario`);
      const s = await serve(v.serveArgs);
      servers.push(s);
      variantServers.set(v.name, s);
      await v.check?.(s.base);
      targets.set(v.name, { target: s, paths: load(v.load), headers: v.headers, probes: v.probes });
    }
    log(`store ${o.sites} sites x ${o.runs} runs; page ${page.length} bytes; warming up`);
    for (const [name, t] of targets) {
      await wrk(t.target.base, `${o.sites}-${name}`, t.paths, { core: CLIENT_CORE, serverPid: t.target.child.pid!, seconds: 3, headers: t.headers });
    }
    const readProbes = async (t: Target): Promise<Record<string, number>> => {
      const out: Record<string, number> = {};
      for (const [k, f] of Object.entries(t.probes ?? {})) out[k] = await f(t.target.child.pid!);
      return out;
    };
    const results = new Map<string, WrkResult[]>([...targets.keys()].map((s) => [s, []]));
    const probeResults = new Map<string, Record<string, number>[]>([...targets.keys()].map((s) => [s, []]));
    for (let round = 1; round <= o.rounds; round++) {
      for (const [name, t] of targets) {
        const before = await readProbes(t);
        const r = await wrk(t.target.base, `${o.sites}-${name}`, t.paths, {
          core: CLIENT_CORE,
          serverPid: t.target.child.pid!,
          seconds: o.seconds,
          seed: round,
          headers: t.headers,
        });
        const after = await readProbes(t);
        const perRequest = Object.fromEntries(Object.keys(after).map((k) => [k, (after[k]! - before[k]!) / r.requests]));
        results.get(name)!.push(r);
        probeResults.get(name)!.push(perRequest);
        log(
          `round ${round} ${name.padEnd(7)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50ms.toFixed(2)} ms  ` +
            `p99 ${r.p99ms.toFixed(2)} ms  ${r.cpuUs.toFixed(1)} µs CPU/req  non-2xx ${r.non2xx}` +
            Object.entries(perRequest)
              .map(([k, v]) => `  ${k} ${v.toPrecision(3)}/req`)
              .join(''),
        );
      }
    }
    const rssMb = peakRssMb(server.child.pid!);
    const variantRssMb = Object.fromEntries([...variantServers].map(([name, s]) => [name, peakRssMb(s.child.pid!)]));
    const summary = [...targets.keys()].map((name): Summary => {
      const rs = results.get(name)!;
      const ps = probeResults.get(name)!;
      const keys = Object.keys(ps[0] ?? {});
      return {
        scenario: name,
        rps: median(rs.map((r) => r.rps)),
        p50ms: median(rs.map((r) => r.p50ms)),
        p99ms: median(rs.map((r) => r.p99ms)),
        cpuUsPerReq: median(rs.map((r) => r.cpuUs)),
        non2xx: rs.reduce((a, r) => a + r.non2xx + r.errors, 0),
        ...(keys.length > 0 ? { probes: Object.fromEntries(keys.map((k) => [k, median(ps.map((p) => p[k]!))])) } : {}),
      };
    });
    return { summary, rssMb, pageBytes: page.length, variantRssMb };
  } finally {
    for (const s of servers) await s.stop();
  }
}
