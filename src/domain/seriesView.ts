/**
 * Random access into an encoded series (format 2, see codec.ts): the grid steps
 * are decoded once; values are decoded per chunk and column only when asked.
 */
import { ELEMENT_COUNT } from './elements.js';
import { emptySeries, MAX_STEP, type RunSeries } from './run.js';
import { keepRecent } from '../cache/keepRecent.js';
import { ByteReader, unzigzag } from './varint.js';

/** Records per chunk: one day of 15-minute steps, the default page. */
export const CHUNK = 96;
export const MODE_SCALED = 0;
export const MODE_RAW = 1;
export const MODE_ALL_MISSING = 2;

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
  return { modes, decimals, hasMissing, anyMissing: hasMissing.includes(true) };
});
/** Scratch for decoding steps (parsing is synchronous). */
const STEPS = new Uint16Array(MAX_STEP + 1);

export class SeriesView {
  private constructor(
    readonly steps: Uint16Array,
    private readonly modes: Uint8Array,
    private readonly decimals: Uint8Array,
    private readonly bitmaps: (Uint8Array | undefined)[],
    /**
     * Scaled columns: absolute blob offset of each chunk, plus the end, at
     * [e * stride + c]. One array for all columns: each typed array costs an
     * allocation of its own, which dominated parsing.
     */
    private readonly chunkStarts: Int32Array,
    private readonly stride: number,
    /** Raw columns: the values. */
    private readonly raws: (Float64Array | undefined)[],
    private readonly buf: Uint8Array,
  ) {}

  get length(): number {
    return this.steps.length;
  }

  static parse(r: ByteReader): SeriesView {
    const n = r.varint();
    if (n > 1441) throw new Error('series blob claims too many records');
    const buf = r.buf;
    const end = r.end;
    let pos = r.pos;
    let k = -1;
    let contiguous = true;
    // Most runs are gapless: a first step, then n - 1 zero gaps. Recognise that by a plain byte scan first.
    let first = 0;
    let zeros = 0;
    if (n > 0 && pos < end && buf[pos]! < 128) {
      first = buf[pos]!;
      while (zeros < n - 1 && pos + 1 + zeros < end && buf[pos + 1 + zeros] === 0) zeros++;
    }
    const gapless = n > 0 && zeros === n - 1 && buf[pos]! < 128 && first + n - 1 <= MAX_STEP;
    if (gapless) {
      STEPS[0] = first;
      k = first + n - 1;
      pos += n;
    }
    for (let i = gapless ? n : 0; i < n; i++) {
      if (pos >= end) throw new Error('series blob is truncated');
      let b = buf[pos++]!;
      let gap = b & 127;
      for (let mul = 128; b >= 128; mul *= 128) {
        if (pos >= end || mul > 2 ** 21) throw new Error('series blob has a malformed step');
        b = buf[pos++]!;
        gap += (b & 127) * mul;
      }
      if (i > 0 && gap !== 0) contiguous = false;
      k = i === 0 ? gap : k + 1 + gap;
      if (k > MAX_STEP) throw new Error('series blob has a step out of range');
      STEPS[i] = k;
    }
    r.pos = pos;
    // Most runs have no gaps: their steps are a window of one shared array.
    const steps = n === 0 ? new Uint16Array(0) : contiguous ? GRID.subarray(STEPS[0]!, STEPS[0]! + n) : STEPS.slice(0, n);
    const { modes, decimals, hasMissing, anyMissing } = columnHeads(String.fromCharCode.apply(null, r.bytes(ELEMENT_COUNT) as unknown as number[]));
    let bitmaps = NO_COLUMNS as (Uint8Array | undefined)[];
    if (anyMissing) {
      bitmaps = [];
      for (let e = 0; e < ELEMENT_COUNT; e++) bitmaps.push(hasMissing[e] ? r.bytes((n + 7) >> 3) : undefined);
    }
    const chunks = Math.ceil(n / CHUNK);
    const stride = chunks + 1;
    // Chunk lengths first (into the offsets array itself), then their running sums from the data's start.
    const chunkStarts = new Int32Array(ELEMENT_COUNT * stride);
    for (let e = 0; e < ELEMENT_COUNT; e++) {
      if (modes[e] === MODE_SCALED) for (let c = 0; c < chunks; c++) chunkStarts[e * stride + c] = r.varint();
    }
    const raws = modes.includes(MODE_RAW) ? [] : (NO_COLUMNS as (Float64Array | undefined)[]);
    let at = r.pos;
    for (let e = 0; e < ELEMENT_COUNT; e++) {
      let raw: Float64Array | undefined;
      if (modes[e] === MODE_SCALED) {
        for (let c = 0; c < chunks; c++) {
          const len = chunkStarts[e * stride + c]!;
          chunkStarts[e * stride + c] = at;
          at += len;
          if (len < 0 || at > r.end) throw new Error('series blob is truncated');
        }
        chunkStarts[e * stride + chunks] = at;
      } else if (modes[e] === MODE_RAW) {
        const bytes = r.buf.slice(at, at + 8 * n);
        if (bytes.length !== 8 * n) throw new Error('series blob is truncated');
        raw = new Float64Array(bytes.buffer, 0, n);
        at += 8 * n;
      }
      if (raws !== NO_COLUMNS) raws.push(raw);
    }
    if (at !== r.end) throw new Error('series blob has the wrong length');
    return new SeriesView(steps, modes, decimals, bitmaps, chunkStarts, stride, raws, r.buf);
  }

