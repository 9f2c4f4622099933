/** Child processes for the benchmarks: pinned start, CPU time and peak RSS from /proc. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The forecastd executable of this tree. */
export const BIN = fileURLToPath(new URL('../../../bin/forecastd.js', import.meta.url));

/**
 * The Node flags an executable's first line starts it with
 * (`#!/usr/bin/env -S node FLAGS`), so that a benchmark runs forecastd as the
 * `forecastd` command does, with this process's node.
 */
export function nodeFlagsOf(bin: string): string[] {
  const first = readFileSync(bin, 'utf8').split('\n', 1)[0]!;
  const m = /^#!\S*env -S node((?:\s+-\S+)*)\s*$/.exec(first);
  return m === null ? [] : m[1]!.trim().split(/\s+/).filter((f) => f.length > 0);
}

/** Node's arguments to run this tree's forecastd: its flags, then the executable. */
export const BIN_ARGS: readonly string[] = [...nodeFlagsOf(BIN), BIN];

const TICKS_PER_S = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU seconds (user + system) so far in a `stat` file of /proc (a process's, or one thread's). */
function statCpuSeconds(path: string): number {
  const stat = readFileSync(path, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the command name: field 3 is state, so utime (14) and stime (15) sit at 11 and 12.
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
}

/** CPU seconds (user + system) a process has used so far. */
export const cpuSeconds = (pid: number): number => statCpuSeconds(`/proc/${pid}/stat`);

/**
 * CPU seconds of the process's main thread so far: its event loop. The rest of cpuSeconds is its other
 * threads' (the store's read thread, V8's and libuv's helpers).
 */
export const mainThreadCpuSeconds = (pid: number): number => statCpuSeconds(`/proc/${pid}/task/${pid}/stat`);

/**
 * Bytes the process has had read from storage so far (`read_bytes` of /proc/PID/io): file pages that were
 * not in the page cache. On a host that reclaims idle page cache, a store's pages are read back after a
 * pause, and the answers waiting for them make a tail that is not the server's computing.
 */
export function diskReadBytes(pid: number): number {
  const m = /^read_bytes: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

/** Peak resident set size, MB. */
export function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

export interface Server {
  child: ChildProcess;
  base: string;
  stop(): Promise<void>;
}

/**
 * Starts `command args` pinned to a core and waits for a line matching
 * "listening on URL" on its stdout.
 */
export function startPinned(core: number, command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Server> {
  return new Promise((resolve, reject) => {
    const child = spawn('taskset', ['-c', String(core), command, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    // Known from the start, so that stop() also returns for a server that has already exited.
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start: ${err}`));
    }, 30_000);
    child.stderr!.on('data', (d: Buffer) => (err += d));
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          child,
          base: m[1]!,
          stop: () => {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
            return exited;
          },
        });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${err}`));
    });
  });
}

/** True when a command is on PATH. */
export function have(cmd: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Installs Debian's wrk when it is missing (needs root and the package mirror). */
export function ensureWrk(): void {
  if (have('wrk')) return;
  process.stderr.write('wrk not found; installing Debian package wrk\n');
  execFileSync('sh', ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk'], { stdio: 'inherit' });
}
