/**
 * npm run bench:scale: hot and mixed at 2,000 sites x 4 runs against 200 x 4,
 * to show how the cost per request grows with the store.
 */
import { httpRun, type Summary } from './lib/httpRun.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SMALL = Number(process.env.BENCH_SMALL_SITES ?? 200);
const LARGE = Number(process.env.BENCH_LARGE_SITES ?? 2000);
const RUNS = 4;

const small = await httpRun({ sites: SMALL, runs: RUNS, scenarios: ['hot', 'mixed'], rounds: ROUNDS, seconds: SECONDS });
const large = await httpRun({ sites: LARGE, runs: RUNS, scenarios: ['hot', 'mixed'], rounds: ROUNDS, seconds: SECONDS });
const by = (s: Summary[], n: string): Summary => s.find((x) => x.scenario === n)!;
console.log(`\nforecastd scale benchmark: ${SMALL} vs ${LARGE} sites x ${RUNS} runs, wrk -t1 -c32 -d${SECONDS}s, ${ROUNDS} rounds (medians)`);
console.log(`scenario  CPU µs/req @${SMALL}  CPU µs/req @${LARGE}  growth   req/s @${SMALL}  req/s @${LARGE}`);
for (const name of ['hot', 'mixed']) {
  const a = by(small.summary, name);
  const b = by(large.summary, name);
  console.log(
    `${name.padEnd(8)} ${a.cpuUsPerReq.toFixed(1).padStart(16)} ${b.cpuUsPerReq.toFixed(1).padStart(18)}  ${(((b.cpuUsPerReq / a.cpuUsPerReq) - 1) * 100).toFixed(1).padStart(5)}%` +
      `  ${a.rps.toFixed(0).padStart(11)}  ${b.rps.toFixed(0).padStart(12)}`,
  );
}
console.log(`peak RSS: ${small.rssMb.toFixed(0)} MB @${SMALL}, ${large.rssMb.toFixed(0)} MB @${LARGE}`);
