/**
 * When a failed webhook delivery is tried again (INTERFACE.md section 14).
 *
 * | retry | at most this long after the failure before it |
 * |---|---|
 * | 1 | 10 s |
 * | 2 | 1 min |
 * | 3 | 5 min |
 * | 4 | 30 min |
 * | 5 | 2 h |
 * | 6 | 5 h |
 * | 7, 8, 9 | 10 h |
 *
 * Each delay is drawn between 80 % and 100 % of its bound (jitter, so that
 * endpoints that failed together are not all tried again at one moment). A
 * failure of the tenth attempt (the ninth retry) gives up. Even with every
 * delay at its shortest the retries span 30 h, so a notice is tried for at
 * least 24 h after its first attempt (a process that was down only adds time).
 */

const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;

/** The bound of the delay before retry n (index n - 1), after the failure before it, ms. */
export const RETRY_DELAYS_MS: readonly number[] = Object.freeze([10 * S, 1 * MIN, 5 * MIN, 30 * MIN, 2 * H, 5 * H, 10 * H, 10 * H, 10 * H]);

/** A delay is at least this share of its bound. */
export const JITTER_MIN = 0.8;

/**
 * How much later than its time a retry may start: deliverers look for due deliveries once a second
 * (POLL_MS in deliverer.ts), and then connect. A retry is timed this much before its bound, so that it is made
 * within the bound (the contract's "within 10 s of the failure"), not up to a poll after it.
 */
export const PICKUP_MS = 1_500;

/** Attempts in all: the first and one per retry; a failure of the last gives up. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** How long retries go on for at least, after the first attempt, ms. */
export const RETRY_SPAN_MIN_MS = 24 * H;

export interface ScheduleOptions {
  /** A number in [0, 1); Math.random by default. */
  readonly random?: () => number;
  /** Multiplies every delay (1 = the schedule above; only tests take less). */
  readonly scale?: number;
}

/**
 * When to try again after a failed attempt: `attempts` made so far (the
 * failed one included), the failure at `failedAt` (epoch ms). undefined: give up.
 */
export function nextAttemptAt(attempts: number, failedAt: number, o: ScheduleOptions = {}): number | undefined {
  if (attempts >= MAX_ATTEMPTS) return undefined;
  const bound = RETRY_DELAYS_MS[Math.max(0, attempts - 1)]!;
  const share = JITTER_MIN + (1 - JITTER_MIN) * (o.random ?? Math.random)();
  return failedAt + Math.max(1, Math.round((bound - PICKUP_MS) * share * (o.scale ?? 1)));
}
