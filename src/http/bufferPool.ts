/**
 * Reusable buffers for response bodies that are not kept in the body cache.
 * An answer to a one-off query needs its bytes only until the socket has taken
 * them; handing the buffer back on the response's 'close' spares an allocation
 * per request and the garbage (and resident memory) that the churn would cause.
 */
const MIN_CLASS = 12; // 4 KiB
const MAX_CLASS = 22; // 4 MiB
const KEEP_PER_CLASS = 32;

export interface Lease {
  readonly bytes: Buffer;
  release(): void;
}

export class BufferPool {
  private readonly free: Buffer[][] = Array.from({ length: MAX_CLASS + 1 }, () => []);
  /** Buffers made rather than reused (for the tests: a pool that is handed its buffers back stops making them). */
  made = 0;

  /** A buffer holding a copy of src, and how to give it back. */
  copyOf(src: Uint8Array): Lease {
    const lease = this.lease(src.length);
    lease.bytes.set(src);
    return lease;
  }

  /** A buffer of len bytes, not cleared (the caller fills it), and how to give it back. */
  lease(len: number): Lease {
    let cls = MIN_CLASS;
    while (1 << cls < len) cls++;
    if (cls > MAX_CLASS) return { bytes: Buffer.allocUnsafe(len), release: () => undefined };
    const list = this.free[cls]!;
    let whole = list.pop();
    if (whole === undefined) {
      whole = Buffer.allocUnsafeSlow(1 << cls);
      this.made++;
    }
    let released = false;
    return {
      bytes: whole.subarray(0, len),
      release: () => {
        if (released) return;
        released = true;
        if (list.length < KEEP_PER_CLASS) list.push(whole!);
      },
    };
  }
}
