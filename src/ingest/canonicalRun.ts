/**
 * The byte reader of canonical run files: what a provider's exporter writes.
 * ASCII, LF or CRLF, rows in ascending order on the run's grid, each with the
 * run's own date_time text (`yyyy-MM-ddTHH:mm:ss+08:00`) and fifteen plain
 * decimals; usually every step from +0h, but a run may start later or skip
 * steps. It reads straight from the file's bytes, with no text decoding, line
 * splitting or strings per row, and gives up (returns null) at the first byte
 * it does not expect; the line reader then reads the file again and names the
 * fault, if there is one. Whatever it accepts, the line reader would read to
 * the same series: every value is the double Number(text) gives.
 */
import { DATE_TEXT_BYTES, gridBytes } from '../domain/dateTexts.js';
import { csvHeader } from '../domain/csvFormat.js';
import { ALL_ELEMENTS } from '../domain/elementsParam.js';
import { emptySeries, MAX_STEP, STEP_MS, type RunSeries } from '../domain/run.js';
import { parseDateTime } from '../domain/time.js';
import { FaultError } from './fault.js';
import { readHeader } from './runHeader.js';

const LF = 10;
const CR = 13;
const COMMA = 44;
const MINUS = 45;
const DOT = 46;
const ZERO = 48;
const NINE = 57;
/** Exact powers of ten as doubles (10^22 is the largest). */
const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);
const MAX_ROWS = MAX_STEP + 1;
/**
 * A canonical header is the plain one in some order; a longer line is left to the line reader, which names
 * its fault, rather than made into a string here one byte at a time (a 16 MiB line took 600 MB so).
 */
const MAX_HEADER_BYTES = 2 * csvHeader(ALL_ELEMENTS).length;

/**
 * The series of a canonical file, or null when the file is anything else (valid or not). With `scratch`
 * (a series of MAX_STEP + 1 records) the series is read into it and lies there until its next use.
 */
export function readCanonicalRun(bytes: Uint8Array, issueMs: number, scratch?: RunSeries): RunSeries | null {
  const n = bytes.length;
  let pos = n >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const headerEnd = bytes.indexOf(LF, pos);
  if (headerEnd < 0) return null;
  const columnOf = headerColumns(bytes, pos, headerEnd);
  if (columnOf === null) return null;
  pos = headerEnd + 1;

  const dates = gridBytes(issueMs);
  const text = new DataView(bytes.buffer, bytes.byteOffset, n);
  // Every row writes its step and all fifteen columns (the header names each), so a scratch needs no clearing.
  const full = scratch ?? emptySeries(MAX_ROWS);
  const columns = columnOf.map((e) => full.columns[e]!);
  let r = 0;
  let prevStep = -1;
  for (;;) {
    if (pos === n || bytes[pos] === LF || bytes[pos] === CR) {
      if (!onlyLineEnds(bytes, pos)) return null;
      break;
    }
    if (r === MAX_ROWS || pos + DATE_TEXT_BYTES >= n || bytes[pos + DATE_TEXT_BYTES] !== COMMA) return null;
    // Nearly always the next step; else the step the text names, which must be later and spelt as the grid's.
    let step = prevStep + 1;
    if (step > MAX_STEP || !isDateOf(text, pos, dates, step)) {
      step = stepNamed(bytes, pos, issueMs);
      if (step <= prevStep || step > MAX_STEP || !isDateOf(text, pos, dates, step)) return null;
    }
    pos = readValues(bytes, pos + DATE_TEXT_BYTES + 1, columns, r);
    if (pos < 0) return null;
    full.steps[r] = step;
    prevStep = step;
    r++;
  }
  if (r === 0) return null;
  if (r === MAX_ROWS) return full;
  if (scratch !== undefined) return { steps: full.steps.subarray(0, r), columns: full.columns.map((c) => c.subarray(0, r)) };
  return { steps: full.steps.slice(0, r), columns: full.columns.map((c) => c.slice(0, r)) };
}