  /** A view over an already decoded series (older blob formats): every column raw. */
  static ofSeries(s: RunSeries): SeriesView {
    const modes = new Uint8Array(ELEMENT_COUNT).fill(MODE_RAW);
    const raws = s.columns.map((c) => Float64Array.from(c));
    return new SeriesView(
      Uint16Array.from(s.steps),
      modes,
      new Uint8Array(ELEMENT_COUNT),
      NO_COLUMNS as undefined[],
      new Int32Array(0),
      0,
      raws,
      new Uint8Array(0),
    );
  }

  /**
   * Bytes copyTo() needs: the blob, then (each 8-aligned) the chunk offsets, any
   * steps of its own and the raw columns. Everything of size that the view holds.
   */
  get footprint(): number {
    let bytes = align8(this.buf.length) + align8(4 * this.chunkStarts.length);
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
    const chunkStarts = new Int32Array(target.buffer, target.byteOffset + at, this.chunkStarts.length);
    chunkStarts.set(this.chunkStarts);
    at += align8(4 * chunkStarts.length);
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
    return new SeriesView(steps, this.modes, this.decimals, bitmaps, chunkStarts, this.stride, raws, buf);
  }

  /**
   * The scaled integers of column e for records [from, to) into out[0 ...], NaN
   * where missing. Varints are read inline: this is the decoding loop of every
   * uncached page.
   */
  private scaled(e: number, from: number, to: number, out: Float64Array): void {
    const starts = this.chunkStarts;
    const base = e * this.stride;
    const bitmap = this.bitmaps[e];
    const buf = this.buf;
    const n = this.steps.length;
    if (bitmap !== undefined) out.fill(NaN, 0, to - from);
    for (let c = (from / CHUNK) | 0; c * CHUNK < to; c++) {
      let pos = starts[base + c]!;
      const stop = starts[base + c + 1]!;
      let last = 0;
      const end = Math.min(to, (c + 1) * CHUNK, n);
      for (let i = c * CHUNK; i < end; i++) {
        if (bitmap !== undefined && (bitmap[i >> 3]! & (1 << (i & 7))) === 0) continue;
        if (pos >= stop) throw new Error('series blob is truncated');
        let b = buf[pos++]!;
        let z = b & 127;
        if (b >= 128) {
          let mul = 128;
          do {
            if (pos >= stop) throw new Error('series blob is truncated');
            b = buf[pos++]!;
            z += (b & 127) * mul;
            mul *= 128;
          } while (b >= 128);
        }
        // Int32 arithmetic when the varint fits (nearly always): % on doubles is a library call.
        last += z < 0x80000000 ? (z >>> 1) ^ -(z & 1) : unzigzag(z);
        if (i >= from) out[i - from] = last;
      }
    }
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
