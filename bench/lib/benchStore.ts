/**
 * Builds (once, then reuses) a store of N synthetic sites x R full runs of
 * realistic demo weather, for the benchmarks. Sites are spread around the demo
 * sites so the data looks like theirs.
 */
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DEMO_SITES, demoIssues, type DemoSite } from '../../src/demo/sites.js';
import { demoSeries } from '../../src/demo/weather.js';
import { SERIES_FORMAT } from '../../src/domain/codec.js';
import { formatIssue } from '../../src/domain/time.js';
import { openStore } from '../../src/store/openStore.js';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import type { NewRun } from '../../src/store/store.js';

export const BENCH_DIR = join(process.cwd(), 'data', 'bench');
/** A fixed clock, so that every build holds the same runs. */
export const BENCH_NOW = Date.UTC(2026, 10, 20, 13, 0, 0);
export const BENCH_SEED = 42;

export function benchSites(count: number): DemoSite[] {
  return Array.from({ length: count }, (_, i) => {
    const base = DEMO_SITES[i % DEMO_SITES.length]!;
    const ring = Math.floor(i / DEMO_SITES.length);
    const angle = ring * 2.399963; // golden angle: spreads copies without overlap
    const dist = 0.08 * Math.sqrt(ring);
    return {
      ...base,
      farmId: `${base.kind === 'wind' ? 'W' : 'S'}${String(i).padStart(5, '0')}`,
      name: `${base.name} ${ring}`,
      lat: Math.round((base.lat + dist * Math.sin(angle)) * 1e4) / 1e4,
      lon: Math.round((base.lon + dist * Math.cos(angle)) * 1e4) / 1e4,
    };
  });
}

export function benchIssues(runs: number): string[] {
  return demoIssues(BENCH_NOW, runs).map(formatIssue);
}

/** A bench site's run issued at issueMs, as the stores of the benchmarks hold it. */
export function benchRun(site: DemoSite, issueMs: number): NewRun {
  return { farmId: site.farmId, issue: formatIssue(issueMs), series: demoSeries(site, issueMs, BENCH_SEED) };
}

/** Path of a store of sites x runs, building it when absent. */
export async function benchStore(sites: number, runs: number, log: (m: string) => void = (m) => process.stderr.write(m + '\n')): Promise<string> {
  mkdirSync(BENCH_DIR, { recursive: true });
  // Named by the series format, so that a store written by an older encoder is not measured as this one's,
  // and by the schema version, which an older forecastd refuses to open (bench:compare serves both).
  const path = join(BENCH_DIR, `store-${sites}x${runs}-f${SERIES_FORMAT}-s${MIGRATIONS.length}.db`);
  if (existsSync(path)) return path;
  const tmp = `${path}.building`;
  rmSync(tmp, { force: true });
  const store = await openStore(tmp);
  const list = benchSites(sites);
  await store.upsertFarms(list.map((s) => ({ farmId: s.farmId, lat: s.lat, lon: s.lon, name: s.name, extra: [['kind', s.kind]] })));
  const issues = demoIssues(BENCH_NOW, runs);
  const t0 = Date.now();
  let done = 0;
  for (const issueMs of issues) {
    for (const s of list) {
      await store.putRun(benchRun(s, issueMs));
      if (++done % 500 === 0) log(`  built ${done}/${sites * runs} runs (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
    }
  }
  await store.close();
  rmSync(`${tmp}-wal`, { force: true });
  rmSync(`${tmp}-shm`, { force: true });
  renameSync(tmp, path);
  return path;
}
