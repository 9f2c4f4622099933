/**
 * Random access into an encoded series (formats 2 and 3, see codec.ts): the
 * grid steps are decoded once; values are decoded per chunk and column only
 * when asked.
 */
import { ELEMENT_COUNT } from './elements.js';
import { emptySeries, MAX_STEP, type RunSeries } from './run.js';
import { keepRecent } from '../cache/keepRecent.js';
import { ByteReader, readVarint, truncated, unzigzag, varintEnd } from './varint.js';

/** Records per chunk: one day of 15-minute steps, the default page. */
export const CHUNK = 96;
export const MODE_SCALED = 0;
export const MODE_RAW = 1;
export const MODE_ALL_MISSING = 2;
export const FORMAT_V2 = 2;
export const FORMAT_V3 = 3;
/** Chunk encodings of format 3 (the high 3 bits of a chunk's first byte). */
export const ENC_SPARSE = 0;
export const ENC_PACK1 = 1;
export const ENC_PACK2 = 2;
/** Widest packed value: with a shift of up to 7 it still fits one 32-bit word. */
export const MAX_PACK_WIDTH = 24;
/** Zero bytes after a format 3 blob's data, so that unpacking may read a 32-bit word at any data byte. */
export const TAIL_PADDING = 4;

const POW10 = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000];
/** k at index k: the steps of every gapless run are a window of this. */
const GRID = Uint16Array.from({ length: MAX_STEP + 1 }, (_, k) => k);
const align8 = (n: number): number => (n + 7) & ~7;

/**
 * Per-column arrays (bitmaps, raw values) of a series that has none: one shared
 * array, so that a cached view costs fewer objects (each one is promoted with
 * it). Built by push like the others, so that the decoder sees one kind of array.
 */
const NO_COLUMNS: readonly undefined[] = [];
for (let e = 0; e < ELEMENT_COUNT; e++) (NO_COLUMNS as undefined[]).push(undefined);

/**
 * The column heads (mode, decimals, missing flag per column) read once per
 * distinct set: a provider's runs share a few, and their arrays are then shared
 * by every view.
 */
const columnHeads = keepRecent(256, (heads: string) => {
  const modes = new Uint8Array(ELEMENT_COUNT);
  const decimals = new Uint8Array(ELEMENT_COUNT);
  const hasMissing: boolean[] = [];
  for (let e = 0; e < ELEMENT_COUNT; e++) {
    const h = heads.charCodeAt(e);
    modes[e] = h >> 4;
    decimals[e] = h & 7;
    hasMissing.push((h & 8) !== 0);
    if (modes[e]! > MODE_ALL_MISSING || decimals[e]! > 6) throw new Error('series blob has a bad column head');
  }
  return { modes, decimals, hasMissing, anyMissing: hasMissing.includes(true), anyRaw: modes.includes(MODE_RAW) };
});
type ColumnHeads = ReturnType<typeof columnHeads>;
/** The heads read last and their bytes: runs one after another mostly have the same, compared without a string. */
let lastHeads: ColumnHeads | undefined;
const lastHeadBytes = new Uint8Array(ELEMENT_COUNT);

/** The column heads at r's position, read past. */
function readColumnHeads(r: ByteReader): ColumnHeads {
  const at = r.pos;
  if (lastHeads !== undefined && at + ELEMENT_COUNT <= r.end) {
    const buf = r.buf;
    let e = 0;
    while (e < ELEMENT_COUNT && buf[at + e] === lastHeadBytes[e]) e++;
    if (e === ELEMENT_COUNT) {
      r.pos = at + ELEMENT_COUNT;
      return lastHeads;
    }
  }
  const bytes = r.bytes(ELEMENT_COUNT);
  const heads = columnHeads(String.fromCharCode.apply(null, bytes as unknown as number[]));
  lastHeadBytes.set(bytes);
  lastHeads = heads;
  return heads;
}

/** Scratch for decoding steps (parsing is synchronous). */
const STEPS = new Uint16Array(MAX_STEP + 1);

/** Int32 arithmetic when the zigzag value fits (nearly always): % on doubles is a library call. */
const fromZigzag = (z: number): number => (z < 0x80000000 ? (z >>> 1) ^ -(z & 1) : unzigzag(z));

