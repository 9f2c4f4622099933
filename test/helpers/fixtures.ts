/** Shared test fixtures: temporary folders, CSV texts, real store files and apps. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ELEMENT_NAMES } from '../../src/domain/elements.js';
import { DEFAULT_MATCH_RADIUS_KM, DEFAULT_RANGE } from '../../src/domain/limits.js';
import { MAX_STEP, STEP_MS } from '../../src/domain/run.js';
import { formatBeijing, parseIssue } from '../../src/domain/time.js';
import { buildApp } from '../../src/http/app.js';
import type { SiteRules } from '../../src/query/siteLookup.js';
import { openStore } from '../../src/store/openStore.js';
import type { Store } from '../../src/store/store.js';
import { readFarmsCsv } from '../../src/ingest/farmsCsv.js';
import { readRunCsv } from '../../src/ingest/runCsv.js';
import { freshPgDatabase } from './pg.js';

/** A fresh temporary folder, removed by the returned cleanup. */
export function tempDir(prefix = 'forecastd-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface FarmFixture {
  farmId: string;
  lat: number;
  lon: number;
  name: string;
}

export const FARMS: readonly FarmFixture[] = [
  { farmId: 'WF_A', lat: 40.5, lon: 95.25, name: 'Wind A' },
  { farmId: 'PV_B', lat: 36.125, lon: 101.5, name: 'Solar B' },
  { farmId: 'WF_C', lat: 43.8, lon: 87.6, name: 'Wind C' },
];

export function farmsCsv(farms: readonly FarmFixture[] = FARMS, extra?: { header: string[]; cells: (f: FarmFixture) => string[] }): string {
  const header = ['farm_id', 'lat', 'lon', 'name', ...(extra?.header ?? [])].join(',');
  const rows = farms.map((f) => [f.farmId, f.lat, f.lon, f.name, ...(extra ? extra.cells(f) : [])].join(','));
  return [header, ...rows].join('\n') + '\n';
}

/**
 * A deterministic value for (issue, step, element): distinct per cell, with
 * decimals and negatives, so that any mix-up of records or columns shows.
 */
export function cellValue(issue: string, step: number, element: number): number {
  const base = (Number(issue.slice(6)) % 1000) / 10; // differs per run
  return Math.round((element * 1000 + step + base) * 100) / 100 * (element === 14 ? -1 : 1);
}

export interface RunOptions {
  /** Grid steps to write (default all 0..1440). */
  steps?: readonly number[];
  /** Value of a cell; null writes an empty (missing) cell. Default cellValue. */
  value?: (step: number, element: number) => number | null;
}

/** Text of a valid run file for the issue, header in catalogue order. */
export function runCsv(issue: string, opts: RunOptions = {}): string {
  const issueMs = parseIssue(issue);
  if (issueMs === null) throw new Error(`bad issue ${issue}`);
  const steps = opts.steps ?? Array.from({ length: MAX_STEP + 1 }, (_, k) => k);
  const value = opts.value ?? ((k: number, e: number) => cellValue(issue, k, e));
  const lines = ['date_time,' + ELEMENT_NAMES.join(',')];
  for (const k of steps) {
    const cells = ELEMENT_NAMES.map((_, e) => {
      const v = value(k, e);
      return v === null ? '' : String(v);
    });
    lines.push(formatBeijing(issueMs + k * STEP_MS) + ',' + cells.join(','));
  }
  return lines.join('\n') + '\n';
}

export const DEFAULT_RULES: SiteRules = { range: DEFAULT_RANGE, matchRadiusKm: DEFAULT_MATCH_RADIUS_KM };

/** Which adapter the store-backed tests run against: FORECASTD_TEST_STORE = sqlite (default) or postgres. */
export const TEST_STORE_KIND: 'sqlite' | 'postgres' = process.env.FORECASTD_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

/** A fresh store URL of the adapter under test (a new SQLite file or a new PostgreSQL database). */
export async function testDbUrl(): Promise<{ url: string; dir: string; drop: () => Promise<void> }> {
  const t = tempDir();
  if (TEST_STORE_KIND === 'postgres') {
    const db = await freshPgDatabase();
    return {
      url: db.url,
      dir: t.dir,
      drop: async () => {
        await db.drop();
        t.cleanup();
      },
    };
  }
  return { url: `sqlite:${join(t.dir, 'store.db')}`, dir: t.dir, drop: async () => t.cleanup() };
}

/** A fresh, real store of the adapter under test, and a temporary folder beside it. */
export async function testStore(): Promise<{ store: Store; url: string; dir: string; cleanup: () => Promise<void> }> {
  const db = await testDbUrl();
  const store = await openStore(db.url);
  return {
    store,
    url: db.url,
    dir: db.dir,
    cleanup: async () => {
      await store.close();
      await db.drop();
    },
  };
}

export async function testApp(store: Store, rules: SiteRules = DEFAULT_RULES) {
  const app = await buildApp({ store, rules, version: 'test' });
  await app.ready();
  return app;
}

/** Registers the farms and publishes runs through the real CSV readers. */
/** Two runs of a wind site and one of a solar site: what the HTTP tests that compare answers serve. */
export const THREE_RUNS: ReadonlyArray<{ farmId: string; issue: string }> = [
  { farmId: 'WF_A', issue: '2026112000' },
  { farmId: 'WF_A', issue: '2026112012' },
  { farmId: 'PV_B', issue: '2026112000' },
];

export async function seed(
  store: Store,
  runs: ReadonlyArray<{ farmId: string; issue: string; opts?: RunOptions }>,
  farms: readonly FarmFixture[] = FARMS,
): Promise<void> {
  await store.upsertFarms(readFarmsCsv(Buffer.from(farmsCsv(farms))));
  for (const r of runs) {
    const run = readRunCsv(`${r.farmId}_${r.issue}.csv`, Buffer.from(runCsv(r.issue, r.opts)));
    await store.putRun({ farmId: run.farmId, issue: run.issue, series: run.series });
  }
}

/**
 * Calls probe until done(result) holds or ms have passed, and returns the last
 * result: for what a store promises within a bound (another process's commit
 * is seen within its changePollMs), asserted on by the caller.
 */
export async function eventually<T>(probe: () => Promise<T>, done: (r: T) => boolean, ms: number): Promise<T> {
  const deadline = performance.now() + ms;
  for (;;) {
    const r = await probe();
    if (done(r) || performance.now() > deadline) return r;
    await new Promise((res) => setTimeout(res, 5));
  }
}
