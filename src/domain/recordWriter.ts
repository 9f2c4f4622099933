/**
 * Writing a run's records as text bytes, shared by the JSON body and the CSV
 * format so that both spell every value the same way: scaled columns digit by
 * digit from their integers (integer arithmetic while they fit 31 bits), raw
 * columns by their shortest round-trip text, date_time from the issue's date
 * table. This is the hot loop of every uncached response: it reserves the room
 * for a whole page once and then writes bytes without further checks.
 */
import { ByteSink } from './byteSink.js';
import { DATE_TEXT_BYTES, gridDateBytes } from './dateTexts.js';
import { ELEMENT_COUNT } from './elements.js';
import { numberText } from './numberText.js';
import { MAX_STEP } from './run.js';
import type { SeriesView } from './seriesView.js';

/** The fixed bytes around a record and its values in one output format. */
export interface RecordStyle {
  /** Before the date_time text. */
  readonly open: Uint8Array;
  /** After the date_time text. */
  readonly afterDate: Uint8Array;
  /** Before the value of catalogue element e (e.g. `,"t2m":` or `,`). */
  readonly field: readonly Uint8Array[];
  /** In place of a missing value. */
  readonly missing: Uint8Array;
  /** After the record. */
  readonly close: Uint8Array;
  /** Between two records. */
  readonly separator: Uint8Array;
}

// Rendering is synchronous, so one set of column buffers serves every render.
const scratch = Array.from({ length: ELEMENT_COUNT }, () => new Float64Array(MAX_STEP + 1));
const POW10 = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000];
/** Longest text of a scaled value: sign, 16 digits, point. */
const MAX_SCALED_BYTES = 20;
const INT31 = 2147483648;

function digits31(n: number): number {
  if (n < 10) return 1;
  if (n < 100) return 2;
  if (n < 1000) return 3;
  if (n < 10_000) return 4;
  if (n < 100_000) return 5;
  if (n < 1_000_000) return 6;
  if (n < 10_000_000) return 7;
  if (n < 100_000_000) return 8;
  if (n < 1_000_000_000) return 9;
  return 10;
}

/** Writes s / 10^d (d <= 6, s an integer with |s| < 2^53) at pos; returns the new end. */
export function putScaled(buf: Uint8Array, pos: number, s: number, d: number): number {
  if (s < 0) {
    buf[pos++] = 45; // '-'
    s = -s;
  }
  if (s >= INT31) return putScaledWide(buf, pos, s, d);
  // Int32 arithmetic throughout: on doubles, % and division are far slower.
  const n = s | 0;
  const p = POW10[d]!;
  let whole = (n / p) | 0;
  let frac = (n - whole * p) | 0;
  let at = pos + digits31(whole);
  pos = at;
  do {
    const q = (whole / 10) | 0;
    buf[--at] = 48 + whole - q * 10;
    whole = q;
  } while (whole > 0);
  if (frac === 0) return pos;
  while (frac % 10 === 0) {
    frac = (frac / 10) | 0;
    d--;
  }
  buf[pos++] = 46; // '.'
  at = pos + d;
  pos = at;
  for (let i = 0; i < d; i++) {
    const q = (frac / 10) | 0;
    buf[--at] = 48 + frac - q * 10;
    frac = q;
  }
  return pos;
}

/** The same for integers beyond 31 bits, with floating arithmetic (exact below 2^53). */
function putScaledWide(buf: Uint8Array, pos: number, s: number, d: number): number {
  const p = POW10[d]!;
  let whole = Math.floor(s / p);
  let frac = s - whole * p;
  if (frac < 0) {
    whole--;
    frac += p;
  } else if (frac >= p) {
    whole++;
    frac -= p;
  }
  let n = 1;
  for (let t = whole; t >= 10; t = Math.floor(t / 10)) n++;
  let at = pos + n;
  pos = at;
  do {
    const q = Math.floor(whole / 10);
    buf[--at] = 48 + whole - q * 10;
    whole = q;
  } while (whole > 0);
  if (frac === 0) return pos;
  while (frac % 10 === 0) {
    frac /= 10;
    d--;
  }
  buf[pos++] = 46;
  at = pos + d;
  pos = at;
  for (let i = 0; i < d; i++) {
    const q = Math.floor(frac / 10);
    buf[--at] = 48 + frac - q * 10;
    frac = q;
  }
  return pos;
}