/** Format 2 steps: n varint gaps, the first of them k0. */
function readStepsV2(r: ByteReader, n: number): Uint16Array {
  if (n === 0) return stepsOf(0, true);
  // Most runs are gapless: a first step below 128, then n - 1 zero gaps. Recognised by a plain byte scan first.
  const buf = r.buf;
  const pos = r.pos;
  const first = pos < r.end ? buf[pos]! : 128;
  let zeros = 0;
  if (first < 128) while (zeros < n - 1 && pos + 1 + zeros < r.end && buf[pos + 1 + zeros] === 0) zeros++;
  if (first < 128 && zeros === n - 1 && first + n - 1 <= MAX_STEP) {
    r.pos = pos + n;
    return GRID.subarray(first, first + n);
  }
  return readGaps(r, n, r.varint());
}

/** Format 3 steps: the first step and a gap flag; the gaps only when there are any. */
function readStepsV3(r: ByteReader, n: number): Uint16Array {
  if (n === 0) return stepsOf(0, true);
  const head = r.varint();
  const k0 = Math.floor(head / 2);
  if (head % 2 === 1) return readGaps(r, n, k0);
  if (k0 + n - 1 > MAX_STEP) throw new Error('series blob has a step out of range');
  return GRID.subarray(k0, k0 + n);
}

/** Steps from k0 on, by the n - 1 gaps that follow in both formats (k_i - k_{i-1} - 1). */
function readGaps(r: ByteReader, n: number, k0: number): Uint16Array {
  let k = k0;
  if (k > MAX_STEP) throw new Error('series blob has a step out of range');
  STEPS[0] = k;
  let contiguous = true;
  for (let i = 1; i < n; i++) {
    const gap = r.varint();
    if (gap !== 0) contiguous = false;
    k += 1 + gap;
    if (k > MAX_STEP) throw new Error('series blob has a step out of range');
    STEPS[i] = k;
  }
  return stepsOf(n, contiguous);
}

/** The n steps in STEPS: most runs have no gaps, and their steps are a window of one shared array. */
const stepsOf = (n: number, contiguous: boolean): Uint16Array =>
  n === 0 ? new Uint16Array(0) : contiguous ? GRID.subarray(STEPS[0]!, STEPS[0]! + n) : STEPS.slice(0, n);

/** Whether any record in [from, to) is present in a column's bitmap. */
function anyPresent(bitmap: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if ((bitmap[i >> 3]! & (1 << (i & 7))) !== 0) return true;
  return false;
}

/**
 * The bit-packed rest of a PACK1 or PACK2 chunk, from record i on: `value` and `delta` are the last present
 * record's value and difference; each packed number is the next difference (PACK1: carry 0, not carried
 * over) or the change of the difference (PACK2: carry 1), so that the loop tests no encoding per value.
 * Records missing in the bitmap (if any) have no packed number. Records before `from` (a page rarely starts
 * a chunk) are only summed, the others stored at out[i - from]. TAIL_PADDING keeps each 32-bit read inside
 * the blob.
 */
function unpack(
  buf: Uint8Array,
  pos: number,
  stop: number,
  width: number,
  carry: number,
  bitmap: Uint8Array | undefined,
  i: number,
  from: number,
  end: number,
  value: number,
  delta: number,
  out: Float64Array,
): void {
  const mask = (1 << width) - 1;
  const bits = (stop - pos) * 8;
  let bit = 0;
  for (let until = Math.min(from, end), storing = false; ; until = end, storing = true) {
    for (; i < until; i++) {
      if (bitmap !== undefined && (bitmap[i >> 3]! & (1 << (i & 7))) === 0) continue;
      if (bit + width > bits) truncated();
      const at = pos + (bit >>> 3);
      const z = ((buf[at]! | (buf[at + 1]! << 8) | (buf[at + 2]! << 16) | (buf[at + 3]! << 24)) >>> (bit & 7)) & mask;
      bit += width;
      delta = delta * carry + ((z >>> 1) ^ -(z & 1));
      value += delta;
      if (storing) out[i - from] = value;
    }
    if (storing) return;
  }
}

export class SeriesView {
  private constructor(
    private readonly format: number,
    readonly steps: Uint16Array,
    private readonly modes: Uint8Array,
    private readonly decimals: Uint8Array,
    private readonly bitmaps: (Uint8Array | undefined)[],
    /**
     * Scaled columns: where column e's chunk lengths (varints, checked by
     * parse) begin in the blob, at [e]. A chunk is found by summing the lengths
     * before it, rather than kept as an offset per chunk: for a cached run that
     * array was 1 KB of its 15 KB.
     */
    private readonly lengthsAt: Int32Array,
    /** Scaled columns: where column e's first chunk begins in the blob, at [e]. */
    private readonly chunksAt: Int32Array,
    /** Raw columns: the values. */
    private readonly raws: (Float64Array | undefined)[],
    private readonly buf: Uint8Array,
  ) {}

