/**
 * The forecast window and paging arithmetic: which records of a run a query
 * selects (inclusive window) and which of those one page holds.
 */
import { badParameter } from './errors.js';
import { HORIZON_MS, STEP_MS } from './run.js';
import { formatBeijing } from './time.js';

export interface TimeWindow {
  readonly startMs: number;
  readonly endMs: number;
}

/** The window of a query over a run; defaults +0h .. +360h; start > end is malformed. */
export function resolveWindow(issueMs: number, startMs: number | undefined, endMs: number | undefined): TimeWindow {
  const start = startMs ?? issueMs;
  const end = endMs ?? issueMs + HORIZON_MS;
  if (start > end) {
    // A bound not given is the run's own: the message names that, not a parameter the client did not send.
    if (startMs === undefined) {
      throw badParameter(`Query parameter end must not be earlier than start, which is the run's issue time ${formatBeijing(issueMs)} when not given.`);
    }
    if (endMs === undefined) {
      throw badParameter(`Query parameter start must not be later than end, which is the run's last step ${formatBeijing(end)} when not given.`);
    }
    throw badParameter('Query parameter start must not be later than end.');
  }
  return { startMs: start, endMs: end };
}

/** First index i with steps[i] >= k (steps ascending). */
function lowerBound(steps: ArrayLike<number>, k: number): number {
  let lo = 0;
  let hi = steps.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (steps[mid]! < k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index range [from, to) of the records of a run that lie inside the window. */
export function windowRecords(steps: ArrayLike<number>, issueMs: number, w: TimeWindow): { from: number; to: number } {
  const kStart = Math.ceil((w.startMs - issueMs) / STEP_MS);
  const kEnd = Math.floor((w.endMs - issueMs) / STEP_MS);
  if (kEnd < kStart) return { from: 0, to: 0 };
  const from = lowerBound(steps, kStart);
  const to = lowerBound(steps, kEnd + 1);
  return { from, to: Math.max(from, to) };
}

/** 1-based page of `size` over `total` records -> offsets [from, to) relative to the first. */
export function pageSlice(total: number, page: number, size: number): { from: number; to: number } {
  const from = Math.min(total, (page - 1) * size);
  const to = Math.min(total, from + size);
  return { from, to };
}

/**
 * Offset of the first item of a 1-based page, for a store query. Pages far past
 * any real count are clamped: they are empty either way, and the store's integer
 * parameters stay in range.
 */
export const pageOffset = (page: number, size: number): number => Math.min((page - 1) * size, 2 ** 31 - 1);
