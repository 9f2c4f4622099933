/**
 * npm run bench:access: what API keys and rate limits cost a cached answer.
 * The machinery of `npm run bench` (server on core 0, wrk on core 1, rounds
 * alternating, medians), with four scenarios in each round:
 *
 * - ceiling: the bare Fastify server sending one real page's bytes;
 * - hot: the default page of the latest run of a random site, `--auth off`;
 * - hot-keys: the same with `--auth required`, every request sending
 *   `Authorization: Bearer KEY` of a key made for this run
 *   (`forecastd keys create --rate 1000000 --burst 1000000`), so that each
 *   request pays a key lookup and a token of the key's bucket, never a refusal;
 * - hot-redis: the same as hot-keys with `--redis URL` (limits shared through
 *   Redis); Redis's own CPU and commands per request are read from INFO
 *   around every measured run.
 *
 * The key is revoked at the end (and any key left by an interrupted run before
 * the start), so that `npm run bench`, whose server runs with `--auth auto`,
 * keeps finding a store without live keys.
 *
 * BENCH_SECONDS, BENCH_ROUNDS, BENCH_SITES, BENCH_RUNS and BENCH_STORE_URL as
 * for `npm run bench`; BENCH_REDIS_URL (default redis://127.0.0.1:6379).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { BENCH_DIR, benchSites, benchStore } from './lib/benchStore.js';
import { httpRun, type Summary } from './lib/httpRun.js';
import { BIN_ARGS } from './lib/proc.js';
import { hotPaths } from './lib/requests.js';

const SITES = Number(process.env.BENCH_SITES ?? 200);
const RUNS = Number(process.env.BENCH_RUNS ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const KEY_PREFIX = 'bench-access-';
const KEYS_TARGET = 0.9;
const REDIS_TARGET = 0.8;

const run = promisify(execFile);
const log = (l: string): void => void process.stderr.write(l + '\n');
const forecastd = (args: string[]) => run(process.execPath, [...BIN_ARGS, ...args], { maxBuffer: 1 << 20 });

mkdirSync(BENCH_DIR, { recursive: true });
const db = process.env.BENCH_STORE_URL ?? (await benchStore(SITES, RUNS, log));

/** Revokes the live keys an earlier, interrupted run of this benchmark left in the store. */
async function revokeLeftovers(): Promise<void> {
  const { stdout } = await forecastd(['keys', 'list', '--json', '--db', db]);
  const keys = JSON.parse(stdout) as { name: string; state: string }[];
  for (const k of keys) {
    if (k.name.startsWith(KEY_PREFIX) && (k.state === 'active' || k.state === 'expiring')) {
      log(`revoking key "${k.name}" left by an earlier run`);
      await forecastd(['keys', 'revoke', k.name, '--db', db]);
    }
  }
}

const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
await redis.connect();
const myRedisId = Number(await redis.client('ID'));
const redisPort = new URL(REDIS_URL).port || '6379';
const info = async (section: string, fields: string[]): Promise<number> => {
  const text = await redis.info(section);
  return fields.reduce((a, f) => a + Number(new RegExp(`^${f}:([\\d.]+)`, 'm').exec(text)?.[1] ?? NaN), 0);
};

/** The server's TCP connections to Redis, from ss: local port and the segments with data it has sent (≈ writes). */
async function serverRedisSockets(pid: number): Promise<{ ports: Set<string>; writes: number }> {
  // Without ss (iproute2) the writes are not counted: NaN, not a failed run.
  const stdout = await run('ss', ['-Htinp', 'state', 'established', `( dport = :${redisPort} )`]).then(
    (r) => r.stdout,
    () => 'NaN',
  );
  if (stdout === 'NaN') return { ports: new Set(), writes: NaN };
  const ports = new Set<string>();
  let writes = 0;
  // Each socket: a line with the addresses and users:((...pid=N...)), then an indented line of counters.
  const lines = stdout.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.includes(`pid=${pid},`)) continue;
    const local = /\S+:(\d+)\s+\S+:\d+\s+users:/.exec(lines[i]!)?.[1];
    if (local !== undefined) ports.add(local);
    writes += Number(/data_segs_out:(\d+)/.exec(lines[i + 1] ?? '')?.[1] ?? 0);
  }
  return { ports, writes };
}

