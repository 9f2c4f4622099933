/**
 * Writing the CSV delivery format (INTERFACE.md section 7): header
 * `date_time` then the chosen fields in catalogue order, LF line ends, no BOM,
 * Beijing date_time with offset, empty cell for a missing value.
 */
import { ELEMENT_NAMES } from './elements.js';
import { numberText } from './numberText.js';
import { stepTime, type RunSeries } from './run.js';
import { formatBeijing } from './time.js';

export function csvHeader(elements: readonly number[]): string {
  return ['date_time', ...elements.map((e) => ELEMENT_NAMES[e]!)].join(',') + '\n';
}

/** Records [from, to) of a series as CSV text including the header. */
export function renderCsv(
  series: RunSeries,
  issueMs: number,
  elements: readonly number[],
  from = 0,
  to = series.steps.length,
): string {
  const lines: string[] = [csvHeader(elements)];
  for (let i = from; i < to; i++) {
    let line = formatBeijing(stepTime(issueMs, series.steps[i]!));
    for (const e of elements) {
      const v = series.columns[e]![i]!;
      line += ',' + (Number.isNaN(v) ? '' : numberText(v));
    }
    lines.push(line + '\n');
  }
  return lines.join('');
}

/** File name of a run's CSV: `<farm_id>_<yyyyMMddHH>.csv`. */
export const csvFileName = (farmId: string, issue: string): string => `${farmId}_${issue}.csv`;
