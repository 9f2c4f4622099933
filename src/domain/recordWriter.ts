/**
 * Writing the values of a run's records as text bytes, shared by the JSON body
 * and the CSV format so that both spell every number the same way: scaled
 * columns digit by digit, raw columns by shortest round-trip text.
 */
import { ByteSink } from './byteSink.js';
import { ELEMENT_COUNT } from './elements.js';
import { numberText } from './numberText.js';
import { MAX_STEP } from './run.js';
import type { SeriesView } from './seriesView.js';

// Rendering is synchronous, so one set of column buffers serves every render.
const scratch = Array.from({ length: ELEMENT_COUNT }, () => new Float64Array(MAX_STEP + 1));

export interface Columns {
  /** Per chosen element, its values for the records (scaled ints or raw doubles, NaN = missing). */
  readonly values: readonly Float64Array[];
  /** Per chosen element, decimals of the scaled ints, or -1 for raw doubles. */
  readonly decimals: readonly number[];
}

/** Decodes the chosen columns of records [from, to); valid until the next call. */
export function readColumns(view: SeriesView, elements: readonly number[], from: number, to: number): Columns {
  const values: Float64Array[] = [];
  const decimals: number[] = [];
  for (let j = 0; j < elements.length; j++) {
    const out = scratch[j]!;
    decimals.push(view.column(elements[j]!, from, to, out));
    values.push(out);
  }
  return { values, decimals };
}

/** Writes one present value (v not NaN) in its column's form. */
export function writeValue(sink: ByteSink, v: number, decimals: number): void {
  if (decimals >= 0) sink.scaled(v, decimals);
  else sink.ascii(numberText(v));
}
