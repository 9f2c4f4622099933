/** Runs wrk pinned to a core over a list of request paths and reads its report. */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BENCH_DIR } from './benchStore.js';
import { cpuSeconds, diskReadBytes, mainThreadCpuSeconds } from './proc.js';

const run = promisify(execFile);

export interface WrkResult {
  requests: number;
  rps: number;
  p50ms: number;
  p90ms: number;
  p99ms: number;
  /** The far tail, from the script's done() (wrk's report stops at 99 %). */
  p999ms: number;
  maxMs: number;
  non2xx: number;
  errors: number;
  /** Server CPU per request, µs. */
  cpuUs: number;
  /** Of that, the server's event loop (its main thread), µs. */
  loopCpuUs: number;
  /** MB the server had read from storage during the run (page cache misses). */
  diskReadMb: number;
}

const LUA = `
local paths = {}
for line in io.lines(os.getenv("WRK_PATHS")) do paths[#paths + 1] = line end
math.randomseed(tonumber(os.getenv("WRK_SEED") or "1"))
request = function()
  return wrk.format("GET", paths[math.random(#paths)])
end
`;

/**
 * Appended to every script: prints the far tail, which wrk's --latency report leaves out (it stops at 99 %);
 * a distribution, not one percentile, says where a tail comes from.
 */
const TAIL_LUA = `
done = function(summary, latency, requests)
  io.write(string.format("tail 99.9%% %d us\\n", latency:percentile(99.9)))
  io.write(string.format("tail max %d us\\n", latency.max))
end
`;

const toMs = (v: string, unit: string): number => Number(v) * (unit === 'us' ? 0.001 : unit === 's' ? 1000 : 1);

export function parseWrk(text: string): Omit<WrkResult, 'cpuUs' | 'loopCpuUs' | 'diskReadMb'> {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? NaN);
  const requests = Number(/(\d+) requests in/.exec(text)?.[1] ?? NaN);
  const lat = (pct: string): number => {
    const m = new RegExp(`\\s${pct}%\\s+([\\d.]+)(us|ms|s)`).exec(text);
    return m ? toMs(m[1]!, m[2]!) : NaN;
  };
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(text)?.[1] ?? 0);
  const e = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const errors = e ? Number(e[1]) + Number(e[2]) + Number(e[3]) + Number(e[4]) : 0;
  const tail = (what: string): number => Number(new RegExp(`tail ${what} (\\d+) us`).exec(text)?.[1] ?? NaN) / 1000;
  return { requests, rps, p50ms: lat('50'), p90ms: lat('90'), p99ms: lat('99'), p999ms: tail('99\\.9%'), maxMs: tail('max'), non2xx, errors };
}

/** A request source for wrk: a list of paths drawn at random, or a Lua script that makes each request. */
export type Requests = readonly string[] | { readonly lua: string };

/**
 * wrk -t1 -c{connections} -d{seconds}s, pinned to `core`, requests from `requests`.
 * `headers` ("Name: value") go on every request as wrk -H options: wrk.format
 * in the Lua scripts takes wrk.headers, which -H fills.
 */
export async function wrk(
  base: string,
  name: string,
  requests: Requests,
  /** seed: of the request draw; measured rounds use 1, 2, ..., and warm-ups the default 0, so that no round replays a warm-up. */
  o: { core: number; serverPid: number; connections?: number; seconds?: number; seed?: number; headers?: readonly string[] },
): Promise<WrkResult> {
  const list = join(BENCH_DIR, `paths-${name}.txt`);
  let script = join(BENCH_DIR, 'random-paths.lua');
  if ('lua' in requests) {
    script = join(BENCH_DIR, `requests-${name}.lua`);
    writeFileSync(script, requests.lua + TAIL_LUA);
    writeFileSync(list, '/\n');
  } else {
    writeFileSync(list, (requests as readonly string[]).join('\n') + '\n');
    writeFileSync(script, LUA + TAIL_LUA);
  }
  const cpu0 = cpuSeconds(o.serverPid);
  const loop0 = mainThreadCpuSeconds(o.serverPid);
  const disk0 = diskReadBytes(o.serverPid);
  const { stdout } = await run(
    'taskset',
    [
      '-c', String(o.core), 'wrk', '-t1', `-c${o.connections ?? 32}`, `-d${o.seconds ?? 10}s`, '--latency',
      ...(o.headers ?? []).flatMap((h) => ['-H', h]),
      '-s', script, base,
    ],
    { env: { ...process.env, WRK_PATHS: list, WRK_SEED: String(o.seed ?? 0) }, maxBuffer: 1 << 20 },
  );
  const cpu = cpuSeconds(o.serverPid) - cpu0;
  const loop = mainThreadCpuSeconds(o.serverPid) - loop0;
  const disk = diskReadBytes(o.serverPid) - disk0;
  const r = parseWrk(stdout);
  return { ...r, cpuUs: (cpu / r.requests) * 1e6, loopCpuUs: (loop / r.requests) * 1e6, diskReadMb: disk / 1e6 };
}

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
