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
    while (x >= 128) {
      buf[this.len++] = (x % 128) | 128;
      x = Math.floor(x / 128);
    }
    buf[this.len++] = x;
  }
}

export class ByteReader {
  constructor(
    readonly buf: Uint8Array,
    public pos: number,
    readonly end = buf.length,
  ) {}

  byte(): number {
    if (this.pos >= this.end) throw new Error('series blob is truncated');
    return this.buf[this.pos++]!;
  }

  varint(): number {
    const buf = this.buf;
    let b = this.pos < this.end ? buf[this.pos++]! : this.truncated();
    if (b < 128) return b;
    let x = b & 127;
    let mul = 128;
    for (;;) {
      b = this.pos < this.end ? buf[this.pos++]! : this.truncated();
      x += (b & 127) * mul;
      if (b < 128) return x;
      mul *= 128;
      if (mul > 2 ** 56) throw new Error('series blob has a malformed varint');
    }
  }

  bytes(n: number): Uint8Array {
    if (this.pos + n > this.end) this.truncated();
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  private truncated(): never {
    throw new Error('series blob is truncated');
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
