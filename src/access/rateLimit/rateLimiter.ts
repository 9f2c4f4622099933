/**
 * The rate limiter as the server sees it: a synchronous decision per request
 * from state in this process (no promise, no I/O, nothing allocated when the
 * caller passes its own `out`), whether or not the buckets are shared through
 * Redis (see redisLimiter.ts for how they are).
 */
import type { Decision, Namespace } from './decision.js';

export interface RateLimiter {
  /**
   * Takes one token from the bucket `id` of namespace `ns`, with the key's
   * current `rate` (tokens per second, > 0, decimals allowed) and `burst`
   * (capacity, >= 1), at `nowMs` (the caller's clock, milliseconds). Fills
   * and returns `out`, or the limiter's own scratch object (valid until the
   * next `take`) when none is given. Never throws for I/O reasons, never waits.
   * `id` is stored and, when shared, written into a Redis key name: pass a key's
   * stored id or hash, never the secret key.
   */
  take(ns: Namespace, id: string, rate: number, burst: number, nowMs: number, out?: Decision): Decision;
  /**
   * The same decision, except when shared and this process has used its lease
   * and credit while the shared bucket is believed to hold tokens (a burst
   * faster than a Redis round trip): `take` then refuses (Retry-After 1),
   * `acquire` returns a promise settled by the sync already under way (within
   * `waitMs`, default 20 ms, after which it answers as `take` would). Otherwise the answer is synchronous (no promise). The decision
   * is `out`, or a new object: it is never shared.
   */
  acquire(ns: Namespace, id: string, rate: number, burst: number, nowMs: number, out?: Decision): Decision | Promise<Decision>;
  /** Drops buckets that are full again and hold nothing; returns how many were dropped. */
  sweep(nowMs: number): number;
  /** Buckets held in memory, all namespaces together. */
  readonly size: number;
  /** Outages of the shared store seen so far (each reported once through onFault). */
  readonly faults: number;
  /** Whether decisions are shared through Redis right now (false per process, or while Redis is away). */
  readonly shared: boolean;
  /** Gives leased tokens back and closes the connection; later calls to take decide per process. */
  close(): Promise<void>;
}

export interface TableOptions {
  /** Most buckets kept per namespace (default 100,000); see bucketTable.ts for what happens beyond. */
  maxBuckets?: number;
}

export const DEFAULT_MAX_BUCKETS = 100_000;
