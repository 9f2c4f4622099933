/**
 * npm run bench:compare -- REF: the CPU per request of this working tree against
 * an earlier commit, under the same load, the two servers measured alternately
 * (old, new, old, new, ...) so that a machine whose speed drifts from minute to
 * minute affects both alike. Each server is started afresh per round, pinned to
 * core 0, warmed for 3 s, then measured with wrk on core 1.
 *
 * REF is checked out into data/bench/compare/REF (a git worktree) and built with
 * this tree's compiler and node_modules, so the comparison assumes the
 * dependencies did not change in between. Each side serves the bench store as
 * its own code builds it (the same values; the encoding of its series format),
 * so that a change of format is measured too and an older tree is never handed
 * blobs it cannot read.
 *
 * BENCH_SCENARIO: mixed (default) or hot; BENCH_ROUNDS (3), BENCH_SECONDS (5);
 * BENCH_SITES x BENCH_RUNS (200 x 8) picks the store.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BENCH_DIR, benchIssues, benchSites, benchStore } from './lib/benchStore.js';
import { BIN, ensureWrk } from './lib/proc.js';
import { hotPaths, mixedLua } from './lib/requests.js';
import { median, wrk, type Requests } from './lib/wrk.js';
import { CLIENT_CORE, startServe } from './lib/httpRun.js';

const ref = process.argv[2] ?? 'HEAD~1';
const scenario = process.env.BENCH_SCENARIO === 'hot' ? 'hot' : 'mixed';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function checkout(rev: string): string {
  const sha = execFileSync('git', ['rev-parse', '--short', rev], { cwd: ROOT, encoding: 'utf8' }).trim();
  const dir = join(BENCH_DIR, 'compare', sha);
  if (!existsSync(join(dir, 'dist', 'src', 'cli', 'main.js'))) {
    mkdirSync(join(BENCH_DIR, 'compare'), { recursive: true });
    if (!existsSync(dir)) execFileSync('git', ['worktree', 'add', '--detach', dir, sha], { cwd: ROOT, stdio: 'ignore' });
    if (!existsSync(join(dir, 'node_modules'))) symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json')], {
      stdio: 'inherit',
    });
  }
  return join(dir, 'bin', 'forecastd.js');
}

/** The bench store as the tree at dir builds it (under this tree's data/bench). */
function storeOf(dir: string): string {
  const lib = pathToFileURL(join(dir, 'dist', 'bench', 'lib', 'benchStore.js')).href;
  const script = `const m = await import(${JSON.stringify(lib)}); process.stdout.write(await m.benchStore(${SITES}, ${RUNS}, () => {}));`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' }).trim();
}

ensureWrk();
const SITES = Number(process.env.BENCH_SITES ?? 200);
const RUNS = Number(process.env.BENCH_RUNS ?? 8);
const oldBin = checkout(ref);
const newBin = BIN;
const newDb = process.env.BENCH_STORE_URL ?? (await benchStore(SITES, RUNS));
const oldDb = process.env.BENCH_STORE_URL ?? storeOf(join(oldBin, '..', '..'));
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