  get length(): number {
    return this.steps.length;
  }

  static parse(r: ByteReader, format: number): SeriesView {
    const n = r.varint();
    if (n > 1441) throw new Error('series blob claims too many records');
    const steps = format === FORMAT_V3 ? readStepsV3(r, n) : readStepsV2(r, n);
    const { modes, decimals, hasMissing, anyMissing, anyRaw } = readColumnHeads(r);
    let bitmaps = NO_COLUMNS as (Uint8Array | undefined)[];
    if (anyMissing) {
      bitmaps = [];
      for (let e = 0; e < ELEMENT_COUNT; e++) bitmaps.push(hasMissing[e] ? r.bytes((n + 7) >> 3) : undefined);
    }
    const chunks = Math.ceil(n / CHUNK);
    // First where each column's chunk lengths are and (for now, in chunksAt) their sum. Two arrays of
    // ELEMENT_COUNT 32-bit numbers, 64 bytes each, not one of 128: V8 keeps a typed array of at most 64 bytes in
    // its heap, and gives a larger one an ArrayBuffer of its own, which every scavenge sweeps. Under mixed load
    // at 10,000 sites a view is made for most answers, and that sweep was half of each scavenge's pause
    // (docs/performance.md, "What each design choice buys").
    const lengthsAt = new Int32Array(ELEMENT_COUNT);
    const chunksAt = new Int32Array(ELEMENT_COUNT);
    const buf = r.buf;
    for (let e = 0; e < ELEMENT_COUNT; e++) {
      lengthsAt[e] = r.pos;
      let sum = 0;
      if (modes[e] === MODE_SCALED) {
        // A chunk of 96 values is mostly under 128 bytes: its length one byte, read here without a call.
        let pos = r.pos;
        for (let c = 0; c < chunks; c++) {
          const b = pos < r.end ? buf[pos]! : 128;
          if (b < 128) {
            sum += b;
            pos++;
          } else {
            r.pos = pos;
            sum += r.varint();
            pos = r.pos;
          }
        }
        r.pos = pos;
      }
      // Checked before it is stored: a damaged length could exceed what an Int32Array holds.
      if (sum > r.end) truncated();
      chunksAt[e] = sum;
    }
    const raws = anyRaw ? [] : (NO_COLUMNS as (Float64Array | undefined)[]);
    let at = r.pos;
    for (let e = 0; e < ELEMENT_COUNT; e++) {
      let raw: Float64Array | undefined;
      const length = chunksAt[e]!;
      chunksAt[e] = at;
      if (modes[e] === MODE_SCALED) {
        at += length;
        if (at > r.end) truncated();
      } else if (modes[e] === MODE_RAW) {
        // A copy of its own, 8-aligned: Buffer's slice() would share the blob's memory (and its offset).
        const bytes = Uint8Array.prototype.slice.call(r.buf, at, at + 8 * n);
        if (bytes.length !== 8 * n) throw new Error('series blob is truncated');
        raw = new Float64Array(bytes.buffer, 0, n);
        at += 8 * n;
      }
      if (raws !== NO_COLUMNS) raws.push(raw);
    }
    if (at + (format === FORMAT_V3 ? TAIL_PADDING : 0) !== r.end) throw new Error('series blob has the wrong length');
    return new SeriesView(format, steps, modes, decimals, bitmaps, lengthsAt, chunksAt, raws, r.buf);
  }

  /** A view over an already decoded series (older blob formats): every column raw. */
  static ofSeries(s: RunSeries): SeriesView {
    const modes = new Uint8Array(ELEMENT_COUNT).fill(MODE_RAW);
    const raws = s.columns.map((c) => Float64Array.from(c));
    return new SeriesView(
      FORMAT_V3, // consulted only for scaled columns, and this view has none
      Uint16Array.from(s.steps),
      modes,
      new Uint8Array(ELEMENT_COUNT),
      NO_COLUMNS as undefined[],
      new Int32Array(0),
      new Int32Array(0),
      raws,
      new Uint8Array(0),
    );
  }

  /** The stored blob this view reads (its format byte included); undefined for a view over decoded series. */
  get encoded(): Uint8Array | undefined {
    return this.buf.length > 0 ? this.buf : undefined;
  }

