/**
 * npm run bench:cold [-- REF]: what a freshly started server costs its first customers, when every line of
 * its serving path still runs in code V8 has not optimized yet (after a deploy, a restart, a crash). Each
 * round starts `forecastd serve --workers 1` on core 0 over the 200 x 2 bench store and, from core 1 with
 * curl, one after the other: the latest run's default page of one site, the same of another site, a
 * whole-run CSV, a page of the other run, and the bulk download of a run of every site. Printed: how long
 * the server took to listen, each answer's time, the download's MB/s of CSV, and the server's CPU over the
 * requests. With REF (a commit), that commit's server takes every other round (bench/lib/refTree.ts).
 *
 * BENCH_ROUNDS (5) servers per tree; BENCH_SITES (200).
 */
import { execFileSync } from 'node:child_process';
import { benchIssues, benchSites, benchStore } from './lib/benchStore.js';
import { CLIENT_CORE, startServe } from './lib/httpRun.js';
import { BIN, cpuSeconds, type Server } from './lib/proc.js';
import { refBin, refStore } from './lib/refTree.js';
import { median } from './lib/wrk.js';

const SITES = Number(process.env.BENCH_SITES ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const RUNS = 2;
const ref = process.argv[2];

const [older, latest] = benchIssues(RUNS);
const farms = benchSites(SITES).map((s) => s.farmId);
const STEPS = [
  ['first page', `/api/v1/forecast?farm_id=${farms[0]}`],
  ['second page', `/api/v1/forecast?farm_id=${farms[1]}`],
  ['whole-run CSV', `/api/v1/forecast?farm_id=${farms[2]}&issue=${latest}&format=csv`],
  ['the other run', `/api/v1/forecast?farm_id=${farms[3]}&issue=${older}`],
  ['bulk download', `/api/v1/forecast/archive?issue=${latest}`],
] as const;

interface Fetched {
  ms: number;
  bytes: number;
}

function fetchTimed(server: Server, path: string): Fetched {
  const out = execFileSync('taskset', ['-c', String(CLIENT_CORE), 'curl', '-s', '-o', '/dev/null', '-w', '%{http_code} %{size_download} %{time_total}', server.base + path], {
    encoding: 'utf8',
  });
  const [code, bytes, seconds] = out.trim().split(' ');
  if (code !== '200') throw new Error(`${path}: HTTP ${code}`);
  return { ms: Number(seconds) * 1000, bytes: Number(bytes) };
}

interface Round {
  listenMs: number;
  ms: number[];
  archiveMbps: number;
  cpuMs: number;
}

async function round(bin: string, db: string): Promise<Round> {
  const t0 = performance.now();
  const server = await startServe(db, [], {}, bin);
  const listenMs = performance.now() - t0;
  try {
    // A customer does not arrive the very instant the server listens; what startup left to finish, finishes.
    await new Promise((r) => setTimeout(r, 500));
    const cpu0 = cpuSeconds(server.child.pid!);
    const fetched = STEPS.map(([, path]) => fetchTimed(server, path));
    const cpuMs = (cpuSeconds(server.child.pid!) - cpu0) * 1000;
    const archive = fetched[fetched.length - 1]!;
    // The zip's own bytes (headers, directory) are under a thousandth of it: counted as CSV here.
    return { listenMs, ms: fetched.map((f) => f.ms), archiveMbps: archive.bytes / 1e3 / archive.ms, cpuMs };
  } finally {
    await server.stop();
  }
}

const trees: { name: string; bin: string; db: string }[] = [{ name: 'this tree', bin: BIN, db: await benchStore(SITES, RUNS) }];
if (ref !== undefined) {
  const bin = refBin(ref);
  trees.unshift({ name: ref, bin, db: refStore(bin, SITES, RUNS) });
}
const results = new Map<string, Round[]>(trees.map((t) => [t.name, []]));
for (let r = 1; r <= ROUNDS; r++) {
  // Each tree first in turn: an effect of the order falls on both alike.
  for (const t of r % 2 === 1 ? trees : [...trees].reverse()) {
    const res = await round(t.bin, t.db);
    results.get(t.name)!.push(res);
    process.stderr.write(
      `round ${r} ${t.name}: listening after ${res.listenMs.toFixed(0)} ms; ${STEPS.map(([name], i) => `${name} ${res.ms[i]!.toFixed(0)} ms`).join(', ')}` +
        ` (${res.archiveMbps.toFixed(0)} MB/s); CPU ${res.cpuMs.toFixed(0)} ms\n`,
    );
  }
}

console.log(`\nforecastd cold start: fresh servers on ${SITES} sites x ${RUNS} runs, ${ROUNDS} rounds each (medians)`);
for (const t of trees) {
  const rs = results.get(t.name)!;
  console.log(`${t.name}`);
  console.log(`  listening after       ${median(rs.map((r) => r.listenMs)).toFixed(0)} ms (spawn to its "listening" line)`);
  STEPS.forEach(([name], i) => console.log(`  ${name.padEnd(21)} ${median(rs.map((r) => r.ms[i]!)).toFixed(1)} ms`));
  console.log(`  bulk download rate    ${median(rs.map((r) => r.archiveMbps)).toFixed(0)} MB/s of CSV`);
  console.log(`  server CPU            ${median(rs.map((r) => r.cpuMs)).toFixed(0)} ms over the five requests`);
}
