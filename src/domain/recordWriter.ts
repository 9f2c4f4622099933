/**
 * Writing a run's records as text bytes, shared by the JSON body and the CSV
 * format so that both spell every value the same way: scaled columns digit by
 * digit from their integers (integer arithmetic while they fit 31 bits), raw
 * columns by their shortest round-trip text, date_time from the issue's date
 * table. This is the hot loop of every uncached response: it reserves the room
 * for a whole page once and then writes bytes without further checks.
 */
import { ByteSink } from './byteSink.js';
import { keepRecent } from '../cache/keepRecent.js';
import { DATE_TEXT_BYTES, gridBytes } from './dateTexts.js';
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

/**
 * Rendering is synchronous, so one buffer serves every render: the page's column j decoded at j * STRIDE,
 * read as flat[j * STRIDE + record] (one typed array in the loop rather than one per column).
 */
const STRIDE = MAX_STEP + 1;
const flat = new Float64Array(ELEMENT_COUNT * STRIDE);
const columnOf = Array.from({ length: ELEMENT_COUNT }, (_, j) => flat.subarray(j * STRIDE, (j + 1) * STRIDE));
/**
 * A field fragment is written as three words whatever its length (the next write overwrites the padding):
 * JSON's longest, `,"spd100":`, has 10 bytes.
 */
const KEY_WORDS = 3;
/** Per chosen column j: its key's words (at j * KEY_WORDS), its key's length, its decimals and its text table's base. */
const keyScratch = new Uint32Array(ELEMENT_COUNT * KEY_WORDS);
const keyLenScratch = new Int32Array(ELEMENT_COUNT);
const decimalScratch = new Int32Array(ELEMENT_COUNT);
const textBaseScratch = new Int32Array(ELEMENT_COUNT);
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

/** "00" ... "99": digits are written two at a time, halving the divisions. */
const PAIRS = Uint8Array.from({ length: 200 }, (_, i) => 48 + (i & 1 ? (i >> 1) % 10 : ((i >> 1) / 10) | 0));