/** Other clients of that Redis that sent a command within the last measured run: their work is in Redis's CPU figure. */
const otherRedisClients = new Set<string>();
async function noteOtherRedisClients(serverPid: number): Promise<void> {
  const { ports } = await serverRedisSockets(serverPid);
  const list = (await redis.client('LIST')) as string;
  for (const line of list.split('\n')) {
    const id = Number(/\bid=(\d+)/.exec(line)?.[1]);
    const port = /\baddr=\S*:(\d+)/.exec(line)?.[1];
    const idle = Number(/\bidle=(\d+)/.exec(line)?.[1]);
    if (!line || id === myRedisId || (port !== undefined && ports.has(port))) continue;
    if (idle <= SECONDS) otherRedisClients.add(`${/\baddr=(\S+)/.exec(line)?.[1] ?? '?'} (last ${/\bcmd=(\S+)/.exec(line)?.[1] ?? '?'})`);
  }
}

await revokeLeftovers();
const keyName = `${KEY_PREFIX}${Date.now().toString(36)}-${process.pid}`;
const key = (await forecastd(['keys', 'create', '--name', keyName, '--rate', '1000000', '--burst', '1000000', '--db', db])).stdout.trim();
if (!/^\S+$/.test(key)) throw new Error('keys create printed no key');
log(`created key "${keyName}" for this run`);
const bearer = `Authorization: Bearer ${key}`;
const farmId = benchSites(SITES)[0]!.farmId;

/** Before the load: a keyed server refuses a request without the key and answers one with it, with the rate headers. */
async function checkKeyed(base: string): Promise<void> {
  const url = base + hotPaths([farmId])[0];
  const without = await fetch(url);
  await without.arrayBuffer();
  if (without.status !== 401) throw new Error(`${base}: a request without a key got ${without.status}, not 401: are keys required?`);
  const withKey = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  await withKey.arrayBuffer();
  if (withKey.status !== 200 || withKey.headers.get('ratelimit') === null) {
    throw new Error(`${base}: a request with the key got ${withKey.status} (RateLimit header ${withKey.headers.get('ratelimit') ?? 'absent'})`);
  }
}

let result: Awaited<ReturnType<typeof httpRun>>;
try {
  result = await httpRun({
    sites: SITES,
    runs: RUNS,
    scenarios: ['ceiling', 'hot'],
    rounds: ROUNDS,
    seconds: SECONDS,
    log,
    serveArgs: ['--auth', 'off'],
    variants: [
      { name: 'hot-keys', load: 'hot', serveArgs: ['--auth', 'required'], headers: [bearer], check: checkKeyed },
      {
        name: 'hot-redis',
        load: 'hot',
        serveArgs: ['--auth', 'required', '--redis', REDIS_URL],
        headers: [bearer],
        check: checkKeyed,
        probes: {
          'writes to Redis': async (pid) => (await serverRedisSockets(pid)).writes,
          'Redis CPU µs': async (pid) => {
            await noteOtherRedisClients(pid);
            return (await info('cpu', ['used_cpu_sys', 'used_cpu_user'])) * 1e6;
          },
        },
      },
    ],
  });
} finally {
  await forecastd(['keys', 'revoke', keyName, '--db', db]).then(
    () => log(`revoked key "${keyName}"`),
    (err: unknown) => log(`could not revoke key "${keyName}": ${String(err)}`),
  );
  redis.disconnect();
}

const { summary, rssMb, pageBytes, variantRssMb } = result;
const by = (name: string): Summary => summary.find((s) => s.scenario === name)!;
const ceil = by('ceiling');
const off = by('hot');
const keys = by('hot-keys');
const shared = by('hot-redis');