  /**
   * Bytes copyTo() needs: the blob, then (each 8-aligned) the column offsets, any
   * steps of its own and the raw columns. Everything of size that the view holds.
   */
  get footprint(): number {
    let bytes = align8(this.buf.length) + align8(4 * this.lengthsAt.length) + align8(4 * this.chunksAt.length);
    if (this.steps.buffer !== GRID.buffer) bytes += align8(2 * this.steps.length);
    for (const raw of this.raws) if (raw !== undefined) bytes += 8 * raw.length;
    return bytes;
  }

  /**
   * The same view over a copy of its bytes in target (8-aligned within its
   * buffer, at least footprint bytes), so that a cache can keep it in memory of
   * its own rather than in the buffer the store returned.
   */
  copyTo(target: Uint8Array): SeriesView {
    if ((target.byteOffset & 7) !== 0 || target.length < this.footprint) throw new Error('copy target is misaligned or too small');
    const buf = target.subarray(0, this.buf.length);
    buf.set(this.buf);
    let at = align8(this.buf.length);
    const lengthsAt = new Int32Array(target.buffer, target.byteOffset + at, this.lengthsAt.length);
    lengthsAt.set(this.lengthsAt);
    at += align8(4 * lengthsAt.length);
    const chunksAt = new Int32Array(target.buffer, target.byteOffset + at, this.chunksAt.length);
    chunksAt.set(this.chunksAt);
    at += align8(4 * chunksAt.length);
    let steps = this.steps;
    if (steps.buffer !== GRID.buffer) {
      steps = new Uint16Array(target.buffer, target.byteOffset + at, this.steps.length);
      steps.set(this.steps);
      at += align8(2 * steps.length);
    }
    // Arrays built by push, as parse() builds them (map() would make holey arrays: a second shape to the decoder).
    let raws = this.raws;
    if (raws !== NO_COLUMNS) {
      raws = [];
      for (const raw of this.raws) {
        let copy: Float64Array | undefined;
        if (raw !== undefined) {
          copy = new Float64Array(target.buffer, target.byteOffset + at, raw.length);
          copy.set(raw);
          at += 8 * raw.length;
        }
        raws.push(copy);
      }
    }
    let bitmaps = this.bitmaps;
    if (bitmaps !== NO_COLUMNS) {
      bitmaps = [];
      // A bitmap lies in the blob: the same place in the copy.
      for (const b of this.bitmaps) bitmaps.push(b && buf.subarray(b.byteOffset - this.buf.byteOffset, b.byteOffset - this.buf.byteOffset + b.length));
    }
    return new SeriesView(this.format, steps, this.modes, this.decimals, bitmaps, lengthsAt, chunksAt, raws, buf);
  }

  /** The scaled integers of column e for records [from, to) into out[0 ...], NaN where missing. */
  private scaled(e: number, from: number, to: number, out: Float64Array): void {
    if (this.bitmaps[e] !== undefined) out.fill(NaN, 0, to - from);
    const buf = this.buf;
    const last = Math.min(to, this.steps.length);
    // The chunk lengths were checked by parse(): they are read here without bounds.
    let lengthAt = this.lengthsAt[e]!;
    let pos = this.chunksAt[e]!;
    const first = (from / CHUNK) | 0;
    for (let c = 0; c < first; c++) {
      pos += readVarint(buf, lengthAt, buf.length);
      lengthAt = varintEnd;
    }
    for (let c = first; c * CHUNK < to; c++) {
      const stop = pos + readVarint(buf, lengthAt, buf.length);
      lengthAt = varintEnd;
      const start = c * CHUNK;
      const end = Math.min(last, start + CHUNK);
      if (this.format === FORMAT_V3) this.chunkV3(e, pos, stop, start, from, end, out);
      else this.chunkV2(e, pos, stop, start, from, end, out);
      pos = stop;
    }
  }

