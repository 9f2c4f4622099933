/**
 * Admission for caches: a key is admitted on its second sighting. Random
 * one-off queries then never enter (or churn) a cache, while any query asked
 * twice does.
 *
 * First sightings are kept as 32-bit hashes in a fixed table, one per slot; a
 * later key whose slot is taken replaces the one there, so under a stream of
 * one-off keys a sighting is remembered for about as many further keys as the
 * table has slots. A hash collision only admits a key early. The table is
 * allocated once and nothing is allocated per key (a Set of sightings, cleared
 * when full, grew a new table of about 1.5 MB in the old generation per refill).
 */
import { finishHash, fnv1a } from './hash.js';

export class Doorkeeper {
  private readonly table: Uint32Array;
  private readonly shift: number;

  /** @param slots first sightings remembered at most (rounded up to a power of two) */
  constructor(slots = 65_536) {
    const bits = Math.max(0, Math.ceil(Math.log2(Math.max(1, slots))));
    this.table = new Uint32Array(1 << bits);
    this.shift = 32 - bits;
  }

  /** True when the key was seen before and not since displaced. */
  admit(key: string): boolean {
    return this.admitHash(fnv1a(key));
  }

  /** The same for a key whose hash the caller has already computed. */
  admitHash(keyHash: number): boolean {
    // 0 marks an empty slot, so a key hashing to 0 is kept as 1 (a collision at worst).
    const h = keyHash || 1;
    const slot = this.slotOf(h);
    if (this.table[slot] === h) return true;
    this.table[slot] = h;
    return false;
  }

  /**
   * Whether admitHash would admit the key now, without recording a sighting. A key the doorkeeper has not
   * seen was never admitted, unless its sighting has been displaced since (then the caller does work twice).
   */
  seenHash(keyHash: number): boolean {
    const h = keyHash || 1;
    return this.table[this.slotOf(h)] === h;
  }

  private slotOf(h: number): number {
    // FNV-1a's high bits are poorly spread for keys that differ in a few digits: avalanche before taking the slot.
    return this.shift === 32 ? 0 : finishHash(h) >>> this.shift;
  }
}
