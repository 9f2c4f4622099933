/**
 * Series codec: one (site, run) series <-> one blob, as kept by every store.
 *
 * Format 1 (plain): byte 0 = 1, then u16 LE record count n, n u16 LE grid
 * steps, then the fifteen columns in catalogue order, n float64 LE each, NaN
 * marking a missing value. Exact by construction; the leading format byte
 * lets a compact encoding be added without rewriting stored runs.
 */
import { ELEMENT_COUNT } from './elements.js';
import { emptySeries, type RunSeries } from './run.js';

const FORMAT_PLAIN = 1;

export function encodeSeries(series: RunSeries): Uint8Array {
  const n = series.steps.length;
  const buf = Buffer.alloc(3 + 2 * n + 8 * n * ELEMENT_COUNT);
  buf[0] = FORMAT_PLAIN;
  buf.writeUInt16LE(n, 1);
  let o = 3;
  for (let i = 0; i < n; i++, o += 2) buf.writeUInt16LE(series.steps[i]!, o);
  for (let e = 0; e < ELEMENT_COUNT; e++) {
    const col = series.columns[e]!;
    for (let i = 0; i < n; i++, o += 8) buf.writeDoubleLE(col[i]!, o);
  }
  return buf;
}

export function decodeSeries(blob: Uint8Array): RunSeries {
  const buf = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
  if (buf.length < 3 || buf[0] !== FORMAT_PLAIN) {
    throw new Error(`unknown series format ${buf[0]}`);
  }
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