  /**
   * Records [start, end) of chunk c of column e (start = its first record); those
   * from `from` on go to out[i - from]. This and chunkV2 are the decoding loops
   * of every uncached page.
   */
  private chunkV3(e: number, pos: number, stop: number, start: number, from: number, end: number, out: Float64Array): void {
    const buf = this.buf;
    const bitmap = this.bitmaps[e];
    if (pos === stop) {
      // A chunk with no bytes has no present value (out already holds NaN there).
      if (bitmap === undefined || anyPresent(bitmap, start, end)) truncated();
      return;
    }
    const head = buf[pos]!;
    const enc = head >> 5;
    const width = head & 31;
    if (enc > ENC_PACK2 || width > MAX_PACK_WIDTH) throw new Error('series blob has a bad chunk head');
    let value = fromZigzag(readVarint(buf, pos + 1, stop));
    pos = varintEnd;
    let delta = 0;
    if (enc === ENC_PACK2) {
      delta = fromZigzag(readVarint(buf, pos, stop));
      pos = varintEnd;
    }
    // The first present value is `value` itself; the loops below go on from the record after it.
    let i = start;
    while (bitmap !== undefined && (bitmap[i >> 3]! & (1 << (i & 7))) === 0) if (++i >= end) return;
    if (i >= from) out[i - from] = value;
    if (enc === ENC_SPARSE) {
      // k counts the differences read: a flag byte before each group of 8.
      let flags = 0;
      for (let k = 0; ++i < end; ) {
        if (bitmap !== undefined && (bitmap[i >> 3]! & (1 << (i & 7))) === 0) continue;
        if ((k & 7) === 0) {
          if (pos >= stop) truncated();
          flags = buf[pos++]!;
        }
        if ((flags & (1 << (k++ & 7))) !== 0) {
          value += fromZigzag(readVarint(buf, pos, stop));
          pos = varintEnd;
        }
        if (i >= from) out[i - from] = value;
      }
      return;
    }
    const pack2 = enc === ENC_PACK2;
    if (pack2) {
      // PACK2's second value is the first one plus the difference in its head.
      do if (++i >= end) return;
      while (bitmap !== undefined && (bitmap[i >> 3]! & (1 << (i & 7))) === 0);
      value += delta;
      if (i >= from) out[i - from] = value;
    }
    unpack(buf, pos, stop, width, pack2 ? 1 : 0, bitmap, i + 1, from, end, value, delta, out);
  }

  /** Format 2: every value a varint zigzag delta from the one before (the first from 0). */
  private chunkV2(e: number, pos: number, stop: number, start: number, from: number, end: number, out: Float64Array): void {
    const buf = this.buf;
    const bitmap = this.bitmaps[e];
    let value = 0;
    for (let i = start; i < end; i++) {
      if (bitmap !== undefined && (bitmap[i >> 3]! & (1 << (i & 7))) === 0) continue;
      value += fromZigzag(readVarint(buf, pos, stop));
      pos = varintEnd;
      if (i >= from) out[i - from] = value;
    }
  }

  /** How many scaled chunks use each format 3 encoding, by ENC_* index (for the storage benchmark and tests). */
  chunkEncodings(): number[] {
    const counts = [0, 0, 0];
    if (this.format !== FORMAT_V3) return counts;
    const chunks = Math.ceil(this.steps.length / CHUNK);
    const lengths = new ByteReader(this.buf, 0);
    for (let e = 0; e < ELEMENT_COUNT; e++) {
      if (this.modes[e] !== MODE_SCALED) continue;
      lengths.pos = this.lengthsAt[e]!;
      for (let c = 0, at = this.chunksAt[e]!; c < chunks; c++) {
        const len = lengths.varint();
        if (len > 0) counts[this.buf[at]! >> 5]!++;
        at += len;
      }
    }
    return counts;
  }

  /**
   * Column e for records [from, to) into out[0 ...] in its stored form, NaN where
   * missing. Returns the number of decimals d when out holds scaled integers
   * (value = out[i] / 10^d), or -1 when out holds the values themselves.
   */
  column(e: number, from: number, to: number, out: Float64Array): number {
    const mode = this.modes[e];
    if (mode === MODE_SCALED) {
      this.scaled(e, from, to, out);
      return this.decimals[e]!;
    }
    if (mode === MODE_RAW) out.set(this.raws[e]!.subarray(from, to));
    else out.fill(NaN, 0, to - from);
    return -1;
  }

  /** Values of column e for records [from, to) into out[0 ...], NaN where missing. */
  values(e: number, from: number, to: number, out: Float64Array): void {
    const mode = this.modes[e];
    if (mode === MODE_ALL_MISSING) {
      out.fill(NaN, 0, to - from);
    } else if (mode === MODE_RAW) {
      out.set(this.raws[e]!.subarray(from, to));
    } else {
      this.scaled(e, from, to, out);
      const p = POW10[this.decimals[e]!]!;
      // value = s / 10^d, the division the codec's round trip is checked with (NaN stays NaN).
      for (let i = 0; i < to - from; i++) out[i] = out[i]! / p;
    }
  }

  toSeries(): RunSeries {
    const n = this.steps.length;
    const s = emptySeries(n);
    s.steps.set(this.steps);
    for (let e = 0; e < ELEMENT_COUNT; e++) this.values(e, 0, n, s.columns[e]!);
    return s;
  }
}
