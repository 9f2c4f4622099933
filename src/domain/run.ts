/**
 * The run time grid and the in-memory form of one (site, run) series.
 * Valid times of a run are issue + k * 15 min, k = 0 ... 1440 (+0h ... +360h).
 */
import { ELEMENT_COUNT } from './elements.js';
import { MINUTE_MS } from './time.js';

export const STEP_MINUTES = 15;
export const STEP_MS = STEP_MINUTES * MINUTE_MS;
export const MAX_STEP = 1440;
export const HORIZON_MS = MAX_STEP * STEP_MS;

/**
 * One site's forecast of one run, columnar. `steps[i]` is the grid index k of
 * record i (strictly ascending); `columns[e][i]` is the value of catalogue
 * element e at that record, NaN where the value is missing.
 */
export interface RunSeries {
  readonly steps: Uint16Array;
  readonly columns: readonly Float64Array[];
}

export function emptySeries(records: number): { steps: Uint16Array; columns: Float64Array[] } {
  const columns: Float64Array[] = [];
  for (let e = 0; e < ELEMENT_COUNT; e++) columns.push(new Float64Array(records));
  return { steps: new Uint16Array(records), columns };
}
