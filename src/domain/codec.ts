/**
 * Series codec: one (site, run) series <-> one blob, as kept by every store.
 *
 * Format 3 (compact, written now). Forecast values are decimal text with few
 * digits and move smoothly in time, so each column is kept as integers scaled by
 * 10^d (the smallest d <= 6 that reproduces every value of the column exactly),
 * cut into chunks of CHUNK records that decode on their own, so that a page of
 * a run decodes only the chunks and columns it shows. Each chunk of a column is
 * written in whichever of three encodings is smallest for it:
 *
 * - PACK1: the first value, then the differences between neighbours (zigzag),
 *   bit-packed at the chunk's widest width (at most 24 bits): smooth noisy
 *   fields (temperature, humidity, wind);
 * - PACK2: the first value and first difference, then the differences of the
 *   differences, bit-packed: trends (pressure, steady ramps, constant columns);
 * - SPARSE: the first value, then for each group of 8 differences a byte
 *   flagging which are not zero, followed by those as varints: fields that
 *   stand still for hours and then jump (accumulated radiation at night,
 *   precipitation), and any column whose differences are too wide to pack.
 *
 * A column that no scale reproduces exactly (more than 6 decimals, huge
 * magnitudes, or -0) is kept as raw float64: the round trip is always bit-exact.
 *
 *   u8 3 | varint n | when n > 0: varint (k0 << 1 | gapped), and when gapped
 *     n - 1 varints (k_i - k_{i-1} - 1)
 *   | 15 column heads: u8 (mode << 4 | hasMissing << 3 | decimals)
 *   | presence bitmaps of the columns that have missing values (bit set = present)
 *   | for each scaled column: varint byte length of each chunk
 *   | column data in catalogue order: scaled chunks, or n float64 LE (NaN = missing)
 *   | 4 zero bytes (so that bit-unpacking may read a whole 32-bit word anywhere)
 *
 * A scaled chunk with no present value has no bytes; any other starts with
 * u8 (encoding << 5 | width) and varint zigzag(first value); PACK2 follows with
 * varint zigzag(first difference). Bits are packed from the least significant.
 *
 * Format 2 (every chunk a run of varint zigzag deltas, steps as n varint gaps)
 * and format 1 (plain float64 columns) are still read.
 */
import { ELEMENT_COUNT } from './elements.js';
import { emptySeries, MAX_STEP, type RunSeries } from './run.js';
import {
  SeriesView,
  CHUNK,
  ENC_PACK1,
  ENC_PACK2,
  ENC_SPARSE,
  FORMAT_V2,
  FORMAT_V3,
  MAX_PACK_WIDTH,
  MODE_ALL_MISSING,
  MODE_RAW,
  MODE_SCALED,
  TAIL_PADDING,
} from './seriesView.js';
import { ByteReader, ByteWriter, varintLength, zigzag } from './varint.js';

const FORMAT_PLAIN = 1;
/** The format encodeSeries() writes. */
export const SERIES_FORMAT = FORMAT_V3;
const MAX_DECIMALS = 6;
/** Scaled integers stay within 2^50 so that deltas and zigzag stay exact doubles. */
const MAX_SCALED = 2 ** 50;
const POW10 = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000];

function fitsScale(v: number, d: number): boolean {
  const p = POW10[d]!;
  const s = Math.round(v * p);
  return Math.abs(s) <= MAX_SCALED && s / p === v;
}

/**
 * The smallest decimal scale that reproduces every present value exactly, or -1.
 * Values are tried at the scale reached so far; when a value raises it, the ones
 * before it are tried again at the new scale, since a value that fitted a smaller
 * scale may not fit a larger one (it may overflow MAX_SCALED).
 */
function columnScale(col: Float64Array): number {
  let d = 0;
  let raisedAt = 0;
  for (let i = 0; i < col.length; i++) {
    const v = col[i]!;
    if (v !== v) continue; // missing
    if (v === 0 && 1 / v < 0) return -1; // -0 has no scaled form
    if (!fitsScale(v, d)) {
      // Infinities never fit: d runs past MAX_DECIMALS.
      do if (++d > MAX_DECIMALS) return -1;
      while (!fitsScale(v, d));
      raisedAt = i;
    }
  }
  for (let i = 0; i < raisedAt; i++) {
    const v = col[i]!;
    if (v === v && !fitsScale(v, d)) return -1;
  }
  return d;
}

