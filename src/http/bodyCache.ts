/**
 * Rendered forecast bodies, keyed by the normalised query (which includes the
 * run's revision, so a replaced run's bodies are never found again), each with
 * its compressed variants made once, on first demand.
 *
 * Kept bodies and their variants live in an ArenaCache: copied into regions of
 * preallocated segments, so that a body kept for a while and then evicted
 * leaves no old-generation garbage behind (with a cache of ordinary Buffers,
 * the process held about twice the cache's bound). A socket may still be
 * sending a body after the turn that handed it out, so every answer pins the
 * bytes it sends until its response closes.
 */
import { ArenaCache } from '../cache/arenaCache.js';
import { Doorkeeper } from '../cache/doorkeeper.js';
import { ByteSink } from '../domain/byteSink.js';
import { BufferPool } from './bufferPool.js';
import { compress, MIN_COMPRESS_BYTES, type Coding } from './conditional.js';

export interface CachedBody {
  readonly key: string;
  readonly identity: Buffer;
  /** For a body that is not kept: hands its buffer back once the answer is sent. */
  readonly release?: () => void;
}

/** The bytes of an answer, and what to call once its response has closed. */
export interface Sending {
  readonly bytes: Buffer;
  readonly coding: Coding;
  readonly release: (() => void) | undefined;
}

/** Arena keys of the compressed variants (a normalised key never holds a newline). */
const variantKey = (key: string, coding: Coding): string => `${key}\n${coding}`;

export class BodyCache {
  private readonly arena: ArenaCache<string, Buffer>;
  private readonly sink = new ByteSink(256 * 1024);
  private readonly door = new Doorkeeper();
  private readonly pool = new BufferPool();

  constructor(capacityBytes: number) {
    this.arena = new ArenaCache(capacityBytes);
  }

  private keep(key: string, bytes: Uint8Array): Buffer | undefined {
    return this.arena.set(key, bytes.length, (region) => {
      const kept = (region as Buffer).subarray(0, bytes.length);
      kept.set(bytes);
      return kept;
    });
  }

  /**
   * The cached body for the key, or one rendered now: kept if the key was asked
   * before, else in a pooled buffer to be released once sent.
   */
  body(key: string, render: ((sink: ByteSink) => void) | undefined): CachedBody | undefined {
    const cached = this.arena.get(key);
    if (cached) return { key, identity: cached };
    if (!render) return undefined;
    render(this.sink.reset());
    const written = this.sink.buf.subarray(0, this.sink.len);
    const kept = this.door.admit(key) ? this.keep(key, written) : undefined;
    if (kept) return { key, identity: kept };
    const lease = this.pool.copyOf(written);
    return { key, identity: lease.bytes, release: lease.release };
  }

  /** The coding an answer in `wanted` gets: small bodies are sent as they are. */
  coding(entry: CachedBody, wanted: Coding): Coding {
    return entry.identity.length < MIN_COMPRESS_BYTES ? 'identity' : wanted;
  }

  /**
   * The bytes to send in the coding (from coding()), held until release is
   * called: call it once the response has closed.
   */
  sending(entry: CachedBody, coding: Coding): Sending {
    if (entry.release) {
      // Not kept: compressed for this answer alone; the pooled buffer goes back once sent.
      return { bytes: coding === 'identity' ? entry.identity : compress(entry.identity, coding), coding, release: entry.release };
    }
    let key = entry.key;
    let bytes: Buffer | undefined = entry.identity;
    if (coding !== 'identity') {
      key = variantKey(entry.key, coding);
      bytes = this.arena.get(key);
      if (bytes === undefined) {
        const made = compress(entry.identity, coding);
        bytes = this.keep(key, made);
        // Not kept (no room this turn): sent from its own buffer, which needs no pin.
        if (bytes === undefined) return { bytes: made, coding, release: undefined };
      }
    }
    const release = this.arena.pin(key, bytes);
    // A kept body is always found under its key in the turn that handed it out; should it not be, a
    // copy keeps the answer independent of the region.
    return release ? { bytes, coding, release } : { bytes: Buffer.from(bytes), coding, release: undefined };
  }
}