/** Writes the int32 n >= 0 as exactly `len` digits ending at pos + len. */
function putDigits(buf: Uint8Array, pos: number, n: number, len: number): void {
  let at = pos + len;
  while (n >= 100) {
    const q = (n / 100) | 0;
    const r = (n - q * 100) << 1;
    buf[--at] = PAIRS[r + 1]!;
    buf[--at] = PAIRS[r]!;
    n = q;
  }
  if (n >= 10) {
    buf[--at] = PAIRS[(n << 1) + 1]!;
    buf[--at] = PAIRS[n << 1]!;
  } else if (at > pos) {
    buf[--at] = 48 + n;
  }
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
  if (d === 0) {
    const len = digits31(n);
    putDigits(buf, pos, n, len);
    return pos + len;
  }
  const p = POW10[d]!;
  const whole = (n / p) | 0;
  let frac = (n - whole * p) | 0;
  const len = digits31(whole);
  putDigits(buf, pos, whole, len);
  pos += len;
  if (frac === 0) return pos;
  while (frac % 10 === 0) {
    frac = (frac / 10) | 0;
    d--;
  }
  buf[pos++] = 46; // '.'
  // d digits, leading zeros included (0.05 -> "05").
  let at = pos + d;
  while (at > pos) {
    const q = (frac / 10) | 0;
    buf[--at] = 48 + frac - q * 10;
    frac = q;
  }
  return pos + d;
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

/**
 * The text of every scaled integer below SMALL_SCALED, per count of decimals,
 * as two little-endian words (at most 8 characters: "6553.5", "0.065535"): most
 * stored values are small, and one table read and two word writes replace a
 * page's digit arithmetic. The length rides in the last byte when the text is
 * shorter than 8 (that byte is padding then, and the next write overwrites it);
 * a digit there means 8. One table instead of a words table and a lengths table
 * saves a cache miss per value: the tables are too large for the cache, and
 * the lengths read was a tenth of a whole-run CSV's rendering time. Built on
 * first use of each count of decimals (0.5 MB each).
 */
const SMALL_SCALED = 65_536;
/**
 * The texts for every count of decimals in one array (count d at d * 2 * SMALL_SCALED), so that the loop
 * reads one typed array whatever the column. Its pages are touched only once a count is used.
 */
const TEXT_WORDS = new Uint32Array(7 * 2 * SMALL_SCALED);
const TEXT_BYTES = new Uint8Array(TEXT_WORDS.buffer);
const textsBuilt: boolean[] = [];

/**
 * The base in TEXT_WORDS of the texts of count d, built on first use. Counted up digit by digit rather than
 * each written by putScaled: the first answer after a start builds its tables in code not yet optimized,
 * where this loop costs half as much (docs/performance.md); a test checks every text against putScaled.
 */
function textsOf(d: number): number {
  const base = d * 2 * SMALL_SCALED;
  if (textsBuilt[d] !== true) {
    const out = TEXT_BYTES;
    // The digits of s, the lowest first; at least d + 1 of them (the leading zero of "0.05").
    const digits = new Uint8Array(12);
    let n = d + 1;
    for (let s = 0, at = base * 4; s < SMALL_SCALED; s++, at += 8) {
      // The fraction's trailing zeros are not written.
      let zeros = 0;
      while (zeros < d && digits[zeros] === 0) zeros++;
      let o = at;
      for (let k = n - 1; k >= d; k--) out[o++] = 48 + digits[k]!;
      if (zeros < d) {
        out[o++] = 46; // '.'
        for (let k = d - 1; k >= zeros; k--) out[o++] = 48 + digits[k]!;
      }
      const len = o - at;
      if (len > 8) throw new Error(`scaled text of ${s} / 10^${d} is longer than 8 bytes`);
      if (len < 8) out[at + 7] = len;
      // s + 1
      let k = 0;
      while (digits[k] === 9) digits[k++] = 0;
      digits[k]!++;
      if (k >= n) n = k + 1;
    }
    textsBuilt[d] = true;
  }
  return base;
}

/** The table's text of s / 10^d, s < SMALL_SCALED (for tests). */
export function tableText(s: number, d: number): string {
  const at = (textsOf(d) + 2 * s) * 4;
  const last = TEXT_BYTES[at + 7]!;
  return String.fromCharCode(...TEXT_BYTES.subarray(at, at + (last < 48 ? last : 8)));
}

/**
 * Whole numbers below this are written as their thousands (from the text table) and three digits (from
 * TRIPLES): surface pressure in Pa and accumulated radiation in J/m² are whole numbers of six digits, a sixth
 * of a whole run's values, and digit arithmetic for them was a sixth of a whole-run CSV's writing time.
 */
const LARGE_WHOLE = SMALL_SCALED * 1000;
/** "000" ... "999" as the low three bytes of a little-endian word (the fourth is padding, overwritten next). */
const TRIPLES = Uint32Array.from({ length: 1000 }, (_, n) => {
  const d = (k: number): number => 48 + (Math.floor(n / 10 ** k) % 10);
  return d(2) | (d(1) << 8) | (d(0) << 16);
});

/**
 * Writes the table text whose two words start at words[at] (TEXT_WORDS; two stores: the reservation covers 8 bytes, and
 * what follows overwrites the padding); returns the new end.
 */
function putTableText(dv: DataView, pos: number, words: Uint32Array, at: number): number {
  const high = words[at + 1]!;
  dv.setUint32(pos, words[at]!, true);
  dv.setUint32(pos + 4, high, true);
  const len = high >>> 24;
  return pos + (len > 8 ? 8 : len);
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

/** A style's fragments prepared for copying, and its record heads per issue time. */
interface Prepared {
  /** Each field fragment as KEY_WORDS little-endian words (zero-padded), at e * KEY_WORDS. */
  readonly fieldWords: Uint32Array;
  readonly fieldLens: readonly number[];
  /** Bytes of close + separator: what the first record of a page skips of its head. */
  readonly lead: number;
  readonly headBytes: number;
  /** Record heads per issue time (about 60 KB each for JSON): runs of recent issues are what is asked. */
  readonly heads: (issueMs: number) => DataView;
}

const prepared = new WeakMap<RecordStyle, Prepared>();

function prepare(style: RecordStyle): Prepared {
  let p = prepared.get(style);
  if (p === undefined) {
    const lead = style.close.length + style.separator.length;
    const headBytes = lead + style.open.length + DATE_TEXT_BYTES + style.afterDate.length;
    if (style.field.some((f) => f.length > 4 * KEY_WORDS)) throw new Error(`a field fragment is longer than ${4 * KEY_WORDS} bytes`);
    const fieldWords = new Uint32Array(style.field.length * KEY_WORDS);
    style.field.forEach((f, e) => {
      const words = new DataView(new ArrayBuffer(4 * KEY_WORDS));
      new Uint8Array(words.buffer).set(f);
      for (let w = 0; w < KEY_WORDS; w++) fieldWords[e * KEY_WORDS + w] = words.getUint32(4 * w, true);
    });
    p = {
      fieldWords,
      fieldLens: style.field.map((f) => f.length),
      lead,
      headBytes,
      heads: keepRecent(16, (issueMs: number) => headTable(style, headBytes, issueMs)),
    };
    prepared.set(style, p);
  }
  return p;
}

/**
 * Record heads of an issue's grid, headBytes per step k: the previous record's
 * close, the separator, the open, the date_time text and what follows it. One
 * copy starts each record.
 */
function headTable(style: RecordStyle, headBytes: number, issueMs: number): DataView {
  const dates = gridBytes(issueMs);
  // +4: putWords reads whole words, up to 3 bytes past the last head.
  const out = new Uint8Array((MAX_STEP + 1) * headBytes + 4);
  for (let k = 0, at = 0; k <= MAX_STEP; k++, at += headBytes) {
    let o = at;
    for (const part of [style.close, style.separator, style.open]) {
      out.set(part, o);
      o += part.length;
    }
    out.set(new Uint8Array(dates.buffer, k * DATE_TEXT_BYTES, DATE_TEXT_BYTES), o);
    out.set(style.afterDate, o + DATE_TEXT_BYTES);
  }
  return new DataView(out.buffer);
}

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
  const p = prepare(style);
  const keys = keyScratch;
  const keyLens = keyLenScratch;
  const decimals = decimalScratch;
  const textBase = textBaseScratch;
  let perRecord = p.headBytes;
  // CSV's fragments (a comma) fit one word: two fewer stores per value made whole-run CSV rendering about a
  // tenth faster (scratch render of 1,000 runs, 13.6 -> 12.1 ns per value).
  let wideKeys = false;
  for (let j = 0; j < count; j++) {
    const e = elements[j]!;
    const d = view.column(e, from, to, columnOf[j]!);
    decimals[j] = d;
    textBase[j] = d < 0 ? 0 : textsOf(d);
    for (let w = 0; w < KEY_WORDS; w++) keys[j * KEY_WORDS + w] = p.fieldWords[e * KEY_WORDS + w]!;
    keyLens[j] = p.fieldLens[e]!;
    if (keyLens[j]! > 4) wideKeys = true;
    // A key is written as KEY_WORDS words, past its end: the room of a value covers that.
    perRecord += 4 * KEY_WORDS + Math.max(MAX_SCALED_BYTES, style.missing.length);
  }
  const heads = p.heads(issueMs);
  const headBytes = p.headBytes;
  const lead = p.lead;
  const steps = view.steps;
  const words = TEXT_WORDS;
  const values = flat;
  // +4: putWords may write up to 3 bytes past a fragment.
  sink.reserve((to - from) * perRecord + style.close.length + 4);
  let buf = sink.buf;
  let dv = sink.view;
  let pos = sink.len;
  for (let i = from; i < to; i++) {
    const at = steps[i]! * headBytes;
    pos = i > from ? putWords(dv, pos, heads, at, headBytes) : putWords(dv, pos, heads, at + lead, headBytes - lead);
    for (let j = 0, valueAt = i - from, keyAt = 0; j < count; j++, valueAt += STRIDE, keyAt += KEY_WORDS) {
      dv.setUint32(pos, keys[keyAt]!, true);
      if (wideKeys) {
        dv.setUint32(pos + 4, keys[keyAt + 1]!, true);
        dv.setUint32(pos + 8, keys[keyAt + 2]!, true);
      }
      pos += keyLens[j]!;
      const v = values[valueAt]!;
      if (v !== v) {
        pos = put(buf, pos, style.missing);
      } else if (decimals[j]! >= 0) {
        let a = v;
        if (a < 0) {
          buf[pos++] = 45; // '-'
          a = -a;
        }
        if (a < SMALL_SCALED) {
          pos = putTableText(dv, pos, words, textBase[j]! + 2 * (a | 0));
        } else if (a < LARGE_WHOLE && decimals[j] === 0) {
          // A large whole number (a pressure in Pa, an accumulated radiation): its thousands from the text table
          // (at least 65, so no leading zero), then its last three digits from a table of their own.
          const thousands = (a / 1000) | 0;
          pos = putTableText(dv, pos, words, textBase[j]! + 2 * thousands);
          dv.setUint32(pos, TRIPLES[(a | 0) - thousands * 1000]!, true);
          pos += 3;
        } else {
          pos = putScaled(buf, pos, a, decimals[j]!);
        }
      } else {
        // Raw values (rare) may be long: write them through the sink, which grows as needed.
        sink.len = pos;
        sink.ascii(numberText(v));
        sink.reserve((to - i) * perRecord + style.close.length + 4);
        buf = sink.buf;
        dv = sink.view;
        pos = sink.len;
      }
    }
  }
  if (to > from) pos = put(buf, pos, style.close);
  sink.len = pos;
}
