/** Byte writer and bounds-checked reader for varints (LEB128, up to 2^53) and zigzag. */
import { ByteSink } from './byteSink.js';

/** A byte sink that also writes single bytes and varints. */
export class ByteWriter extends ByteSink {
  byte(b: number): void {
    this.reserve(1);
    this.buf[this.len++] = b;
  }

  /** A non-negative integer up to 2^53. */
  varint(x: number): void {
    this.reserve(8);
    const buf = this.buf;
    let len = this.len;
    // Below 2^31 in 32-bit integer steps; wider values (up to 2^53) in doubles.
    for (; x >= 2 ** 31; x = Math.floor(x / 128)) buf[len++] = (x % 128) | 128;
    for (; x >= 128; x >>>= 7) buf[len++] = (x & 127) | 128;
    buf[len++] = x;
    this.len = len;
  }
}

export const truncated = (): never => {
  throw new Error('series blob is truncated');
};

/** Where readVarint() stopped: set by every call (decoding is synchronous). */
export let varintEnd = 0;

/**
 * The varint at buf[pos], which must end before stop (at most 8 bytes: 2^56);
 * its end in varintEnd. A free function with the end in a module variable, not
 * a reader object: this is read per value in every uncached page.
 */
export function readVarint(buf: Uint8Array, pos: number, stop: number): number {
  if (pos >= stop) truncated();
  let b = buf[pos++]!;
  let z = b & 127;
  for (let mul = 128; b >= 128; mul *= 128) {
    if (pos >= stop) truncated();
    if (mul > 2 ** 49) throw new Error('series blob has a malformed varint');
    b = buf[pos++]!;
    z += (b & 127) * mul;
  }
  varintEnd = pos;
  return z;
}

export class ByteReader {
  constructor(
    readonly buf: Uint8Array,
    public pos: number,
    readonly end = buf.length,
  ) {}

  varint(): number {
    const z = readVarint(this.buf, this.pos, this.end);
    this.pos = varintEnd;
    return z;
  }

  bytes(n: number): Uint8Array {
    if (this.pos + n > this.end) truncated();
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

/** Bytes of the varint of a non-negative integer up to 2^53. */
export function varintLength(x: number): number {
  if (x < 128) return 1;
  if (x < 16_384) return 2;
  if (x < 2_097_152) return 3;
  let len = 4;
  for (x = Math.floor(x / 2_097_152); x >= 128; len++) x = Math.floor(x / 128);
  return len;
}

export const zigzag = (x: number): number => (x >= 0 ? 2 * x : -2 * x - 1);
export const unzigzag = (z: number): number => (z % 2 === 0 ? z / 2 : -(z + 1) / 2);