/** Whether the 25 bytes at pos are the date_time text of step k, compared as six 32-bit words and a byte. */
function isDateOf(text: DataView, pos: number, dates: DataView, k: number): boolean {
  const at = k * DATE_TEXT_BYTES;
  return (
    text.getUint32(pos) === dates.getUint32(at) &&
    text.getUint32(pos + 4) === dates.getUint32(at + 4) &&
    text.getUint32(pos + 8) === dates.getUint32(at + 8) &&
    text.getUint32(pos + 12) === dates.getUint32(at + 12) &&
    text.getUint32(pos + 16) === dates.getUint32(at + 16) &&
    text.getUint32(pos + 20) === dates.getUint32(at + 20) &&
    text.getUint8(pos + 24) === dates.getUint8(at + 24)
  );
}

/**
 * The grid step that the 25 bytes at pos name as a date_time, or -1 (read by the
 * domain's parser; the caller then compares the text with that step's own, which
 * refuses every other spelling of the same instant).
 */
function stepNamed(bytes: Uint8Array, pos: number, issueMs: number): number {
  const ms = parseDateTime(String.fromCharCode(...bytes.subarray(pos, pos + DATE_TEXT_BYTES)));
  if (ms === null) return -1;
  const offset = ms - issueMs;
  return offset >= 0 && offset % STEP_MS === 0 ? offset / STEP_MS : -1;
}

/** The header's field order, or null when it is not ASCII or not a valid header. */
function headerColumns(bytes: Uint8Array, start: number, end: number): number[] | null {
  if (end > start && bytes[end - 1] === CR) end--;
  if (end - start > MAX_HEADER_BYTES) return null;
  let line = '';
  for (let i = start; i < end; i++) {
    const b = bytes[i]!;
    if (b >= 0x80) return null;
    line += String.fromCharCode(b);
  }
  try {
    return readHeader(line);
  } catch (err) {
    if (err instanceof FaultError) return null;
    throw err;
  }
}

/** True when bytes from pos to the end are only line ends (the trailing empty lines the line reader drops). */
function onlyLineEnds(bytes: Uint8Array, pos: number): boolean {
  const n = bytes.length;
  while (pos < n) {
    if (bytes[pos] === LF) pos++;
    else if (bytes[pos] === CR && pos + 1 < n && bytes[pos + 1] === LF) pos += 2;
    else return false;
  }
  return true;
}

/**
 * Reads a row's fifteen values from pos into the columns at record r, digit by
 * digit: a plain decimal of at most 15 significant digits is m / 10^d with m and
 * 10^d exact doubles, so one correctly rounded division is exactly Number(text).
 * Returns the position after the row's line end, or -1 for anything else.
 */
function readValues(bytes: Uint8Array, pos: number, columns: readonly Float64Array[], r: number): number {
  const n = bytes.length;
  for (let c = 0; c < columns.length; c++) {
    if (c > 0) {
      if (pos >= n || bytes[pos] !== COMMA) return -1;
      pos++;
    }
    let ch = pos < n ? bytes[pos]! : LF;
    if (ch === COMMA || ch === LF || ch === CR) {
      columns[c]![r] = NaN;
      continue;
    }
    let neg = false;
    if (ch === MINUS) {
      neg = true;
      pos++;
    }
    let m = 0;
    let digits = 0;
    let decimals = -1;
    for (; pos < n; pos++) {
      ch = bytes[pos]!;
      if (ch >= ZERO && ch <= NINE) {
        m = m * 10 + (ch - ZERO);
        digits++;
        if (decimals >= 0) decimals++;
      } else if (ch === DOT && decimals < 0) {
        decimals = 0;
      } else {
        break;
      }
    }
    if (digits === 0 || digits > 15) return -1;
    const v = decimals > 0 ? m / POW10[decimals]! : m;
    columns[c]![r] = neg ? -v : v;
  }
  if (pos === n) return pos;
  if (bytes[pos] === LF) return pos + 1;
  if (bytes[pos] === CR) {
    if (pos + 1 === n) return n;
    if (bytes[pos + 1] === LF) return pos + 2;
  }
  return -1;
}