/** The encoder's buffers, reused (encoding is synchronous; the blob is copied out of them). */
const WRITER = new ByteWriter(64 + (MAX_STEP + 1) * 24);
const DATA = new ByteWriter((MAX_STEP + 1) * 20);

export function encodeSeries(series: RunSeries): Uint8Array {
  const n = series.steps.length;
  const chunks = Math.ceil(n / CHUNK);
  const w = WRITER.reset();
  w.byte(SERIES_FORMAT);
  w.varint(n);
  const steps = series.steps;
  let gapped = 0;
  for (let i = 1; i < n; i++) {
    if (steps[i]! <= steps[i - 1]!) throw new Error('series steps must be strictly ascending');
    if (steps[i]! !== steps[i - 1]! + 1) gapped = 1;
  }
  if (n > 0) w.varint(steps[0]! * 2 + gapped);
  if (gapped) for (let i = 1; i < n; i++) w.varint(steps[i]! - steps[i - 1]! - 1);
  const heads: number[] = [];
  const bitmaps: Uint8Array[] = [];
  for (let e = 0; e < ELEMENT_COUNT; e++) {
    const col = series.columns[e]!;
    let missing = 0;
    for (let i = 0; i < n; i++) if (col[i]! !== col[i]!) missing++; // NaN: missing
    if (missing === n) {
      heads.push(MODE_ALL_MISSING << 4);
      continue;
    }
    const d = columnScale(col);
    if (d < 0) {
      heads.push(MODE_RAW << 4);
      continue;
    }
    heads.push((MODE_SCALED << 4) | (missing > 0 ? 8 : 0) | d);
    if (missing > 0) {
      const bitmap = new Uint8Array((n + 7) >> 3);
      for (let i = 0; i < n; i++) if (!Number.isNaN(col[i]!)) bitmap[i >> 3]! |= 1 << (i & 7);
      bitmaps.push(bitmap);
    }
  }
  for (const h of heads) w.byte(h);
  for (const b of bitmaps) w.bytes(b);

  // Chunk data is written to a second buffer first, since the lengths come before it.
  const data = DATA.reset();
  const lengths: number[] = [];
  const raw = new DataView(new ArrayBuffer(8));
  const rawBytes = new Uint8Array(raw.buffer);
  for (let e = 0; e < ELEMENT_COUNT; e++) {
    const col = series.columns[e]!;
    const mode = heads[e]! >> 4;
    if (mode === MODE_RAW) {
      for (let i = 0; i < n; i++) {
        raw.setFloat64(0, col[i]!, true);
        data.bytes(rawBytes);
      }
    } else if (mode === MODE_SCALED) {
      const p = POW10[heads[e]! & 7]!;
      for (let c = 0; c < chunks; c++) {
        const start = data.len;
        let m = 0;
        const stop = Math.min(n, (c + 1) * CHUNK);
        for (let i = c * CHUNK; i < stop; i++) {
          const v = col[i]!;
          if (v === v) VALUES[m++] = Math.round(v * p); // not missing
        }
        if (m > 0) writeChunk(data, m);
        lengths.push(data.len - start);
      }
    }
  }
  for (const l of lengths) w.varint(l);
  w.bytes(data.buf.subarray(0, data.len));
  for (let i = 0; i < TAIL_PADDING; i++) w.byte(0);
  return w.take();
}

/** Bits needed for a non-negative integer below 2^24 (the packed widths). */
const bitWidth = (z: number): number => 32 - Math.clz32(z);

/** Scratch for one chunk: its present scaled values and their zigzag differences (encoding is synchronous). */
const VALUES = new Float64Array(CHUNK);
const Z1 = new Float64Array(CHUNK);
const Z2 = new Float64Array(CHUNK);
const PACKABLE = 2 ** MAX_PACK_WIDTH;

/** Writes count values of `width` bits each (width <= 24) from z, least significant first. */
function pack(w: ByteWriter, z: Float64Array, count: number, width: number): void {
  w.reserve(Math.ceil((count * width) / 8));
  const buf = w.buf;
  let len = w.len;
  let acc = 0;
  let bits = 0;
  for (let j = 0; j < count; j++) {
    acc |= z[j]! << bits;
    bits += width;
    while (bits >= 8) {
      buf[len++] = acc & 255;
      acc >>>= 8;
      bits -= 8;
    }
  }
  if (bits > 0) buf[len++] = acc & 255;
  w.len = len;
}

