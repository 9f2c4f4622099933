/**
 * From the API's forecast items to the columns a chart draws: one x per 15-minute step of the window, each
 * field's values converted for display, the previous run on the same steps. A step that a run does not hold
 * (or holds as null) is null here, so the chart shows a gap rather than a line drawn across it.
 */
import { apiTimeMs, STEP_MS } from './time.js';

export type Item = Readonly<Record<string, number | string | null>> & { readonly date_time: string };

export type Column = (number | null)[];

export interface Aligned {
  /** Valid times, Unix seconds (the chart library's unit), every step from the first to the last. */
  readonly x: number[];
  /** The selected run's values by field, in display units. */
  readonly current: Record<string, Column>;
  /** The previous run's values on the same steps. */
  readonly previous: Record<string, Column>;
  /** Records of the selected run in the window: what the charts draw, what the API's `total` says. */
  readonly records: number;
}

export interface Conversion {
  (field: string, v: number): number;
}

/**
 * Lines both runs up on the grid issue + k × 15 min between `fromMs` and `toMs` (inclusive; the window,
 * already cut to the run's horizon).
 */
export function alignRuns(
  current: readonly Item[],
  previous: readonly Item[],
  fields: readonly string[],
  fromMs: number,
  toMs: number,
  convert: Conversion,
): Aligned {
  const n = toMs < fromMs ? 0 : Math.floor((toMs - fromMs) / STEP_MS) + 1;
  const x = new Array<number>(n);
  for (let k = 0; k < n; k++) x[k] = (fromMs + k * STEP_MS) / 1000;
  const place = (items: readonly Item[]): Record<string, Column> => {
    const cols: Record<string, Column> = {};
    for (const f of fields) cols[f] = new Array<number | null>(n).fill(null);
    for (const item of items) {
      const k = (apiTimeMs(item.date_time) - fromMs) / STEP_MS;
      if (!Number.isInteger(k) || k < 0 || k >= n) continue;
      for (const f of fields) {
        const v = item[f];
        if (typeof v === 'number') cols[f]![k] = convert(f, v);
      }
    }
    return cols;
  };
  return { x, current: place(current), previous: place(previous), records: current.length };
}

/** The selected run minus the previous one, step by step; a gap where either is missing. */
export function changeOf(current: Column, previous: Column): Column {
  return current.map((v, k) => {
    const p = previous[k];
    return v === null || p === null || p === undefined ? null : v - p;
  });
}

/** The grid's bounds for a run: the window asked for, cut to the run's 15-day horizon. */
export function gridBounds(issueMs: number, horizonSteps: number, startMs: number | undefined, endMs: number | undefined): [number, number] {
  const first = issueMs;
  const last = issueMs + horizonSteps * STEP_MS;
  const from = startMs === undefined ? first : Math.max(first, first + Math.ceil((startMs - first) / STEP_MS) * STEP_MS);
  const to = endMs === undefined ? last : Math.min(last, first + Math.floor((endMs - first) / STEP_MS) * STEP_MS);
  return [from, to];
}