function put(buf: Uint8Array, pos: number, b: Uint8Array): number {
  for (let i = 0; i < b.length; i++) buf[pos++] = b[i]!;
  return pos;
}

/**
 * Copies len bytes four at a time through DataViews (unaligned access is fine);
 * the last word may write up to 3 bytes past the end, which the caller's
 * reservation covers and the next write overwrites.
 */
function putWords(dst: DataView, pos: number, src: DataView, at: number, len: number): number {
  for (let i = 0; i < len; i += 4) dst.setUint32(pos + i, src.getUint32(at + i, true), true);
  return pos + len;
}

/** A fragment padded to whole words, for putWords. */
function padded(b: Uint8Array): DataView {
  const out = new Uint8Array((b.length + 3) & ~3);
  out.set(b);
  return new DataView(out.buffer);
}

const viewCache = new WeakMap<Uint8Array, DataView>();
const asView = (b: Uint8Array): DataView => {
  let v = viewCache.get(b);
  if (v === undefined) {
    v = padded(b);
    viewCache.set(b, v);
  }
  return v;
};

/** Writes records [from, to) of a series in the given style. */
export function writeRecords(
  sink: ByteSink,
  style: RecordStyle,
  view: SeriesView,
  issueMs: number,
  elements: readonly number[],
  from: number,
  to: number,
): void {
  const count = elements.length;
  const values: Float64Array[] = [];
  const decimals: number[] = [];
  const fields: Uint8Array[] = [];
  let perRecord = style.open.length + DATE_TEXT_BYTES + style.afterDate.length + style.close.length + style.separator.length;
  for (let j = 0; j < count; j++) {
    const e = elements[j]!;
    values.push(scratch[j]!);
    decimals.push(view.column(e, from, to, scratch[j]!));
    fields.push(style.field[e]!);
    perRecord += style.field[e]!.length + Math.max(MAX_SCALED_BYTES, style.missing.length);
  }
  const dates = asView(gridDateBytes(issueMs));
  const steps = view.steps;
  const open = asView(style.open);
  const openLen = style.open.length;
  const keyViews = fields.map(asView);
  const keyLens = fields.map((f) => f.length);
  // +4: putWords may write up to 3 bytes past a fragment.
  sink.reserve((to - from) * perRecord + 4);
  let buf = sink.buf;
  let dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let pos = sink.len;
  for (let i = from; i < to; i++) {
    if (i > from) pos = put(buf, pos, style.separator);
    pos = putWords(dv, pos, open, 0, openLen);
    pos = putWords(dv, pos, dates, steps[i]! * DATE_TEXT_BYTES, DATE_TEXT_BYTES);
    pos = put(buf, pos, style.afterDate);
    for (let j = 0; j < count; j++) {
      pos = putWords(dv, pos, keyViews[j]!, 0, keyLens[j]!);
      const v = values[j]![i - from]!;
      if (v !== v) {
        pos = put(buf, pos, style.missing);
      } else if (decimals[j]! >= 0) {
        pos = putScaled(buf, pos, v, decimals[j]!);
      } else {
        // Raw values (rare) may be long: write them through the sink, which grows as needed.
        sink.len = pos;
        sink.ascii(numberText(v));
        sink.reserve((to - i) * perRecord + 4);
        buf = sink.buf;
        dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
        pos = sink.len;
      }
    }
    pos = put(buf, pos, style.close);
  }
  sink.len = pos;
}
