/**
 * Admission for caches: a key is admitted on its second sighting. Random
 * one-off queries then never enter (or churn) a cache, while any query asked
 * twice does. The set of first sightings is bounded by clearing it when full.
 */
export class Doorkeeper {
  private seen = new Set<string>();

  constructor(private readonly limit = 65_536) {}

  /** True when the key was seen before (since the last reset). */
  admit(key: string): boolean {
    if (this.seen.has(key)) return true;
    if (this.seen.size >= this.limit) this.seen = new Set();
    this.seen.add(key);
    return false;
  }
}
