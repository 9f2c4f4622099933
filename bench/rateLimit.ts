/**
 * npm run bench:ratelimit: what a rate-limit decision costs this process.
 *
 * - local: `take` on per-process buckets (1,000 keys, always allowed; a
 *   limited key, always refused; 200,000 distinct addresses, table at its cap).
 * - redis: the Redis-shared limiter (leases) as the server uses it: `acquire`,
 *   awaited only when it returns a promise, 100 requests per event-loop turn,
 *   the real clock. CPU time of this process per request (process.cpuUsage,
 *   so the client work of the syncs is counted) and bucket syncs per request
 *   (HMGET calls inside the lease script, from INFO commandstats; one script
 *   call carries up to 128 of them). Always-allowed keys at bursts 200 (the
 *   default), 100 and 20; one busy key whose burst lets every request through
 *   (the clock is in milliseconds, so a key passes at most its burst per
 *   millisecond whatever its rate); a limited key.
 * - rate-limiter-flexible 11 (devDependency, for this comparison only):
 *   RateLimiterMemory.consume and RateLimiterRedis.consume (with an in-memory
 *   insuranceLimiter), 100 in flight.
 *
 * Redis: BENCH_REDIS_URL (default redis://127.0.0.1:6379); keys under a fresh
 * prefix that expire on their own. BENCH_N scales the request counts.
 */
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import type { Decision } from '../src/access/rateLimit/decision.js';
import { newDecision } from '../src/access/rateLimit/decision.js';
import { localLimiter } from '../src/access/rateLimit/localLimiter.js';
import type { RateLimiter } from '../src/access/rateLimit/rateLimiter.js';
import { redisLimiter } from '../src/access/rateLimit/redisLimiter.js';

const URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const N = Number(process.env.BENCH_N ?? 1);
const T0 = 1_800_000_000_000;
const prefix = `bench:${process.pid}:${Date.now().toString(36)}:`;
const keys = Array.from({ length: 1000 }, (_, i) => `key${i}`);
const addrs = Array.from({ length: 200_000 }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);

const rows: string[][] = [['case', 'requests', 'ns/request (CPU)', 'allowed', 'bucket syncs/request']];
const cpuNs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
};

function syncCase(name: string, n: number, f: (i: number, out: Decision) => boolean): void {
  const out = newDecision();
  for (let i = 0; i < Math.min(n, 200_000); i++) f(i, out); // warm-up
  const t = process.hrtime.bigint();
  let allowed = 0;
  for (let i = 0; i < n; i++) if (f(i, out)) allowed++;
  const ns = Number(process.hrtime.bigint() - t) / n;
  rows.push([name, String(n), ns.toFixed(0), (allowed / n).toFixed(3), '-']);
}

const admin = new Redis(URL);
async function scriptCalls(): Promise<number> {
  const info = await admin.info('commandstats');
  let calls = 0;
  for (const m of info.matchAll(/cmdstat_hmget:calls=(\d+)/g)) calls += Number(m[1]);
  return calls;
}

/** `n` requests through `acquire`, `perTurn` per event-loop turn, as a busy server meets them. */
async function redisCase(name: string, l: RateLimiter, n: number, rate: number, burst: number, idOf: (i: number) => string): Promise<void> {
  const perTurn = 100;
  const run = async (count: number): Promise<number> => {
    let allowed = 0;
    const waits: Promise<Decision>[] = [];
    let now = Date.now();
    for (let i = 0; i < count; i++) {
      const d = l.acquire('key', idOf(i), rate, burst, now);
      if (d instanceof Promise) waits.push(d);
      else if (d.allowed) allowed++;
      if (i % perTurn === perTurn - 1) {
        await new Promise((r) => setImmediate(r));
        now = Date.now();
        for (const w of waits.splice(0)) if ((await w).allowed) allowed++;
      }
    }
    for (const w of waits) if ((await w).allowed) allowed++;
    return allowed;
  };
  await run(Math.min(n, 50_000)); // warm-up (and first leases)
  const calls0 = await scriptCalls();
  const c0 = cpuNs();
  const allowed = await run(n);
  const ns = (cpuNs() - c0) / n;
  const calls = (await scriptCalls()) - calls0;
  rows.push([name, String(n), ns.toFixed(0), (allowed / n).toFixed(3), (calls / n).toFixed(4)]);
}

/**
 * A server's pace: `n` requests at `perMs` per millisecond (sleeping between
 * milliseconds), ids round-robin over `ids`, so that each key comes back only
 * every ids/perMs ms; CPU per request minus that of the same loop without the
 * limiter.
 */
async function pacedCase(name: string, l: RateLimiter, n: number, ids: number, perMs: number): Promise<void> {
  const run = async (withLimiter: boolean): Promise<[number, number]> => {
    let allowed = 0;
    const c0 = cpuNs();
    const start = Date.now();
    for (let i = 0; i < n; i += perMs) {
      const waits: Promise<Decision>[] = [];
      const now = Date.now();
      for (let j = i; j < i + perMs && j < n; j++) {
        if (!withLimiter) continue;
        const d = l.acquire('key', 'paced' + (j % ids), 1000, 200, now);
        if (d instanceof Promise) waits.push(d);
        else if (d.allowed) allowed++;
      }
      for (const w of waits) if ((await w).allowed) allowed++;
      const next = start + (i + perMs) / perMs;
      await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
    }
    return [cpuNs() - c0, allowed];
  };
  const [base] = await run(false);
  await run(true); // warm-up: the first lease of each key
  const calls0 = await scriptCalls();
  const [cpu, allowed] = await run(true);
  const calls = (await scriptCalls()) - calls0;
  rows.push([name, String(n), ((cpu - base) / n).toFixed(0), (allowed / n).toFixed(3), (calls / n).toFixed(4)]);
}

