/**
 * Writing the CSV delivery format (INTERFACE.md section 7): header
 * `date_time` then the chosen fields in catalogue order, LF line ends, no BOM,
 * Beijing date_time with offset, empty cell for a missing value.
 */
import { ELEMENT_NAMES } from './elements.js';
import { ByteSink } from './byteSink.js';
import { DATE_TEXT_BYTES, gridDateBytes } from './dateTexts.js';
import { readColumns, writeValue } from './recordWriter.js';
import type { SeriesView } from './seriesView.js';

export function csvHeader(elements: readonly number[]): string {
  return ['date_time', ...elements.map((e) => ELEMENT_NAMES[e]!)].join(',') + '\n';
}

/** Writes records [from, to) of a series as CSV, header first. */
export function writeCsv(
  sink: ByteSink,
  view: SeriesView,
  issueMs: number,
  elements: readonly number[],
  from = 0,
  to = view.length,
): void {
  const { values, decimals } = readColumns(view, elements, from, to);
  const dates = gridDateBytes(issueMs);
  const steps = view.steps;
  sink.ascii(csvHeader(elements));
  for (let i = from; i < to; i++) {
    const at = steps[i]! * DATE_TEXT_BYTES;
    sink.bytes(dates.subarray(at, at + DATE_TEXT_BYTES));
    for (let j = 0; j < values.length; j++) {
      sink.ascii(',');
      const v = values[j]![i - from]!;
      if (v === v) writeValue(sink, v, decimals[j]!);
    }
    sink.ascii('\n');
  }
}

/** Records [from, to) of a series as CSV bytes including the header. */
export function renderCsv(view: SeriesView, issueMs: number, elements: readonly number[], from = 0, to = view.length): Uint8Array {
  const sink = new ByteSink(256 + (to - from) * (DATE_TEXT_BYTES + 10 * elements.length));
  writeCsv(sink, view, issueMs, elements, from, to);
  return sink.take();
}

/** File name of a run's CSV: `<farm_id>_<yyyyMMddHH>.csv`. */
export const csvFileName = (farmId: string, issue: string): string => `${farmId}_${issue}.csv`;
