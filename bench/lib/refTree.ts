/**
 * An earlier commit of this repository, checked out and built for benchmarks that measure it against the
 * working tree: in data/bench/compare/SHA (a git worktree), built with this tree's compiler and
 * node_modules, so a comparison assumes the dependencies did not change in between.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BENCH_DIR } from './benchStore.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The executable (bin/forecastd.js) of revision rev, checked out and built on first use. */
export function refBin(rev: string): string {
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

/**
 * The bench store of sites x runs as the tree of `bin` builds it (under this tree's data/bench): the same
 * values, in the encoding of that tree's series format and its schema, so an older tree is never handed blobs
 * it cannot read nor a store migrated past what it knows (benchStore names its files by both).
 */
export function refStore(bin: string, sites: number, runs: number): string {
  const lib = pathToFileURL(join(bin, '..', '..', 'dist', 'bench', 'lib', 'benchStore.js')).href;
  const script = `const m = await import(${JSON.stringify(lib)}); process.stdout.write(await m.benchStore(${sites}, ${runs}, () => {}));`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' }).trim();
}
