/**
 * The shared-mode decision, taken from this process's state alone: a bucket
 * spends its lease (tokens it took from the shared bucket in Redis) first;
 * with none left it may let a few requests through on credit (creditOf)
 * while its estimate of the shared level says there are tokens, reporting
 * that credit (debt) with its next sync. With the credit used up and tokens
 * still believed there, the answer hangs on the sync under way: `take`
 * refuses (Retry-After 1), `acquire` waits for it. A refused request costs
 * nothing. A sync asks for twice what the bucket used since its last one
 * (one to two chunks) plus one token per waiting request, carries the debt,
 * and brings back the shared level, from which the
 * estimate goes on refilling locally until the next one. redisLimiter.ts says
 * why this bounds the error.
 */
import { type Bucket, describe, EPS, refill } from './bucket.js';
import type { Decision } from './decision.js';

/** Tokens asked for per sync: `fraction` of the burst, at least 1. */
export const chunkOf = (b: Bucket, fraction: number): number => {
  const c = Math.ceil(b.burst * fraction - EPS);
  return c > 1 ? c : 1;
};

/**
 * The most a process lets through on credit while its sync is under way: `fraction` of the burst, rounded
 * down, so none for a burst under 1 / fraction (40 by default). Each process sharing a key may pass its credit
 * before the others learn of it; at least one token each, as for the lease, let a burst of 3 over two
 * processes pass 4 or 5, where the limit must hold within a tenth.
 */
export const creditOf = (b: Bucket, fraction: number): number => Math.floor(b.burst * fraction + EPS);

/** Most tokens a sync asks for ahead of need, in chunks: a busy bucket asks for twice what it used since its last sync, up to this. */
const MAX_CHUNKS = 2;

/** What the shared-mode look at a bucket found. */
export const enum Outcome {
  Refused,
  Allowed,
  /** Refused for now, but tokens are believed left: the sync under way decides. */
  Undecided,
}

export function takeLeased(b: Bucket, nowMs: number, credit: number, out: Decision): Outcome {
  refill(b, nowMs);
  b.uses++;
  if (b.lease >= 1 && b.waiters === null) {
    b.lease -= 1;
    b.used++;
    describe(out, b, true, b.lease + b.reserved + b.tokens);
    return Outcome.Allowed;
  }
  if (b.tokens >= 1 - EPS && b.debt < credit && b.waiters === null) {
    b.tokens -= 1;
    b.debt += 1;
    b.used++;
    describe(out, b, true, b.reserved + b.tokens);
    return Outcome.Allowed;
  }
  describe(out, b, false, b.lease + b.reserved + b.tokens);
  // Tokens believed left (in Redis, or coming with the sync in flight) beyond those already claimed by waiting requests.
  const claimed = b.waiters === null ? 0 : b.waiters.length;
  return b.tokens + b.reserved - claimed >= 1 - EPS ? Outcome.Undecided : Outcome.Refused;
}

/**
 * Whether to sync now: none under way, the lease down to half of what the
 * last sync asked for (asked ahead of need, so that requests rarely run on
 * credit or wait), and either tokens believed left in the shared bucket or
 * credit to report. With the shared bucket believed empty nothing is asked:
 * the local estimate refills at the rate and the first request after it
 * shows a token asks again.
 */
export const wantsSync = (b: Bucket, chunk: number): boolean =>
  !b.pending && b.lease <= (b.lastWant > chunk ? b.lastWant : chunk) >> 1 && (b.tokens >= 1 - EPS || b.debt > 0);

/** Appends what a sync carries for one bucket (want, give, debt) to `args`, noting in the bucket what was sent. */
export function prepareSync(b: Bucket, chunk: number, args: number[]): void {
  let give = 0;
  let want = 0;
  if (b.returning) {
    give = b.lease;
    b.lease = 0;
    const t = b.tokens + give;
    b.tokens = t < b.burst ? t : b.burst;
  } else {
    want = 2 * b.used;
    if (want < chunk) want = chunk;
    else if (want > MAX_CHUNKS * chunk) want = MAX_CHUNKS * chunk;
    b.lastWant = want;
  }
  b.used = 0;
  if (b.waiters !== null) want += b.waiters.length;
  // What this sync will most likely be granted is not there for credit meanwhile.
  const expected = Math.min(want, Math.floor(b.tokens + EPS));
  b.reserved = expected > 0 ? expected : 0;
  b.tokens -= b.reserved;
  b.sentDebt = b.debt;
  b.sentAt = b.ts;
  args.push(b.ts, b.rate, b.burst, want, give, b.debt);
}

/** Applies the answer of a sync: the tokens granted and the shared level (in thousandths) after it, at `b.sentAt`. */
export function applySync(b: Bucket, granted: number, levelMilli: number): void {
  b.lease += granted;
  b.debt -= b.sentDebt;
  b.sentDebt = 0;
  b.pending = false;
  b.returning = false;
  b.reserved = 0;
  let level = levelMilli / 1000;
  if (b.ts > b.sentAt) {
    level += ((b.ts - b.sentAt) * b.rate) / 1000;
    if (level > b.burst) level = b.burst;
  } else b.ts = b.sentAt;
  b.tokens = level - b.debt;
}

/**
 * Answers the waiting requests from the lease, oldest first, after a sync:
 * each takes a leased token while there is one; with none left they are
 * refused if the shared bucket is empty, and otherwise go on waiting for the
 * next sync (which asks for them). Returns whether some still wait.
 */
export function serveWaiters(b: Bucket): boolean {
  const waiters = b.waiters;
  if (waiters === null) return false;
  let i = 0;
  for (; i < waiters.length; i++) {
    const w = waiters[i]!;
    if (b.lease >= 1) {
      b.lease -= 1;
      b.used++;
      w.resolve(describe(w.out, b, true, b.lease + b.tokens));
    } else if (b.tokens < 1 - EPS) w.resolve(describe(w.out, b, false, b.tokens));
    else break;
  }
  if (i === waiters.length) {
    b.waiters = null;
    return false;
  }
  if (i > 0) waiters.splice(0, i);
  return true;
}

/**
 * Answers the waiting requests when the sync is late (past the deadline): as
 * `take` would, from the lease, then on credit (creditOf), then refused
 * with Retry-After 1. A slow Redis thus costs refusals, never more than the
 * bound lets through; a Redis that stops answering is declared down after
 * the command deadline, and per-process buckets take over.
 */
export function settleLateWaiters(b: Bucket, credit: number): void {
  const waiters = b.waiters;
  if (waiters === null) return;
  b.waiters = null;
  for (const w of waiters) {
    if (b.lease >= 1) {
      b.lease -= 1;
      b.used++;
      w.resolve(describe(w.out, b, true, b.lease + b.reserved + b.tokens));
    } else if (b.tokens >= 1 - EPS && b.debt < credit) {
      b.tokens -= 1;
      b.debt += 1;
      b.used++;
      w.resolve(describe(w.out, b, true, b.reserved + b.tokens));
    } else w.resolve(describe(w.out, b, false, b.lease + b.reserved + b.tokens));
  }
}
