/**
 * Writing the CSV delivery format (INTERFACE.md section 7): header
 * `date_time` then the chosen fields in catalogue order, LF line ends, no BOM,
 * Beijing date_time with offset, empty cell for a missing value.
 */
import { ELEMENT_NAMES } from './elements.js';
import { asciiBytes, ByteSink } from './byteSink.js';
import { writeRecords, type RecordStyle } from './recordWriter.js';
import type { SeriesView } from './seriesView.js';

export function csvHeader(elements: readonly number[]): string {
  return ['date_time', ...elements.map((e) => ELEMENT_NAMES[e]!)].join(',') + '\n';
}

const CSV_STYLE: RecordStyle = {
  open: new Uint8Array(0),
  afterDate: new Uint8Array(0),
  field: ELEMENT_NAMES.map(() => asciiBytes(',')),
  missing: new Uint8Array(0),
  close: asciiBytes('\n'),
  separator: new Uint8Array(0),
};

/** Writes records [from, to) of a series as CSV, header first. */
export function writeCsv(
  sink: ByteSink,
  view: SeriesView,
  issueMs: number,
  elements: readonly number[],
  from = 0,
  to = view.length,
): void {
  sink.ascii(csvHeader(elements));
  writeRecords(sink, CSV_STYLE, view, issueMs, elements, from, to);
}

/** Records [from, to) of a series as CSV bytes including the header. */
export function renderCsv(view: SeriesView, issueMs: number, elements: readonly number[], from = 0, to = view.length): Uint8Array {
  const sink = new ByteSink(1024);
  writeCsv(sink, view, issueMs, elements, from, to);
  return sink.take();
}

/** File name of a run's CSV: `<farm_id>_<yyyyMMddHH>.csv`. */
export const csvFileName = (farmId: string, issue: string): string => `${farmId}_${issue}.csv`;
