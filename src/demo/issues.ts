/** The demo run schedule: two runs a day, issued at 00 and 12 UTC. */
import { HOUR_MS } from '../domain/time.js';

/** The time between two runs of the demo schedule. */
export const RUN_INTERVAL_MS = 12 * HOUR_MS;

/**
 * Epoch ms of the last `count` runs at 00 or 12 UTC that are at or before
 * `nowMs`, newest first. The epoch is 00 UTC, so run times are exactly the
 * multiples of 12 hours.
 */
export function demoIssues(nowMs: number, count: number): number[] {
  if (!Number.isFinite(nowMs)) throw new Error(`demoIssues: now must be a finite time, got ${nowMs}`);
  const latest = Math.floor(nowMs / RUN_INTERVAL_MS) * RUN_INTERVAL_MS;
  const out: number[] = [];
  for (let i = 0; i < Math.floor(count); i++) out.push(latest - i * RUN_INTERVAL_MS);
  return out;
}
