/**
 * Rendered forecast bodies, keyed by the normalised query (which includes the
 * run's revision, so a replaced run's bodies are never found again), each with
 * its compressed variants made once, on first demand. Bodies too large to keep
 * whole keep only their compressed variants.
 */
import { Doorkeeper } from '../cache/doorkeeper.js';
import { SegmentedLru, SizedLru, usedSincePassed } from '../cache/lru.js';
import { ByteSink } from '../domain/byteSink.js';
import type { DiskCacheStats, DiskRing, RingRecord } from '../cache/diskRing.js';
import { BufferPool, type Lease } from './bufferPool.js';
import { compress, MIN_COMPRESS_BYTES, type Coding } from './conditional.js';

export interface CachedBody {
  /** The bytes; emptied when a kept body leaves the cache, so that a holder of the entry does not keep them alive. */
  identity: Buffer;
  gzip?: Buffer;
  br?: Buffer;
  /** For a body that is not kept: hands its buffer back once the answer is sent. */
  readonly release?: () => void;
  /** A kept body that has left the cache: to be looked up again, never sent. */
  dropped?: boolean;
  /** A kept body sent without a lookup (see sentAgain) since the cache last passed it. */
  used?: boolean;
  /** A kept body not yet read again: in the cache's probation segment, where only a lookup promotes it. */
  probation?: boolean;
  /** A kept body's answers queued or still being written (see BodyCache.lease). */
  sending?: number;
  /** A kept body's end of one such answer, made once per body. */
  sent?: () => void;
}

/** A body's key: its text for the maps, made only when asked (BodyKey), and its 32-bit hash for the doorkeeper. */
export interface BodyCacheKey {
  readonly hash: number;
  readonly text: string;
}

const EMPTY = Buffer.alloc(0);

/** What a body's copy on disk keeps beside its bytes: their CRC-32 when it was known (a bulk download's entry). */
export type BodyCopyMeta = number | undefined;

/** A whole-run CSV file for a bulk download's entry, found kept: bytes of its own, and their CRC-32 if known. */
export interface EntryCopy {
  /** In a pooled buffer: release() hands it back once nothing reads it any more. */
  readonly bytes: Buffer;
  readonly crc32: number | undefined;
  /** Read from the disk, not from memory: slower than rendering. */
  readonly slow: boolean;
  release(): void;
}

/** A copy in memory of its own (never a slice of Node's shared pool), so that it can be handed back alone. */
function ownCopy(bytes: Uint8Array): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  copy.set(bytes);
  return copy;
}

/**
 * Hands a kept body's memory back now rather than at V8's next full collection. A kept body lives long
 * enough to reach the old generation, and an old ArrayBuffer is freed only by a mark-compact, which V8 starts
 * once about 64 MB of external memory has accumulated since the last one: under churn (repeated one-off
 * queries admitted, then evicted) that was up to 60 MB of dead bodies on top of the cache's bound at 10,000
 * sites, and a peak RSS over 500 MB. Transferring the ArrayBuffer detaches it and moves its memory to a new,
 * young one that the next scavenge frees. Only a buffer that is the whole of its ArrayBuffer (ownCopy) is
 * transferred, and only once no answer is writing it (BodyCache.lease).
 */
function freeNow(bytes: Buffer | undefined): void {
  if (bytes !== undefined && bytes.byteLength > 0 && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) {
    try {
      structuredClone(bytes.buffer, { transfer: [bytes.buffer as ArrayBuffer] });
    } catch {
      // Not transferable after all: the collector frees it, as it would have without this.
    }
  }
}

function free(entry: CachedBody): void {
  freeNow(entry.identity);
  freeNow(entry.gzip);
  freeNow(entry.br);
  entry.identity = EMPTY;
  entry.gzip = entry.br = undefined;
}

/** The coding a body is sent in for a client that wants `wanted`: small bodies go as they are. */
export const codingOf = (entry: CachedBody, wanted: Coding): Coding =>
  wanted === 'identity' || entry.identity.length < MIN_COMPRESS_BYTES ? 'identity' : wanted;

/**
 * The largest body kept, as a share of the capacity (468 KB of today's default): pages and whole-run CSV
 * files (about 140 KB) are kept; larger bodies are rendered each time into pooled buffers (their gzip and br
 * variants are kept, see CODED_SHARE). A few large downloads then cannot push out hundreds of pages
 * (docs/performance.md).
 */
const MAX_KEPT_SHARE = 1 / 512;
/**
 * The share of the capacity for the compressed variants of bodies too large to
 * keep whole: such a variant is a fifth (JSON) to a third (CSV) of its body's
 * size, and compressing it costs about 1 ms, several times the rendering.
 */
const CODED_SHARE = 1 / 32;
/**
 * What a kept body costs besides its bytes: the entry, its Buffer and ArrayBuffer objects and their backing
 * store's record, the cache's node and map slot (its key text is counted by the remembered answer). Measured
 * with a heap snapshot at 10,000 sites (docs/performance.md, "Memory").
 */
