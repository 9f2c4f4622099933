/**
 * Writing the CSV delivery format (INTERFACE.md section 7): header
 * `date_time` then the chosen fields in catalogue order, LF line ends, no BOM,
 * Beijing date_time with offset, empty cell for a missing value.
 */
import { ELEMENT_NAMES } from './elements.js';
import { gridTexts } from './dateTexts.js';
import type { SeriesView } from './seriesView.js';

export function csvHeader(elements: readonly number[]): string {
  return ['date_time', ...elements.map((e) => ELEMENT_NAMES[e]!)].join(',') + '\n';
}

/** Records [from, to) of a series as CSV text including the header. */
export function renderCsv(
  view: SeriesView,
  issueMs: number,
  elements: readonly number[],
  from = 0,
  to = view.length,
): string {
  const texts = elements.map((e) => {
    const out: string[] = new Array<string>(to - from);
    view.texts(e, from, to, out, '');
    return out;
  });
  const dates = gridTexts(issueMs);
  const lines: string[] = [csvHeader(elements)];
  for (let i = from; i < to; i++) {
    let line = dates[view.steps[i]!]!;
    for (const col of texts) line += ',' + col[i - from];
    lines.push(line + '\n');
  }
  return lines.join('');
}

/** File name of a run's CSV: `<farm_id>_<yyyyMMddHH>.csv`. */
export const csvFileName = (farmId: string, issue: string): string => `${farmId}_${issue}.csv`;
