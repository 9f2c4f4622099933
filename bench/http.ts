/**
 * npm run bench: forecastd serve --workers 1 against the ceiling (a bare Fastify
 * server sending one real page's precomputed bytes), server on core 0 and wrk on
 * core 1, three rounds alternating ceiling / hot / mixed / csv, medians reported.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_DIR, benchIssues, benchSites, benchStore } from './lib/benchStore.js';
import { ensureWrk, peakRssMb, startPinned, type Server } from './lib/proc.js';
import { csvPaths, hotPaths, mixedPaths } from './lib/requests.js';
import { median, wrk, type WrkResult } from './lib/wrk.js';

const SITES = Number(process.env.BENCH_SITES ?? 200);
const RUNS = Number(process.env.BENCH_RUNS ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SERVER_CORE = 0;
const CLIENT_CORE = 1;

const BIN = fileURLToPath(new URL('../../bin/forecastd.js', import.meta.url));
const CEILING = fileURLToPath(new URL('./ceilingServer.js', import.meta.url));

async function main(): Promise<void> {
  ensureWrk();
  const db = await benchStore(SITES, RUNS);
  const farmIds = benchSites(SITES).map((s) => s.farmId);
  const issues = benchIssues(RUNS);
  const server = await startPinned(SERVER_CORE, process.execPath, [BIN, 'serve', '--workers', '1', '--port', '0', '--db', db]);
  const page = Buffer.from(await (await fetch(server.base + hotPaths(farmIds)[0])).arrayBuffer());
  const pageFile = join(BENCH_DIR, 'ceiling-page.json');
  writeFileSync(pageFile, page);
  const ceiling = await startPinned(SERVER_CORE, process.execPath, [CEILING, pageFile]);

  const scenarios: { name: string; target: Server; paths: string[] }[] = [
    { name: 'ceiling', target: ceiling, paths: ['/'] },
    { name: 'hot', target: server, paths: hotPaths(farmIds) },
    { name: 'mixed', target: server, paths: mixedPaths(farmIds, issues, 20_000) },
    { name: 'csv', target: server, paths: csvPaths(farmIds, issues, 5_000) },
  ];
  const results = new Map<string, WrkResult[]>(scenarios.map((s) => [s.name, []]));
  process.stderr.write(`store ${SITES} sites x ${RUNS} runs; page ${page.length} bytes; warming up\n`);
  for (const s of scenarios) {
    await wrk(s.target.base, s.name, s.paths, { core: CLIENT_CORE, serverPid: s.target.child.pid!, seconds: 3 });
  }
  for (let round = 1; round <= ROUNDS; round++) {
    for (const s of scenarios) {
      const r = await wrk(s.target.base, s.name, s.paths, {
        core: CLIENT_CORE,
        serverPid: s.target.child.pid!,
        seconds: SECONDS,
        seed: round,
      });
      results.get(s.name)!.push(r);
      process.stderr.write(
        `round ${round} ${s.name.padEnd(7)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50ms.toFixed(2)} ms  ` +
          `p99 ${r.p99ms.toFixed(2)} ms  ${r.cpuUs.toFixed(1)} µs CPU/req  non-2xx ${r.non2xx}\n`,
      );
    }
  }
  const rss = peakRssMb(server.child.pid!);
  await server.stop();
  await ceiling.stop();

  const summary = scenarios.map((s) => {
    const rs = results.get(s.name)!;
    return {
      scenario: s.name,
      rps: median(rs.map((r) => r.rps)),
      p50ms: median(rs.map((r) => r.p50ms)),
      p99ms: median(rs.map((r) => r.p99ms)),
      cpuUsPerReq: median(rs.map((r) => r.cpuUs)),
      non2xx: rs.reduce((a, r) => a + r.non2xx + r.errors, 0),
    };
  });
  const ceil = summary[0]!.rps;
  console.log(`\nforecastd HTTP benchmark: ${SITES} sites x ${RUNS} runs, wrk -t1 -c32 -d${SECONDS}s, ${ROUNDS} rounds (medians)`);
  console.log('scenario    req/s   ratio   p50 ms   p99 ms   CPU µs/req   non-2xx');
  for (const s of summary) {
    console.log(
      `${s.scenario.padEnd(8)} ${s.rps.toFixed(0).padStart(8)}   ${(s.rps / ceil).toFixed(2)}  ${s.p50ms.toFixed(2).padStart(7)}  ` +
        `${s.p99ms.toFixed(2).padStart(7)}  ${s.cpuUsPerReq.toFixed(1).padStart(11)}   ${s.non2xx}`,
    );
  }
  console.log(`server peak RSS ${rss.toFixed(0)} MB; ceiling page ${page.length} bytes`);
  writeFileSync(join(BENCH_DIR, 'http-results.json'), JSON.stringify({ sites: SITES, runs: RUNS, summary, rssMb: rss }, null, 2));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