const ENTRY_BYTES = 640;

export class BodyCache {
  private readonly lru: SegmentedLru<string, CachedBody>;
  private readonly sink = new ByteSink(256 * 1024);
  private readonly door = new Doorkeeper();

  private readonly maxKept: number;

  /** Compressed variants of bodies over maxKept, by coding and key. */
  private readonly coded: SizedLru<string, Buffer>;

  constructor(
    capacityBytes: number,
    /**
     * Copies on local disk of bodies that left the memory cache (--body-disk-mb): a body asked for again is
     * then read back rather than rendered again. The many customers of a provider download the same
     * whole-run files, and at 10,000 sites the latest runs' files alone are 1.4 GB of CSV.
     */
    private readonly disk?: DiskRing<BodyCopyMeta>,
  ) {
    this.maxKept = Math.floor(capacityBytes * MAX_KEPT_SHARE);
    const codedBytes = Math.floor(capacityBytes * CODED_SHARE);
    this.lru = new SegmentedLru<string, CachedBody>(capacityBytes - codedBytes, (b) => ENTRY_BYTES + b.identity.length + (b.gzip?.length ?? 0) + (b.br?.length ?? 0), {
      dropped: (b, key) => {
        b.dropped = true;
        // Written before its memory may be handed back (free, below).
        if (b.identity.length > 0) this.disk?.putNow(key, b.identity, undefined);
        // A body still being written is handed back by the end of its last answer (lease).
        if (!b.sending) free(b);
      },
      secondChance: usedSincePassed,
      promoted: (b) => {
        b.probation = false;
      },
      demoted: (b) => {
        b.probation = true;
      },
    });
    this.coded = new SizedLru(codedBytes, (b) => 128 + b.length);
  }

  /** Buffers of bodies not kept, and of bulk downloads' entries (archiveBody.ts): one pool for both. */
  readonly pool = new BufferPool();

  /** Lookups that found a body (also a remembered answer's body sent again) and that rendered one; read by the metrics. */
  readonly lookups = { hits: 0, misses: 0 };

  /** Bytes the kept bodies and compressed variants count (their objects included), and the most they may. */
  get bytes(): number {
    return this.lru.bytes + this.coded.bytes;
  }

  get capacity(): number {
    return this.lru.capacity + this.coded.capacity;
  }

  /** The cached body for the key, if any. */
  cached(key: string): CachedBody | undefined {
    return this.lru.get(key);
  }

  /**
   * A kept body that a caller holds (a remembered answer) and sends again
   * without looking it up: undefined once it has left the cache. The body is
   * marked, so that it is passed over once when it would be evicted, as a
   * looked-up one would have been moved to the front: a lookup of the key costs
   * a map probe and a relink of cold list nodes, which with thousands of hot
   * pages is a measurable share of a cached answer.
   */
  sentAgain(key: BodyCacheKey, entry: CachedBody): CachedBody | undefined {
    if (entry.dropped === true) return undefined;
    // Still in probation: the one lookup that promotes it, as it would have been promoted before.
    if (entry.probation === true) {
      const found = this.lru.get(key.text);
      if (found !== undefined) this.lookups.hits++;
      return found;
    }
    entry.used = true;
    this.lookups.hits++;
    return entry;
  }

  /**
   * The cached body for the key, or one rendered now: kept if the key was asked
   * before, else in a pooled buffer to be released once sent (`release` set).
   * Only a key the doorkeeper has seen is looked up: a body is kept on its key's
   * second sighting, so a first sighting (a one-off query) cannot be in the cache,
   * and its key's text is never made. A body the caller expects to be asked for
   * again (`likely`) is kept from its first sighting while the cache has room.
   */
  body(key: BodyCacheKey, render: (sink: ByteSink) => void, likely = false): CachedBody {
    const seen = this.door.seenHash(key.hash);
    const cached = seen ? this.lru.get(key.text) : undefined;
    if (cached) {
      this.lookups.hits++;
      return cached;
    }
    // Not in memory, as for runs: a copy read back from disk is counted by the disk's own metrics.
    this.lookups.misses++;
    const copy = seen && this.disk !== undefined ? this.fromDisk(key.text) : undefined;
    if (copy !== undefined) return copy;
    render(this.sink.reset());
    const written = this.sink.buf.subarray(0, this.sink.len);
    if (written.length <= this.maxKept && (this.door.admitHash(key.hash) || (likely && this.hasRoomFor(written.length)))) {
      const entry: CachedBody = { identity: ownCopy(written), dropped: false, used: false, probation: true, sending: 0, sent: undefined };
      this.lru.set(key.text, entry);
      return entry;
    }
    const lease = this.pool.copyOf(written);
    return { identity: lease.bytes, release: lease.release };
  }

