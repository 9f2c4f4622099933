/**
 * Rendered forecast bodies, keyed by the normalised query (which includes the
 * run's revision, so a replaced run's bodies are never found again), each with
 * its compressed variants made once, on first demand.
 */
import { Doorkeeper } from '../cache/doorkeeper.js';
import { SegmentedLru } from '../cache/lru.js';
import { ByteSink } from '../domain/byteSink.js';
import { BufferPool } from './bufferPool.js';
import { compress, MIN_COMPRESS_BYTES, type Coding } from './conditional.js';

export interface CachedBody {
  readonly identity: Buffer;
  gzip?: Buffer;
  br?: Buffer;
  /** For a body that is not kept: hands its buffer back once the answer is sent. */
  readonly release?: () => void;
}

/**
 * The largest body kept, as a share of the capacity (128 KB of the default 64 MB):
 * pages and day-long downloads are kept, whole-run CSV files (about 250 KB) are
 * rendered each time into pooled buffers. A few large downloads then cannot push
 * out hundreds of pages, and the process's memory does not follow the churn of
 * large evicted bodies waiting for a full collection (docs/performance.md).
 */
const MAX_KEPT_SHARE = 1 / 512;

export class BodyCache {
  private readonly lru: SegmentedLru<string, CachedBody>;
  private readonly sink = new ByteSink(256 * 1024);
  private readonly door = new Doorkeeper();

  private readonly maxKept: number;

  constructor(capacityBytes: number) {
    this.maxKept = Math.floor(capacityBytes * MAX_KEPT_SHARE);
    this.lru = new SegmentedLru(capacityBytes, (b) => 256 + b.identity.length + (b.gzip?.length ?? 0) + (b.br?.length ?? 0));
  }

  private readonly pool = new BufferPool();

  /** The cached body for the key, if any. */
  cached(key: string): CachedBody | undefined {
    return this.lru.get(key);
  }

  /**
   * The cached body for the key, or one rendered now: kept if the key was asked
   * before, else in a pooled buffer to be released once sent (`release` set).
   * keyHash is fnv1a(key), which the caller has computed for the entity tag.
   */
  body(key: string, keyHash: number, render: (sink: ByteSink) => void): CachedBody {
    const cached = this.lru.get(key);
    if (cached) return cached;
    render(this.sink.reset());
    const written = this.sink.buf.subarray(0, this.sink.len);
    if (written.length <= this.maxKept && this.door.admitHash(keyHash)) {
      const entry = { identity: Buffer.from(written) };
      this.lru.set(key, entry);
      return entry;
    }
    const lease = this.pool.copyOf(written);
    return { identity: lease.bytes, release: lease.release };
  }

  /** The bytes to send in the coding, and the coding actually used. */
  encoded(key: string, entry: CachedBody, wanted: Coding): { bytes: Buffer; coding: Coding } {
    if (wanted === 'identity' || entry.identity.length < MIN_COMPRESS_BYTES) {
      return { bytes: entry.identity, coding: 'identity' };
    }
    let bytes = entry[wanted];
    if (!bytes) {
      bytes = compress(entry.identity, wanted);
      entry[wanted] = bytes;
      this.lru.resize(key);
    }
    // (An entry that was not admitted is compressed for this answer alone.)
    return { bytes, coding: wanted };
  }
}
