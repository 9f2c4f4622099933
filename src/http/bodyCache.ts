/**
 * Rendered forecast bodies, keyed by the normalised query (which includes the
 * run's revision, so a replaced run's bodies are never found again), each with
 * its compressed variants made once, on first demand.
 */
import { Doorkeeper } from '../cache/doorkeeper.js';
import { SizedLru } from '../cache/lru.js';
import { ByteSink } from '../domain/byteSink.js';
import { compress, MIN_COMPRESS_BYTES, type Coding } from './conditional.js';

export interface CachedBody {
  readonly identity: Buffer;
  gzip?: Buffer;
  br?: Buffer;
}

export class BodyCache {
  private readonly lru: SizedLru<string, CachedBody>;
  private readonly sink = new ByteSink(256 * 1024);
  private readonly door = new Doorkeeper();

  constructor(capacityBytes: number) {
    this.lru = new SizedLru(capacityBytes, (b) => 256 + b.identity.length + (b.gzip?.length ?? 0) + (b.br?.length ?? 0));
  }

  has(key: string): boolean {
    return this.lru.get(key) !== undefined;
  }

  /** Renders a body into fresh bytes. */
  render(write: (sink: ByteSink) => void): Buffer {
    write(this.sink.reset());
    const bytes = this.sink.take();
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  }

  /** The cached body for the key, or one rendered now (and kept if the key was asked before). */
  body(key: string, given: Buffer | undefined, render: () => Buffer): CachedBody {
    let entry = this.lru.get(key);
    if (!entry) {
      entry = { identity: given ?? render() };
      if (this.door.admit(key)) this.lru.set(key, entry);
    }
    return entry;
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

  stats(): { entries: number; bytes: number } {
    return { entries: this.lru.size, bytes: this.lru.bytes };
  }
}
