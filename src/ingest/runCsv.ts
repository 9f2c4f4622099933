/**
 * The strict reader of a run file (INTERFACE.md section 7): file name
 * `<farm_id>_<yyyyMMddHH>.csv`, header `date_time` + the fifteen fields in any
 * order, rows strictly ascending on the run's 15-minute grid within +0h..+360h,
 * plain decimal values or empty for missing. Any fault rejects the whole file.
 */
import { ELEMENT_COUNT, ELEMENT_NAMES, elementIndex } from '../domain/elements.js';
import { FARM_ID_PATTERN } from '../domain/limits.js';
import { emptySeries, MAX_STEP, STEP_MS, type RunSeries } from '../domain/run.js';
import { parseDateTime, parseIssue } from '../domain/time.js';
import { readCanonicalRun } from './canonicalRun.js';
import { csvCells, textLines } from './csvLine.js';
import { readHeader } from './runHeader.js';
import { DECIMAL, fault, quote } from './fault.js';

export interface ValidatedRun {
  readonly farmId: string;
  readonly issue: string;
  readonly issueMs: number;
  readonly series: RunSeries;
}

/** farm_id and issue named by a run file's base name; throws a FaultError. */
export function parseRunFileName(baseName: string): { farmId: string; issue: string; issueMs: number } {
  const m = /^(.*)_([^_]*)\.csv$/i.exec(baseName);
  if (!m) {
    throw fault(0, 0, `file name ${quote(baseName)} is not <farm_id>_<yyyyMMddHH>.csv`);
  }
  const [, farmId, issue] = m as unknown as [string, string, string];
  if (!FARM_ID_PATTERN.test(farmId)) {
    throw fault(0, 0, `file name ${quote(baseName)}: farm_id must be 1-64 characters of A-Z a-z 0-9 _ - .`);
  }
  const issueMs = parseIssue(issue);
  if (issueMs === null) {
    throw fault(0, 0, `file name ${quote(baseName)}: issue ${quote(issue)} is not a real UTC date and hour yyyyMMddHH`);
  }
  return { farmId, issue, issueMs };
}

/**
 * Reads one run file; throws a FaultError (line, column, message) at the first fault.
 * A canonical file is read from its bytes (canonicalRun.ts); any other, valid or not,
 * by the line reader below, which also names the first fault. `scratch`: see readCanonicalRun.
 */
export function readRunCsv(baseName: string, bytes: Uint8Array, scratch?: RunSeries): ValidatedRun {
  const { farmId, issue, issueMs } = parseRunFileName(baseName);
  const series = readCanonicalRun(bytes, issueMs, scratch) ?? readRunLines(bytes, issue, issueMs);
  return { farmId, issue, issueMs, series };
}

/** The line reader: any valid file, and the first fault of any other. */
export function readRunLines(bytes: Uint8Array, issue: string, issueMs: number): RunSeries {
  // A header and one record more than a run holds are enough to name the count as the fault.
  const text = textLines(bytes, MAX_STEP + 3);
  if ('badLine' in text) throw fault(text.badLine, text.badColumn, 'file is not valid UTF-8');
  const { lines } = text;
  const columnOf = readHeader(lines[0]);
  const rows = (text.total ?? lines.length) - 1;
  if (rows === 0) throw fault(2, 1, 'file holds a header but no records');
  if (rows > MAX_STEP + 1) {
    throw fault(MAX_STEP + 3, 1, `file holds ${rows} records; a run has at most ${MAX_STEP + 1} (+0h to +360h)`);
  }
  const series = emptySeries(rows);
  let prevStep = -1;
  for (let r = 0; r < rows; r++) prevStep = readRow(lines[r + 1]!, r, issue, issueMs, prevStep, columnOf, series);
  return series;
}

/** Reads one row by splitting it into cells; throws a FaultError naming the first fault. Returns its step. */
function readRow(
  line: string,
  r: number,
  issue: string,
  issueMs: number,
  prevStep: number,
  columnOf: readonly number[],
  series: ReturnType<typeof emptySeries>,
): number {
  const width = ELEMENT_COUNT + 1;
  const lineNo = r + 2;
  if (line.trim() === '') throw fault(lineNo, 1, line === '' ? 'empty line' : 'line holds only white space');
  const split = csvCells(line, width);
  if ('quoteFault' in split) throw fault(lineNo, split.quoteFault, 'row has unbalanced quotes');
  const { cells, count } = split;
  if (count !== width) {
    throw fault(lineNo, Math.min(count, width) + 1, `row has ${count} ${count === 1 ? 'cell' : 'cells'}, expected ${width}`);
  }
  const dt = cells[0]!;
  const ms = parseDateTime(dt);
  if (ms === null) throw fault(lineNo, 1, `date_time ${quote(dt)} is not an ISO 8601 date-time`);
  const offset = ms - issueMs;
  if (offset % STEP_MS !== 0) {
    throw fault(lineNo, 1, `date_time ${quote(dt)} is not on the run's 15-minute grid`);
  }
  const step = offset / STEP_MS;
  if (step < 0 || step > MAX_STEP) {
    throw fault(lineNo, 1, `date_time ${quote(dt)} is outside the run (+0h to +360h from ${issue} UTC)`);
  }
  if (step <= prevStep) {
    throw fault(lineNo, 1, `date_time ${quote(dt)} is not later than the previous row's`);
  }
  series.steps[r] = step;
  for (let c = 1; c < width; c++) {
    const cell = cells[c]!;
    const col = series.columns[columnOf[c - 1]!]!;
    if (cell === '') {
      col[r] = NaN;
      continue;
    }
    if (!DECIMAL.test(cell)) {
      throw fault(lineNo, c + 1, `${ELEMENT_NAMES[columnOf[c - 1]!]} value ${quote(cell)} is not a plain decimal number`);
    }
    const v = Number(cell);
    if (!Number.isFinite(v)) {
      throw fault(lineNo, c + 1, `${ELEMENT_NAMES[columnOf[c - 1]!]} value ${quote(cell)} is too large`);
    }
    col[r] = v;
  }
  return step;
}
