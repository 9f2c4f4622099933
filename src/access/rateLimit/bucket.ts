/**
 * One token bucket: capacity `burst`, refilled continuously at `rate` tokens
 * per second, 1 token per request, a refused request costing nothing.
 *
 * The same object serves both modes of a limiter. Per process, `tokens` is the
 * bucket's level. Shared through Redis (see lease.ts), `tokens` is this
 * process's estimate of the shared bucket's level (net of what it let through
 * on credit and has not reported yet) and `lease` the tokens it holds for
 * itself. Fields are plain numbers on a class of fixed shape so that the hot
 * path stays monomorphic and allocates nothing.
 */
import type { Decision } from './decision.js';
import { ceilSeconds, retryAfterSeconds } from './headers.js';

/** Slack for binary rounding of refills: a level of 0.9999999999 is a whole token. */
export const EPS = 1e-9;
const MIN_RATE = 1e-6;

/** A request whose answer waits for the sync under way. */
export interface Waiter {
  readonly out: Decision;
  readonly resolve: (d: Decision) => void;
}

export class Bucket {
  rate = 1;
  burst = 1;
  /** Level (per process) or estimated shared level (shared), at `ts`. */
  tokens = 1;
  /** Caller's clock (ms) of `tokens`. */
  ts = 0;
  /** Shared mode: tokens leased from the shared bucket and not used yet (whole). */
  lease = 0;
  /** Shared mode: requests let through on credit, not yet acknowledged by Redis. */
  debt = 0;
  /** Shared mode: tokens taken (leased or on credit) since the last sync left, and what that sync asked for. */
  used = 0;
  lastWant = 0;
  /** Shared mode: the part of `debt` carried by the sync in flight, and the bucket's clock when it left. */
  sentDebt = 0;
  sentAt = 0;
  /** Shared mode: tokens the sync in flight is expected to be granted, taken out of `tokens` meanwhile. */
  reserved = 0;
  /** Shared mode: a sync for this bucket is queued or in flight. */
  pending = false;
  /** Shared mode: the queued sync gives the lease back instead of asking for more. */
  returning = false;
  /** Shared mode: listed among the buckets that hold a lease or debt. */
  holding = false;
  /** The limiter's mode epoch these fields belong to. */
  epoch = 0;
  /** Requests seen, that count at the previous idle check, and idle checks since it last changed. */
  uses = 0;
  usesSeen = 0;
  quietTicks = 0;
  /** Shared mode: requests waiting for the sync under way (see RateLimiter.acquire), oldest first. */
  waiters: Waiter[] | null = null;
  /** Redis key of the shared bucket ('' for a bucket that is never shared). */
  redisKey = '';

  constructor(redisKey: string, rate: number, burst: number, nowMs: number, epoch: number) {
    this.reset(redisKey, rate, burst, nowMs, epoch);
  }

  /** Makes this a full bucket for a new id (buckets are recycled, see bucketTable.ts). */
  reset(redisKey: string, rate: number, burst: number, nowMs: number, epoch: number): void {
    this.setLimits(rate, burst);
    this.tokens = this.burst;
    this.ts = nowMs;
    this.lease = this.debt = this.used = this.lastWant = this.sentDebt = this.sentAt = this.reserved = 0;
    this.pending = this.returning = this.holding = false;
    this.epoch = epoch;
    this.uses = this.usesSeen = this.quietTicks = 0;
    this.waiters = null;
    this.redisKey = redisKey;
  }

  /** Whether nothing outside the table can refer to this bucket, so that it may be recycled. */
  get detached(): boolean {
    return !this.pending && !this.holding && this.waiters === null;
  }

  /** Applies the key's current rate and burst (read at request time); the level carries over, capped. */
  setLimits(rate: number, burst: number): void {
    this.rate = rate > MIN_RATE ? rate : MIN_RATE;
    this.burst = burst >= 1 ? burst : 1;
    if (this.tokens > this.burst) this.tokens = this.burst;
  }
}

/** Brings `tokens` up to `nowMs`; a clock that went back refills nothing. */
export function refill(b: Bucket, nowMs: number): void {
  if (nowMs > b.ts) {
    const t = b.tokens + ((nowMs - b.ts) * b.rate) / 1000;
    b.tokens = t < b.burst ? t : b.burst;
    b.ts = nowMs;
  }
}

/** Fills `out` for a bucket whose visible level after this request is `level`. */
export function describe(out: Decision, b: Bucket, allowed: boolean, level: number): Decision {
  const view = level < b.burst ? level : b.burst;
  out.allowed = allowed;
  out.remaining = allowed && view > 0 ? Math.floor(view + EPS) : 0;
  out.resetS = ceilSeconds((b.burst - view) / b.rate);
  out.retryAfterS = allowed ? 0 : retryAfterSeconds(1 - view, b.rate);
  return out;
}

/** The per-process decision: take a token if there is one. */
export function takeLocal(b: Bucket, nowMs: number, out: Decision): Decision {
  refill(b, nowMs);
  if (b.tokens >= 1 - EPS) {
    b.tokens -= 1;
    return describe(out, b, true, b.tokens);
  }
  return describe(out, b, false, b.tokens);
}

/** Whether dropping the bucket loses nothing: full at `nowMs`, holding no lease, owing nothing, no sync under way. */
export function isIdleFull(b: Bucket, nowMs: number): boolean {
  if (b.pending || b.lease !== 0 || b.debt !== 0 || b.waiters !== null) return false;
  const t = nowMs > b.ts ? b.tokens + ((nowMs - b.ts) * b.rate) / 1000 : b.tokens;
  return t >= b.burst - EPS;
}
