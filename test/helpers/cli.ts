/** Running the real command line (bin/forecastd.js) in tests. */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FARMS, farmsCsv, type FarmFixture } from './fixtures.js';

export const BIN = fileURLToPath(new URL('../../../bin/forecastd.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs bin/forecastd.js with the test's environment plus env (an undefined value removes a variable), in cwd if given. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface Served {
  child: ChildProcess;
  base: string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
  stderr(): string;
}

/**
 * Starts `forecastd serve --port 0 ...` and waits for its "listening on" line;
 * with asCommand, runs the executable itself (its first line picks node and its flags).
 */
export function serve(args: string[], env: NodeJS.ProcessEnv = {}, o: { asCommand?: boolean } = {}): Promise<Served> {
  return new Promise((resolve, reject) => {
    const argv = [BIN, 'serve', '--port', '0', ...args];
    const child = spawn(o.asCommand === true ? argv[0]! : process.execPath, o.asCommand === true ? argv.slice(1) : argv, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start: ${err}`));
    }, 15_000);
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.stdout.on('data', (d: Buffer) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          child,
          base: m[1]!,
          stop: () => {
            child.kill('SIGTERM');
            return exited;
          },
          stderr: () => err,
        });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}: ${err}`));
    });
  });
}

/** A process's command line, argument by argument (Linux). */
export function commandLine(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a) => a.length > 0);
}

/** Process ids of the direct children of a process (Linux). */
export function childPids(pid: number): number[] {
  const out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' });
  return out.split('\n').map((l) => Number(l.trim())).filter((n) => n > 0);
}

/** Registers sites (the standard fixture by default) through `forecastd farms import`, written as a registry file in dir. */
export async function importFarms(db: string, dir: string, farms: readonly FarmFixture[] = FARMS): Promise<void> {
  const file = join(dir, `farms-${farms.length}.csv`);
  writeFileSync(file, farmsCsv(farms));
  const r = await runCli(['farms', 'import', file, '--db', db]);
  assert.equal(r.code, 0, r.stderr);
}
