/**
 * One HTTP benchmark run: forecastd serve --workers 1 on a store (and optionally
 * the ceiling server), server on one core and wrk on the other, rounds
 * alternating between scenarios, medians reported.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_DIR, benchIssues, benchSites, benchStore } from './benchStore.js';
import { BIN, ensureWrk, peakRssMb, startPinned, type Server } from './proc.js';
import { csvPaths, hotPaths, mixedLua } from './requests.js';
import { median, wrk, type Requests, type WrkResult } from './wrk.js';

export const SERVER_CORE = 0;
export const CLIENT_CORE = 1;
const CEILING = fileURLToPath(new URL('../ceilingServer.js', import.meta.url));

export type Scenario = 'ceiling' | 'hot' | 'mixed' | 'csv';

export interface Summary {
  scenario: Scenario;
  rps: number;
  p50ms: number;
  p99ms: number;
  cpuUsPerReq: number;
  non2xx: number;
}

export interface RunOptions {
  sites: number;
  runs: number;
  scenarios: readonly Scenario[];
  rounds: number;
  seconds: number;
  log?: (line: string) => void;
}

export async function httpRun(o: RunOptions): Promise<{ summary: Summary[]; rssMb: number; pageBytes: number }> {
  const log = o.log ?? ((l: string) => process.stderr.write(l + '\n'));
  ensureWrk();
  // BENCH_STORE_URL runs the same load against another store holding the same data (e.g. PostgreSQL after migrate-store).
  const db = process.env.BENCH_STORE_URL ?? (await benchStore(o.sites, o.runs, log));
  const farmIds = benchSites(o.sites).map((s) => s.farmId);
  const issues = benchIssues(o.runs);
  const server = await startPinned(SERVER_CORE, process.execPath, [BIN, 'serve', '--workers', '1', '--port', '0', '--db', db]);
  const servers: Server[] = [server];
  try {
    const page = Buffer.from(await (await fetch(server.base + hotPaths(farmIds)[0])).arrayBuffer());
    const targets = new Map<Scenario, { target: Server; paths: Requests }>();
    for (const name of o.scenarios) {
      if (name === 'ceiling') {
        const pageFile = join(BENCH_DIR, 'ceiling-page.json');
        writeFileSync(pageFile, page);
        const ceiling = await startPinned(SERVER_CORE, process.execPath, [CEILING, pageFile]);
        servers.push(ceiling);
        targets.set(name, { target: ceiling, paths: ['/'] });
      } else if (name === 'hot') targets.set(name, { target: server, paths: hotPaths(farmIds) });
      else if (name === 'mixed') targets.set(name, { target: server, paths: { lua: mixedLua(farmIds, issues) } });
      else targets.set(name, { target: server, paths: csvPaths(farmIds, issues, 5_000) });
    }
    log(`store ${o.sites} sites x ${o.runs} runs; page ${page.length} bytes; warming up`);
    for (const [name, t] of targets) {
      await wrk(t.target.base, `${o.sites}-${name}`, t.paths, { core: CLIENT_CORE, serverPid: t.target.child.pid!, seconds: 3 });
    }
    const results = new Map<Scenario, WrkResult[]>(o.scenarios.map((s) => [s, []]));
    for (let round = 1; round <= o.rounds; round++) {
      for (const [name, t] of targets) {
        const r = await wrk(t.target.base, `${o.sites}-${name}`, t.paths, {
          core: CLIENT_CORE,
          serverPid: t.target.child.pid!,
          seconds: o.seconds,
          seed: round,
        });
        results.get(name)!.push(r);
        log(
          `round ${round} ${name.padEnd(7)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50ms.toFixed(2)} ms  ` +
            `p99 ${r.p99ms.toFixed(2)} ms  ${r.cpuUs.toFixed(1)} µs CPU/req  non-2xx ${r.non2xx}`,
        );
      }
    }
    const rssMb = peakRssMb(server.child.pid!);
    const summary = o.scenarios.map((name) => {
      const rs = results.get(name)!;
      return {
        scenario: name,
        rps: median(rs.map((r) => r.rps)),
        p50ms: median(rs.map((r) => r.p50ms)),
        p99ms: median(rs.map((r) => r.p99ms)),
        cpuUsPerReq: median(rs.map((r) => r.cpuUs)),
        non2xx: rs.reduce((a, r) => a + r.non2xx + r.errors, 0),
      };
    });
    return { summary, rssMb, pageBytes: page.length };
  } finally {
    for (const s of servers) await s.stop();
  }
}