  /**
   * Whether a body of length bytes fits without evicting anything: then a likely body is kept from its first
   * sighting (a fresh server's hot pages rendered once, not twice), while the doorkeeper still guards a full
   * cache against one-off queries.
   */
  private hasRoomFor(length: number): boolean {
    return this.lru.bytes + ENTRY_BYTES + length <= this.lru.capacity;
  }

  /** A body's copy on disk read into a pooled buffer, handed back once sent; undefined if none can be read now. */
  private fromDisk(key: string): CachedBody | undefined {
    const read = this.readCopy(key);
    return read && { identity: read.lease.bytes, release: read.lease.release };
  }

  /** The copy on disk under key read at once into a pooled buffer, with what was kept beside it; undefined if none can be read now. */
  private readCopy(key: string): { lease: Lease; copy: RingRecord<BodyCopyMeta> } | undefined {
    let lease: Lease | undefined;
    const copy = this.disk?.readNow(key, (length) => (lease = this.pool.lease(length)).bytes);
    if (copy === undefined) {
      lease?.release();
      return undefined;
    }
    return { lease: lease!, copy };
  }

  /**
   * A bulk download's entry found kept under the key of its single download (a whole-run CSV file), as bytes of
   * its own: copied from memory, or read at once from its copy on disk (`slow` when that read came from the
   * disk rather than the OS's memory). Undefined when there is none, or reads of copies go through libuv's
   * threads for now. Neither counted as a lookup nor moved in the memory cache: a download of every site must
   * not push out the answers of single requests.
   */
  entry(key: string): EntryCopy | undefined {
    const kept = this.lru.peek(key);
    if (kept !== undefined && kept.identity.length > 0) {
      const lease = this.pool.copyOf(kept.identity);
      return { bytes: lease.bytes, crc32: undefined, slow: false, release: lease.release };
    }
    const read = this.readCopy(key);
    return read && { bytes: read.lease.bytes, crc32: read.copy.meta, slow: read.copy.slow === true, release: read.lease.release };
  }

  /**
   * Keeps a bulk download's rendered entry as a copy on disk under the key of its single download, unless one
   * is kept: the many customers of a provider download the same run's archive within minutes of each other.
   *
   * Written before this returns, on the serving thread: the entry's buffer then goes back to the pool as soon
   * as the socket has taken it, and the next entry reuses it while it is still in the processor's cache. A
   * write handed to libuv's threads made a 10,000-site run's first bulk download cost 12-18 % more CPU, with
   * the server on one core (docs/performance.md). The copy into the page cache takes tens of microseconds
   * beside the few hundred the entry took to render.
   */
  keepEntry(key: string, bytes: Buffer, crc32: number): void {
    if (this.disk === undefined || this.disk.has(key) || this.lru.peek(key) !== undefined) return;
    this.disk.putNow(key, bytes, crc32);
  }

  /** The copies on disk, if any: what they hold and how they were read (for /metrics). */
  diskStats(): DiskCacheStats | undefined {
    return this.disk?.stats();
  }

  /** Resolves once the copies on disk being written or read are (every copy kept before is then readable). */
  diskSettled(): Promise<void> {
    return this.disk?.settled() ?? Promise.resolve();
  }

  /** Closes the copies on disk. */
  close(): Promise<void> {
    return this.disk?.close() ?? Promise.resolve();
  }

  /**
   * What to call once an answer with this body's bytes has been written (turnBatch.ts): for a body not kept,
   * its release; for a kept one, the end of one answer in flight, so that a body evicted meanwhile keeps its
   * bytes until the last such answer is written. Taken before the bytes are chosen: making a compressed
   * variant may evict the body itself.
   */
  lease(entry: CachedBody): () => void {
    if (entry.release !== undefined) return entry.release;
    entry.sending!++;
    return (entry.sent ??= () => {
      if (--entry.sending! === 0 && entry.dropped) free(entry);
    });
  }

  /** The bytes to send in the coding, and the coding actually used. */
  encoded(key: BodyCacheKey, entry: CachedBody, wanted: Coding): { bytes: Buffer; coding: Coding } {
    const coding = codingOf(entry, wanted);
    if (coding === 'identity') return { bytes: entry.identity, coding };
    let bytes = entry[coding];
    if (bytes) return { bytes, coding };
    if (entry.release === undefined) {
      bytes = ownCopy(compress(entry.identity, coding));
      entry[coding] = bytes;
      this.lru.resize(key.text);
    } else if (entry.identity.length > this.maxKept) {
      // Too large to keep whole: its compressed variant, a fraction of the size, is kept on its own.
      const codedKey = `${coding}|${key.text}`;
      bytes = this.coded.get(codedKey);
      if (!bytes) {
        bytes = compress(entry.identity, coding);
        if (bytes.length <= this.maxKept) this.coded.set(codedKey, bytes);
      }
    } else {
      // Not kept (yet): compressed for this answer alone.
      bytes = compress(entry.identity, coding);
    }
    return { bytes, coding };
  }
}
