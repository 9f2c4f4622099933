/**
 * Series codec: one (site, run) series <-> one blob, as kept by every store.
 *
 * Format 2 (compact, written now). Forecast values are decimal text with few
 * digits and move smoothly in time, so each column is kept as integers scaled by
 * 10^d (the smallest d <= 6 that reproduces every value of the column exactly),
 * delta-coded, zigzag-mapped and written as varints. Deltas restart at every
 * chunk of CHUNK records, so a page of a run decodes only the chunks and columns
 * it shows. A column that no scale reproduces exactly (more than 6 decimals, huge
 * magnitudes, or -0) is kept as raw float64: the round trip is always bit-exact.
 *
 *   u8 2 | varint n | steps: varint k0, then varint (k_i - k_{i-1} - 1)
 *   | 15 column heads: u8 (mode << 4 | hasMissing << 3 | decimals)
 *   | presence bitmaps of the columns that have missing values (bit set = present)
 *   | for each scaled column: varint byte length of each chunk
 *   | column data in catalogue order: scaled chunks, or n float64 LE (NaN = missing)
 *
 * Format 1 (plain float64 columns) is still read.
 */
import { ELEMENT_COUNT } from './elements.js';
import { emptySeries, type RunSeries } from './run.js';
import { SeriesView, CHUNK, MODE_ALL_MISSING, MODE_RAW, MODE_SCALED } from './seriesView.js';
import { ByteReader, ByteWriter, zigzag } from './varint.js';

const FORMAT_PLAIN = 1;
const FORMAT_COMPACT = 2;
const MAX_DECIMALS = 6;
/** Scaled integers stay within 2^50 so that deltas and zigzag stay exact doubles. */
const MAX_SCALED = 2 ** 50;
const POW10 = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000];

function fitsScale(v: number, d: number): boolean {
  const p = POW10[d]!;
  const s = Math.round(v * p);
  return Math.abs(s) <= MAX_SCALED && s / p === v;
}

/** The smallest decimal scale that reproduces every present value exactly, or -1. */
function columnScale(col: Float64Array): number {
  let d = 0;
  for (let i = 0; i < col.length; i++) {
    const v = col[i]!;
    if (Number.isNaN(v)) continue;
    if (Object.is(v, -0) || !Number.isFinite(v)) return -1;
    while (!fitsScale(v, d)) {
      if (++d > MAX_DECIMALS) return -1;
    }
  }
  // A value that fitted a smaller scale may overflow the final one.
  for (let i = 0; i < col.length; i++) {
    const v = col[i]!;
    if (!Number.isNaN(v) && !fitsScale(v, d)) return -1;
  }
  return d;
}

export function encodeSeries(series: RunSeries): Uint8Array {
  const n = series.steps.length;
  const chunks = Math.ceil(n / CHUNK);
  const w = new ByteWriter(64 + n * 24);
  w.byte(FORMAT_COMPACT);
  w.varint(n);
  let prev = -1;
  for (let i = 0; i < n; i++) {
    const k = series.steps[i]!;
    if (k <= prev) throw new Error('series steps must be strictly ascending');
    w.varint(i === 0 ? k : k - prev - 1);
    prev = k;
  }
  const heads: number[] = [];
  const bitmaps: Uint8Array[] = [];
  for (let e = 0; e < ELEMENT_COUNT; e++) {
    const col = series.columns[e]!;
    let missing = 0;
    for (let i = 0; i < n; i++) if (Number.isNaN(col[i]!)) missing++;
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
  const data = new ByteWriter(n * 20);
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
        let last = 0;
        for (let i = c * CHUNK; i < Math.min(n, (c + 1) * CHUNK); i++) {
          const v = col[i]!;
          if (Number.isNaN(v)) continue;
          const s = Math.round(v * p);
          data.varint(zigzag(s - last));
          last = s;
        }
        lengths.push(data.len - start);
      }
    }
  }
  for (const l of lengths) w.varint(l);
  w.bytes(data.buf.subarray(0, data.len));
  return w.take();
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
  if (blob.length === 0 || blob[0] !== FORMAT_COMPACT) throw new Error(`unknown series format ${blob[0]}`);
  return SeriesView.parse(new ByteReader(blob, 1));
}

/** The whole series, decoded. */
export function decodeSeries(blob: Uint8Array): RunSeries {
  return openSeries(blob).toSeries();
}
