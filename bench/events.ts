/**
 * npm run bench:events: what event streams cost a serve process.
 *
 * 1. forecastd serve --workers 1 (core 0) under wrk's hot load (core 1) with
 *    no event stream open, then with 1,000 idle streams open (this process,
 *    pinned to core 1, holds them): req/s of each and their ratio, rounds
 *    alternating, medians.
 * 2. With the 1,000 streams open, one run is published (every site of the
 *    store, by this process through its own store handle, as `ingest` would):
 *    the delay from each publication's commit to each client receiving its
 *    event, p50 / p99 / max over every (client, event), the slowest client's
 *    p99, and whether every client got every event.
 *
 * The store is a copy of the HTTP benchmark's (bench/lib/benchStore.ts), so
 * that the publication does not change it.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { BENCH_DIR, BENCH_SEED, benchIssues, benchSites, benchStore } from './lib/benchStore.js';
import { CLIENT_CORE, SERVER_CORE, startServe } from './lib/httpRun.js';
import { ensureWrk, peakRssMb } from './lib/proc.js';
import { hotPaths } from './lib/requests.js';
import { median, wrk } from './lib/wrk.js';
import { demoSeries } from '../src/demo/weather.js';
import { formatIssue, parseIssue } from '../src/domain/time.js';
import { openStore } from '../src/store/openStore.js';

const SITES = Number(process.env.BENCH_SITES ?? 200);
const RUNS = Number(process.env.BENCH_RUNS ?? 8);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const log = (line: string): void => void process.stderr.write(line + '\n');

/** One idle stream: counts the run events it gets and when each arrived, by revision. */
interface Client {
  readonly arrivals: Map<number, number>;
  issues: number;
  close(): void;
}

function openClient(base: string): Promise<Client> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}/api/v1/events`, { agent: false }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`stream answered ${res.statusCode}`));
        res.resume();
        return;
      }
      res.setEncoding('utf8');
      const client: Client = { arrivals: new Map(), issues: 0, close: () => req.destroy() };
      let buffer = '';
      res.on('data', (chunk: string) => {
        const now = performance.now();
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (block.includes('\nevent: run\n')) {
            const m = /"revision":(\d+)/.exec(block);
            if (m) client.arrivals.set(Number(m[1]), now);
          } else if (block.includes('\nevent: issue\n')) client.issues++;
        }
      });
      res.on('error', () => undefined);
      resolve(client);
    });
    req.on('error', reject);
  });
}

const pct = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

// This process (the clients and the publisher) runs on the load's core.
execFileSync('taskset', ['-cp', String(CLIENT_CORE), String(process.pid)], { stdio: 'ignore' });
ensureWrk();
const source = await benchStore(SITES, RUNS, log);
const db = join(BENCH_DIR, `events-${SITES}x${RUNS}.db`);
for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, { force: true });
copyFileSync(source, db);
const farmIds = benchSites(SITES).map((s) => s.farmId);
const server = await startServe(db, ['--sse-max-clients', String(CLIENTS + 10), '--sse-max-clients-per-key', String(CLIENTS + 10)]);
const clients: Client[] = [];
try {
  const paths = hotPaths(farmIds);
  const opts = { core: CLIENT_CORE, serverPid: server.child.pid!, seconds: SECONDS };
  log(`serve on core ${SERVER_CORE}, wrk and ${CLIENTS} stream clients on core ${CLIENT_CORE}; warming up`);
  await wrk(server.base, 'events-hot', paths, { ...opts, seconds: 3 });
  const without: number[] = [];
  const withClients: number[] = [];
  const closeAll = (): void => {
    for (const c of clients.splice(0)) c.close();
  };
  const measure = async (streams: boolean, round: number): Promise<number> => {
    if (streams) while (clients.length < CLIENTS) clients.push(await openClient(server.base));
    else closeAll();
    await new Promise((r) => setTimeout(r, 1000));
    return (await wrk(server.base, 'events-hot', paths, { ...opts, seed: round })).rps;
  };
  // The order alternates from round to round, so that neither side always comes second (warmer).
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 === 1 ? [false, true] : [true, false];
    for (const streams of order) (streams ? withClients : without).push(await measure(streams, round));
    log(`round ${round}: hot ${without.at(-1)!.toFixed(0)} req/s without streams, ${withClients.at(-1)!.toFixed(0)} req/s with ${CLIENTS} idle streams`);
  }
  while (clients.length < CLIENTS) clients.push(await openClient(server.base));

  // One run published while the streams listen.
  const store = await openStore(db);
  const issueMs = parseIssue(benchIssues(RUNS)[0]!)! + 12 * 3_600_000;
  const issue = formatIssue(issueMs);
  const committed = new Map<number, number>();
  const sites = benchSites(SITES);
  const series = sites.map((s) => demoSeries(s, issueMs, BENCH_SEED));
  const t0 = performance.now();
  for (let i = 0; i < sites.length; i++) {
    const p = await store.putRun({ farmId: sites[i]!.farmId, issue, series: series[i]! });
    committed.set(p.revision, performance.now());
  }
  const publishMs = performance.now() - t0;
  await store.close();
  // Every client has every event, or 5 s have passed.
  const deadline = performance.now() + 5000;
  while (performance.now() < deadline && !clients.every((c) => c.arrivals.size === committed.size && c.issues >= 2)) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const delays: number[] = [];
  const clientP99: number[] = [];
  let complete = 0;
  for (const c of clients) {
    const mine: number[] = [];
    for (const [revision, at] of committed) {
      const got = c.arrivals.get(revision);
      if (got !== undefined) mine.push(got - at);
    }
    mine.sort((x, y) => x - y);
    delays.push(...mine);
    clientP99.push(pct(mine, 99));
    if (mine.length === committed.size && c.issues >= 2) complete++;
  }
  delays.sort((x, y) => x - y);
  clientP99.sort((x, y) => x - y);
  const rps0 = median(without);
  const rps1 = median(withClients);
  console.log(`\nforecastd event streams: ${SITES} sites x ${RUNS} runs, wrk -t1 -c32 -d${SECONDS}s hot, ${ROUNDS} rounds (medians)`);
  console.log(`hot req/s without streams          ${rps0.toFixed(0)}`);
  console.log(`hot req/s with ${CLIENTS} idle streams   ${rps1.toFixed(0)}   ratio ${(rps1 / rps0).toFixed(3)}`);
  console.log(`one run published (${committed.size} sites, ${publishMs.toFixed(0)} ms of commits) to ${CLIENTS} streams:`);
  console.log(
    `  delay commit -> client  p50 ${pct(delays, 50).toFixed(0)} ms  p99 ${pct(delays, 99).toFixed(0)} ms  max ${delays.at(-1)!.toFixed(0)} ms` +
      `  (slowest client's p99 ${clientP99.at(-1)!.toFixed(0)} ms)`,
  );
  console.log(`  clients with every event: ${complete} of ${clients.length} (${committed.size} run events and the run's issue events each)`);
  console.log(`server peak RSS ${peakRssMb(server.child.pid!).toFixed(0)} MB`);
} finally {
  for (const c of clients) c.close();
  await server.stop();
}