console.log(
  `\nforecastd access benchmark: ${SITES} sites x ${RUNS} runs, wrk -t1 -c32 -d${SECONDS}s, ${ROUNDS} rounds (medians); ` +
    `store ${process.env.BENCH_STORE_URL === undefined ? 'SQLite' : 'BENCH_STORE_URL'}`,
);
console.log('scenario     req/s   ratio   p50 ms   p99 ms   CPU µs/req   ratio CPU   non-2xx');
for (const s of summary) {
  console.log(
    `${s.scenario.padEnd(9)} ${s.rps.toFixed(0).padStart(8)}   ${(s.rps / ceil.rps).toFixed(2)}  ${s.p50ms.toFixed(2).padStart(7)}  ` +
      `${s.p99ms.toFixed(2).padStart(7)}  ${s.cpuUsPerReq.toFixed(1).padStart(11)}  ${(ceil.cpuUsPerReq / s.cpuUsPerReq).toFixed(2).padStart(10)}   ${s.non2xx}`,
  );
}
const target = (label: string, s: Summary, goal: number): { ratio: number; met: boolean } => {
  const ratio = s.rps / off.rps;
  const met = ratio >= goal;
  console.log(
    `${label.padEnd(28)} req/s ratio ${ratio.toFixed(2)} (target >= ${goal.toFixed(2)}: ${met ? 'met' : 'NOT MET'}); ` +
      `CPU µs/req ${s.cpuUsPerReq.toFixed(1)} against ${off.cpuUsPerReq.toFixed(1)} auth off (+${(s.cpuUsPerReq - off.cpuUsPerReq).toFixed(1)}), ` +
      `${ceil.cpuUsPerReq.toFixed(1)} ceiling`,
  );
  return { ratio, met };
};
console.log('');
const keysTarget = target('hot-keys / hot (auth off)', keys, KEYS_TARGET);
const redisTarget = target('hot-redis / hot (auth off)', shared, REDIS_TARGET);
const rp = shared.probes ?? {};
console.log(
  `hot-redis, per request: ${(rp['writes to Redis'] ?? NaN).toFixed(5)} writes from the server to Redis, ` +
    `${(rp['Redis CPU µs'] ?? NaN).toFixed(2)} µs of Redis's CPU (not in CPU µs/req above)`,
);
if (otherRedisClients.size > 0) {
  console.log(`  (Redis's CPU includes other clients active during hot-redis: ${[...otherRedisClients].slice(0, 5).join(', ')})`);
}
console.log(
  `server peak RSS ${rssMb.toFixed(0)} MB (auth off), ${Object.entries(variantRssMb)
    .map(([n, mb]) => `${mb.toFixed(0)} MB (${n})`)
    .join(', ')}; ceiling page ${pageBytes} bytes`,
);
console.log('ratio = req/s of the scenario / req/s of the ceiling; ratio CPU = ceiling CPU per request / scenario CPU per request');
console.log('hot: --auth off; hot-keys: --auth required, Bearer key; hot-redis: hot-keys with --redis (shared limits)');
const bad = summary.filter((s) => s.non2xx > 0);
if (bad.length > 0) {
  const line = '!'.repeat(78);
  console.log(`\n${line}\n!!! NON-2XX OR SOCKET ERRORS: ${bad.map((s) => `${s.scenario} ${s.non2xx}`).join(', ')}`);
  console.log(`!!! the figures above include refused or failed requests and are not comparable\n${line}`);
  process.exitCode = 1;
}
writeFileSync(
  join(BENCH_DIR, 'access-results.json'),
  JSON.stringify(
    {
      date: new Date().toISOString(),
      sites: SITES,
      runs: RUNS,
      seconds: SECONDS,
      rounds: ROUNDS,
      summary,
      targets: {
        keysOverOff: { ...keysTarget, target: KEYS_TARGET },
        redisOverOff: { ...redisTarget, target: REDIS_TARGET },
      },
      rssMb,
      variantRssMb,
      otherRedisClients: [...otherRedisClients],
    },
    null,
    2,
  ),
);
