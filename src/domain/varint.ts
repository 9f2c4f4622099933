/** Growable byte writer and bounds-checked reader for varints (LEB128, up to 2^53) and zigzag. */

export class ByteWriter {
  buf: Uint8Array;
  len = 0;

  constructor(capacity = 4096) {
    this.buf = new Uint8Array(capacity);
  }

  private grow(extra: number): void {
    if (this.len + extra <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + extra) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  byte(b: number): void {
    this.grow(1);
    this.buf[this.len++] = b;
  }

  /** A non-negative integer up to 2^53. */
  varint(x: number): void {
    this.grow(8);
    while (x >= 128) {
      this.buf[this.len++] = (x % 128) | 128;
      x = Math.floor(x / 128);
    }
    this.buf[this.len++] = x;
  }

  bytes(b: Uint8Array): void {
    this.grow(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }

  result(): Uint8Array {
    return this.buf.slice(0, this.len);
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

export const zigzag = (x: number): number => (x >= 0 ? 2 * x : -2 * x - 1);
export const unzigzag = (z: number): number => (z % 2 === 0 ? z / 2 : -(z + 1) / 2);
