/**
 * npm run bench: forecastd serve --workers 1 against the ceiling (a bare Fastify
 * server sending one real page's precomputed bytes), server on core 0 and wrk on
 * core 1, three rounds alternating ceiling / hot / mixed / csv, medians reported.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR } from './lib/benchStore.js';
import { httpRun } from './lib/httpRun.js';

const SITES = Number(process.env.BENCH_SITES ?? 200);
const RUNS = Number(process.env.BENCH_RUNS ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** BENCH_CODINGS=gzip,br: the mixed and csv loads once more per coding, sent with that Accept-Encoding, each on a server of its own. */
const CODINGS = (process.env.BENCH_CODINGS ?? '').split(',').filter((c) => c !== '');

const { summary, rssMb, pageBytes } = await httpRun({
  sites: SITES,
  runs: RUNS,
  scenarios: ['ceiling', 'hot', 'mixed', 'csv'],
  rounds: ROUNDS,
  seconds: SECONDS,
  variants: CODINGS.flatMap((coding) =>
    (['mixed', 'csv'] as const).map((load) => ({ name: `${load}-${coding}`, load, serveArgs: [], headers: [`Accept-Encoding: ${coding}`] })),
  ),
});
const ceil = summary[0]!;
console.log(`\nforecastd HTTP benchmark: ${SITES} sites x ${RUNS} runs, wrk -t1 -c32 -d${SECONDS}s, ${ROUNDS} rounds (medians)`);
console.log('scenario    req/s   ratio   p50 ms   p99 ms   CPU µs/req   ratio CPU   non-2xx');
for (const s of summary) {
  console.log(
    `${s.scenario.padEnd(8)} ${s.rps.toFixed(0).padStart(8)}   ${(s.rps / ceil.rps).toFixed(2)}  ${s.p50ms.toFixed(2).padStart(7)}  ` +
      `${s.p99ms.toFixed(2).padStart(7)}  ${s.cpuUsPerReq.toFixed(1).padStart(11)}  ${(ceil.cpuUsPerReq / s.cpuUsPerReq).toFixed(2).padStart(10)}   ${s.non2xx}`,
  );
}
console.log(`server peak RSS ${rssMb.toFixed(0)} MB; ceiling page ${pageBytes} bytes`);
console.log('ratio = req/s of the scenario / req/s of the ceiling; ratio CPU = ceiling CPU per request / scenario CPU per request');
writeFileSync(join(BENCH_DIR, 'http-results.json'), JSON.stringify({ sites: SITES, runs: RUNS, summary, rssMb }, null, 2));
