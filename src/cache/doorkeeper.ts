/**
 * Admission for caches: a key is admitted on its second sighting. Random
 * one-off queries then never enter (or churn) a cache, while any query asked
 * twice does. First sightings are kept as 30-bit hashes (a collision only
 * admits a key early) in a set that is cleared when full, so memory is bounded.
 */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // 30 bits: small integers are stored unboxed, so the set holds no heap objects.
  return h & 0x3fffffff;
}

export class Doorkeeper {
  private seen = new Set<number>();

  constructor(private readonly limit = 65_536) {}

  /** True when the key was seen before (since the last reset). */
  admit(key: string): boolean {
    const h = hash32(key);
    if (this.seen.has(h)) return true;
    if (this.seen.size >= this.limit) this.seen = new Set();
    this.seen.add(h);
    return false;
  }
}
