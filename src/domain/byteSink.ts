/**
 * A growable byte buffer: response bodies and CSV files are rendered into it as
 * ASCII bytes directly (see recordWriter.ts), and series blobs are encoded into
 * it (see varint.ts), so rendering or encoding allocates almost nothing.
 */
export class ByteSink {
  buf: Uint8Array;
  len = 0;
  private dataView: DataView | undefined;

  constructor(capacity = 64 * 1024) {
    this.buf = new Uint8Array(capacity);
  }

  /** A DataView over buf (for word-sized writes), made once per buffer. */
  get view(): DataView {
    let v = this.dataView;
    if (v === undefined || v.buffer !== this.buf.buffer) {
      v = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
      this.dataView = v;
    }
    return v;
  }

  reset(): this {
    this.len = 0;
    return this;
  }

  /** Makes room for `extra` more bytes, so that callers may write into buf directly. */
  reserve(extra: number): void {
    this.ensure(extra);
  }

  private ensure(extra: number): void {
    if (this.len + extra <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + extra) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  /** Text made only of characters below U+0080. */
  ascii(s: string): void {
    const n = s.length;
    this.ensure(n);
    const buf = this.buf;
    let len = this.len;
    for (let i = 0; i < n; i++) buf[len++] = s.charCodeAt(i);
    this.len = len;
  }

  /** Text that may hold any character (UTF-8). */
  text(s: string): void {
    const bytes = new TextEncoder().encode(s);
    this.ensure(bytes.length);
    this.buf.set(bytes, this.len);
    this.len += bytes.length;
  }

  bytes(b: Uint8Array): void {
    const n = b.length;
    this.ensure(n);
    const buf = this.buf;
    let len = this.len;
    for (let i = 0; i < n; i++) buf[len++] = b[i]!;
    this.len = len;
  }

  /** A copy of the bytes written. */
  take(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}

/** ASCII bytes of a string (for fragments rendered once and copied often). */
export function asciiBytes(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}
