/**
 * A growable byte buffer for rendering response bodies and CSV files as ASCII
 * bytes directly: numbers are written digit by digit from scaled integers, with
 * no intermediate strings, so rendering a page allocates almost nothing.
 */
const POW10 = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000];

export class ByteSink {
  buf: Uint8Array;
  len = 0;

  constructor(capacity = 64 * 1024) {
    this.buf = new Uint8Array(capacity);
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

  /** A non-negative integer below 2^53, in decimal. */
  uint(n: number): void {
    this.ensure(16);
    const buf = this.buf;
    if (n < 10) {
      buf[this.len++] = 48 + n;
      return;
    }
    let digits = 1;
    for (let t = n; t >= 10; t = Math.floor(t / 10)) digits++;
    let at = this.len + digits;
    this.len = at;
    while (n >= 10) {
      const q = Math.floor(n / 10);
      buf[--at] = 48 + (n - q * 10);
      n = q;
    }
    buf[--at] = 48 + n;
  }

  /** The value s / 10^d as a plain decimal, trailing zeros dropped (d <= 6, |s| < 2^53). */
  scaled(s: number, d: number): void {
    if (s < 0) {
      this.ensure(1);
      this.buf[this.len++] = 45; // '-'
      s = -s;
    }
    if (d === 0) {
      this.uint(s);
      return;
    }
    const p = POW10[d]!;
    let whole = Math.floor(s / p);
    let frac = s - whole * p;
    // Guard the floating division at the edges of the exact range.
    if (frac < 0) {
      whole--;
      frac += p;
    } else if (frac >= p) {
      whole++;
      frac -= p;
    }
    this.uint(whole);
    if (frac === 0) return;
    while (frac % 10 === 0) {
      frac /= 10;
      d--;
    }
    this.ensure(8);
    const buf = this.buf;
    buf[this.len++] = 46; // '.'
    let at = this.len + d;
    this.len = at;
    for (let i = 0; i < d; i++) {
      const q = Math.floor(frac / 10);
      buf[--at] = 48 + (frac - q * 10);
      frac = q;
    }
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
