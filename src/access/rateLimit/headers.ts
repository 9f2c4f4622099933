/**
 * The rate-limit answer headers (contract section 10), the structured form of
 * the IETF RateLimit-header draft:
 *   RateLimit-Policy: "default";q=B;w=W   (W = ceil(B/R) seconds)
 *   RateLimit: "default";r=N;t=T          (N whole tokens left, T seconds until full)
 *   Retry-After: S                        (whole seconds, at least 1)
 * Divisions of decimal rates are not exact in binary (3 / 0.3 is
 * 10.000000000000002), so seconds are rounded up only past a tolerance.
 */
import type { Decision } from './decision.js';

const TOLERANCE = 1e-9;

/** Rounds a duration in seconds up to whole seconds, ignoring binary rounding noise; never below 0. */
export const ceilSeconds = (s: number): number => (s > TOLERANCE ? Math.ceil(s - TOLERANCE) : 0);

/** Seconds for `deficit` tokens to come back at `rate` per second, as a Retry-After value: at least 1. */
export const retryAfterSeconds = (deficit: number, rate: number): number => Math.max(1, ceilSeconds(deficit / rate));

const policies = new Map<number, Map<number, string>>();
let policyCount = 0;

/** `"default";q=B;w=W`. Memoised per (burst, rate): the same few values recur on every request. */
export function policyHeader(burst: number, rate: number): string {
  let byRate = policies.get(burst);
  const hit = byRate?.get(rate);
  if (hit !== undefined) return hit;
  const text = `"default";q=${burst};w=${ceilSeconds(burst / rate)}`;
  if (policyCount >= 4096) (policies.clear(), (policyCount = 0), (byRate = undefined));
  if (byRate === undefined) policies.set(burst, (byRate = new Map()));
  byRate.set(rate, text);
  policyCount++;
  return text;
}

/** `"default";r=N;t=T` for a decision. */
export const limitHeader = (d: Decision): string => `"default";r=${d.remaining};t=${d.resetS}`;
