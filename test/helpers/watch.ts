/** Watched folders in tests: delivering files, counting where they ended, comparing runs with files. */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { RunSeries } from '../../src/domain/run.js';
import { readRunCsv } from '../../src/ingest/runCsv.js';
import type { FarmFixture } from './fixtures.js';

/** Every file under a folder (recursively), relative, `/`-separated, sorted. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (abs: string, rel: string): void => {
    for (const e of readdirSync(abs, { withFileTypes: true })) {
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) walk(join(abs, e.name), r);
      else out.push(r);
    }
  };
  if (existsSync(dir)) walk(dir, '');
  return out.sort();
}

/** Files in done/ and rejected/ (without the .error.txt reports), and the reports. */
export function placed(root: string): { done: string[]; rejected: string[]; reports: string[] } {
  const rejectedAll = filesUnder(join(root, 'rejected'));
  return {
    done: filesUnder(join(root, 'done')),
    rejected: rejectedAll.filter((f) => !f.endsWith('.error.txt')),
    reports: rejectedAll.filter((f) => f.endsWith('.error.txt')),
  };
}

/** Files in claims folders (heartbeats left out). */
export function claimsLeft(root: string): string[] {
  return filesUnder(join(root, '.forecastd', 'claims')).filter((f) => !f.endsWith('/.alive'));
}

/** Waits until cond() holds, polling; throws with the last state after ms. */
export async function waitUntil(cond: () => boolean | Promise<boolean>, ms: number, what: () => string = () => ''): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms ${what()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Writes a file beside the folder and renames it into place (the safe delivery). */
export function deliver(root: string, rel: string, text: string | Buffer, staging = join(root, '..', 'staging')): void {
  mkdirSync(staging, { recursive: true });
  const tmp = join(staging, `${process.pid}-${Math.random().toString(36).slice(2)}`);
  writeFileSync(tmp, text);
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  renameSync(tmp, join(root, rel));
}

export const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

/** A text fingerprint of a series: every step and value (NaN as such), so two series compare by it. */
export function seriesText(s: RunSeries): string {
  const parts = [Array.from(s.steps).join(',')];
  for (const c of s.columns) parts.push(Array.from(c, (v) => (Number.isNaN(v) ? 'NaN' : String(v))).join(','));
  return sha256(parts.join('\n'));
}

/** The fingerprint of a run file's series as the strict reader reads it. */
export const fileSeriesText = (name: string, bytes: Buffer | string): string => seriesText(readRunCsv(name, Buffer.from(bytes)).series);

/** n farms for tests that need many sites. */
export function manyFarms(n: number): FarmFixture[] {
  return Array.from({ length: n }, (_, i) => ({ farmId: `S${String(i).padStart(3, '0')}`, lat: 30 + i / 100, lon: 100 + i / 100, name: `Site ${i}` }));
}

/** A deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const readBytes = (path: string): Buffer => readFileSync(path);
export const exists = (path: string): boolean => existsSync(path);
export const sizeOf = (path: string): number => statSync(path).size;
