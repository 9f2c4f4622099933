/** Settings shared by commands, from options and the environment. */
import { readFileSync } from 'node:fs';
import { DEFAULT_DB } from '../store/openStore.js';
import { UsageError } from './usage.js';

export const dbOption = { db: { type: 'string' } } as const;

export function dbUrl(value: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return value ?? env.FORECASTD_DB ?? DEFAULT_DB;
}

export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** A whole number option within bounds, or a UsageError naming it. */
export function intOption(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, got "${value}"`);
  }
  return Number(value);
}

export function numberOption(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < min) {
    throw new UsageError(`--${name} must be a number >= ${min}, got "${value}"`);
  }
  return n;
}