/**
 * One chunk's m present scaled values (VALUES[0 .. m), m >= 1) in the smallest
 * of the three encodings (see the format above). Ties go to PACK1, then PACK2:
 * they decode with the fewest branches.
 */
function writeChunk(w: ByteWriter, m: number): void {
  let max1 = 0;
  let max2 = 0;
  let sparse = (m + 6) >> 3; // a flag byte per group of 8 of the m - 1 differences
  let before = 0;
  for (let j = 1; j < m; j++) {
    const d = VALUES[j]! - VALUES[j - 1]!;
    const z = zigzag(d);
    Z1[j - 1] = z;
    if (z > max1) max1 = z;
    if (z !== 0) sparse += varintLength(z);
    if (j >= 2) {
      // Scaled values stay within 2^50, so differences of differences are exact; wider than 2^24 they are never packed.
      const zz = zigzag(d - before);
      Z2[j - 2] = zz;
      if (zz > max2) max2 = zz;
    }
    before = d;
  }
  const w1 = max1 < PACKABLE ? bitWidth(max1) : -1;
  const w2 = max2 < PACKABLE ? bitWidth(max2) : -1;
  const size1 = w1 < 0 ? Infinity : Math.ceil(((m - 1) * w1) / 8);
  const size2 = w2 < 0 || m < 2 ? Infinity : varintLength(Z1[0]!) + Math.ceil(((m - 2) * w2) / 8);
  const first = zigzag(VALUES[0]!);
  if (size1 <= size2 && size1 <= sparse) {
    w.byte((ENC_PACK1 << 5) | w1);
    w.varint(first);
    pack(w, Z1, m - 1, w1);
  } else if (size2 <= sparse) {
    w.byte((ENC_PACK2 << 5) | w2);
    w.varint(first);
    w.varint(Z1[0]!);
    pack(w, Z2, m - 2, w2);
  } else {
    w.byte(ENC_SPARSE << 5);
    w.varint(first);
    for (let g = 0; g < m - 1; g += 8) {
      const stop = Math.min(g + 8, m - 1);
      let flags = 0;
      for (let k = g; k < stop; k++) if (Z1[k] !== 0) flags |= 1 << (k - g);
      w.byte(flags);
      for (let k = g; k < stop; k++) if (Z1[k] !== 0) w.varint(Z1[k]!);
    }
  }
}

function decodePlain(buf: Buffer): RunSeries {
  const n = buf.readUInt16LE(1);
  if (buf.length !== 3 + 2 * n + 8 * n * ELEMENT_COUNT) {
    throw new Error('series blob has the wrong length');
  }
  const series = emptySeries(n);
  let o = 3;
  for (let i = 0; i < n; i++, o += 2) series.steps[i] = buf.readUInt16LE(o);
  for (let e = 0; e < ELEMENT_COUNT; e++) {
    const col = series.columns[e]!;
    for (let i = 0; i < n; i++, o += 8) col[i] = buf.readDoubleLE(o);
  }
  return series;
}

/** Random-access view of a blob: decodes only the chunks and columns asked for. */
export function openSeries(blob: Uint8Array): SeriesView {
  if (blob.length > 0 && blob[0] === FORMAT_PLAIN) {
    return SeriesView.ofSeries(decodePlain(Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength)));
  }
  if (blob.length === 0 || (blob[0] !== FORMAT_V2 && blob[0] !== FORMAT_V3)) throw new Error(`unknown series format ${blob[0]}`);
  return SeriesView.parse(new ByteReader(blob, 1), blob[0]);
}

/**
 * A series already encoded by encodeSeries (an ingest thread encodes the runs it reads, see
 * ingest/fileReaders.ts), with its record count.
 */
export interface EncodedSeries {
  readonly blob: Uint8Array;
  readonly records: number;
}

/**
 * What a store keeps of a new run's series: encoded here, or, when it comes encoded, checked to open with
 * the record count it claims, so that no store ever holds a blob it cannot read.
 */
export function encodedSeries(series: RunSeries | EncodedSeries): EncodedSeries {
  if (!('blob' in series)) return { blob: encodeSeries(series), records: series.steps.length };
  let records: number;
  try {
    records = openSeries(series.blob).length;
  } catch (err) {
    throw new Error(`an encoded series does not open: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (records !== series.records) throw new Error(`an encoded series holds ${records} records, not the ${series.records} it claims`);
  return series;
}

/** The whole series, decoded. */
export function decodeSeries(blob: Uint8Array): RunSeries {
  return openSeries(blob).toSeries();
}