async function flexibleCase(name: string, consume: (i: number) => Promise<unknown>, n: number): Promise<void> {
  const run = async (count: number): Promise<number> => {
    let allowed = 0;
    for (let i = 0; i < count; i += 100) {
      const batch: Promise<boolean>[] = [];
      for (let j = i; j < i + 100 && j < count; j++)
        batch.push(
          consume(j).then(
            () => true,
            () => false,
          ),
        );
      for (const ok of await Promise.all(batch)) if (ok) allowed++;
    }
    return allowed;
  };
  await run(Math.min(n, 20_000));
  const c0 = cpuNs();
  const allowed = await run(n);
  rows.push([name, String(n), ((cpuNs() - c0) / n).toFixed(0), (allowed / n).toFixed(3), '-']);
}

// Per process.
const local = localLimiter();
syncCase('local take, 1,000 keys, allowed', 5_000_000 * N, (i, out) => local.take('key', keys[i % 1000]!, 1e9, 1e9, T0 + i, out).allowed);
syncCase('local take, one limited key, refused', 5_000_000 * N, (_, out) => local.take('key', 'limited', 0.001, 10, T0, out).allowed);
syncCase('local take, 200,000 addresses, cap 100,000', 2_000_000 * N, (i, out) => local.take('anon', addrs[i % 200_000]!, 5, 100, T0 + i, out).allowed);

// Redis-shared, this design.
const faults: unknown[] = [];
const shared = await redisLimiter(URL, { keyPrefix: prefix, onFault: (e) => faults.push(e), syncDelayMs: Number(process.env.BENCH_SYNC_DELAY_MS ?? 2) });
if (!shared.shared) throw new Error(`Redis not reachable at ${URL}`);
{
  // The synchronous part alone, in slices between which the event loop runs (a long blocking loop would delay the syncs' answers past their deadline).
  const out = newDecision();
  let ns = 0;
  let allowed = 0;
  const slices = 20 * N;
  for (let s = -2; s < slices; s++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < 100_000; i++) if (shared.take('key', keys[i % 10]!, 1e9, 1e9, T0, out).allowed && s >= 0) allowed++;
    if (s >= 0) ns += Number(process.hrtime.bigint() - t);
    await new Promise((r) => setTimeout(r, 5));
  }
  rows.push(['redis limiter take, leases in hand (sync part only)', String(slices * 100_000), (ns / (slices * 100_000)).toFixed(0), (allowed / (slices * 100_000)).toFixed(3), '-']);
}
await redisCase('redis acquire, 1,000 keys, B=200, allowed', shared, 1_000_000 * N, 1e6, 200, (i) => keys[i % 1000]!);
await redisCase('redis acquire, 1,000 keys, B=100, allowed', shared, 1_000_000 * N, 1e6, 100, (i) => 'b100' + keys[i % 1000]!);
await redisCase('redis acquire, 1,000 keys, B=20, allowed', shared, 500_000 * N, 1e6, 20, (i) => 'b20' + keys[i % 1000]!);
await redisCase('redis acquire, one busy key, B=100,000, allowed', shared, 1_000_000 * N, 1e9, 100_000, () => 'hot');
await redisCase('redis acquire, one limited key (20/s, B=200)', shared, 1_000_000 * N, 20, 200, () => 'limited');
await pacedCase('redis acquire at 20k/s, 20,000 keys (each every 1 s)', shared, 200_000 * N, 20_000, 20);
await pacedCase('redis acquire at 20k/s, 2,000 keys (each every 0.1 s)', shared, 100_000 * N, 2_000, 20);
await pacedCase('redis acquire at 20k/s, 200 keys (each every 10 ms)', shared, 100_000 * N, 200, 20);
await shared.close();

// rate-limiter-flexible.
const memory = new RateLimiterMemory({ points: 1e9, duration: 1 });
await flexibleCase('flexible RateLimiterMemory.consume, 1,000 keys', (i) => memory.consume(keys[i % 1000]!), 1_000_000 * N);
const client = new Redis(URL, { enableOfflineQueue: false });
await new Promise((r) => client.once('ready', r));
const flexRedis = new RateLimiterRedis({
  storeClient: client,
  keyPrefix: prefix + 'rlflx',
  points: 1e9,
  duration: 1,
  insuranceLimiter: new RateLimiterMemory({ points: 1e9, duration: 1 }),
});
await flexibleCase('flexible RateLimiterRedis.consume, 1,000 keys', (i) => flexRedis.consume(keys[i % 1000]!), 200_000 * N);
client.disconnect();
admin.disconnect();

const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
for (const r of rows) console.log(r.map((v, c) => (c === 0 ? v.padEnd(widths[c]!) : v.padStart(widths[c]!))).join('  '));
if (faults.length > 0) console.log('faults:', ...faults);
