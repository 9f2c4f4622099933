/**
 * Admission for caches: a key is admitted on its second sighting. Random
 * one-off queries then never enter (or churn) a cache, while any query asked
 * twice does. First sightings are kept as 30-bit hashes (a collision only
 * admits a key early) in a set that is cleared when full, so memory is bounded.
 */
import { fnv1a } from './hash.js';

export class Doorkeeper {
  private seen = new Set<number>();

  constructor(private readonly limit = 65_536) {}

  /** True when the key was seen before (since the last reset). */
  admit(key: string): boolean {
    // 30 bits: small integers are stored unboxed, so the set holds no heap objects.
    const h = fnv1a(key) & 0x3fffffff;
    if (this.seen.has(h)) return true;
    if (this.seen.size >= this.limit) this.seen = new Set();
    this.seen.add(h);
    return false;
  }
}
