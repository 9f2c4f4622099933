/** Request paths for the HTTP benchmarks, drawn with a seeded generator. */
import { ELEMENT_NAMES } from '../../src/domain/elements.js';
import { HORIZON_MS, STEP_MS } from '../../src/domain/run.js';
import { formatBeijing, parseIssue } from '../../src/domain/time.js';

/** mulberry32: small, fast, deterministic. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const enc = encodeURIComponent;

/** Default page of the latest run of a random site. */
export function hotPaths(farmIds: readonly string[]): string[] {
  return farmIds.map((f) => `/api/v1/forecast?farm_id=${enc(f)}`);
}

/** Random site, run, window, fields, page size and page. */
export function mixedPaths(farmIds: readonly string[], issues: readonly string[], count: number, seed = 7): string[] {
  const r = rng(seed);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const issue = pick(r, issues);
    const issueMs = parseIssue(issue)!;
    const startMs = issueMs + Math.floor(r() * 1200) * STEP_MS;
    const endMs = Math.min(issueMs + HORIZON_MS, startMs + (24 + Math.floor(r() * 24 * 7)) * 4 * STEP_MS);
    const fields = ELEMENT_NAMES.filter(() => r() < 0.5);
    if (fields.length === 0) fields.push(pick(r, ELEMENT_NAMES));
    const size = pick(r, [24, 48, 96]);
    const records = Math.floor((endMs - startMs) / STEP_MS) + 1;
    const page = 1 + Math.floor(r() * Math.ceil(records / size));
    out.push(
      `/api/v1/forecast?farm_id=${enc(pick(r, farmIds))}&issue=${issue}` +
        `&start=${enc(formatBeijing(startMs))}&end=${enc(formatBeijing(endMs))}` +
        `&elements=${fields.join(',')}&size=${size}&page=${page}`,
    );
  }
  return out;
}

/** The whole run as CSV, random site and run. */
export function csvPaths(farmIds: readonly string[], issues: readonly string[], count: number, seed = 11): string[] {
  const r = rng(seed);
  return Array.from({ length: count }, () => `/api/v1/forecast?farm_id=${enc(pick(r, farmIds))}&issue=${pick(r, issues)}&format=csv`);
}
