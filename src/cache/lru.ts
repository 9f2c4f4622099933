/**
 * A cache bounded by the summed size of its values (bytes, as the caller
 * measures them), evicting approximately least-recently-used entries.
 *
 * A hit only marks the entry as used (no reordering, so a hit costs one Map
 * lookup). Eviction takes the oldest inserted entry; if it was used since it was
 * last placed, it gets a second chance at the young end instead. This is the
 * classic second-chance (CLOCK) approximation of LRU.
 */
interface Slot<V> {
  value: V;
  size: number;
  used: boolean;
}

export class SizedLru<K, V> {
  private readonly map = new Map<K, Slot<V>>();
  private usedBytes = 0;

  constructor(
    private readonly capacity: number,
    private readonly sizeOf: (value: V) => number,
  ) {}

  get(key: K): V | undefined {
    const slot = this.map.get(key);
    if (slot === undefined) return undefined;
    slot.used = true;
    return slot.value;
  }

  set(key: K, value: V): void {
    this.delete(key);
    const size = this.sizeOf(value);
    if (size > this.capacity) return;
    this.map.set(key, { value, size, used: false });
    this.usedBytes += size;
    this.evict();
  }

  /** Re-measures an entry whose value grew (e.g. a compressed variant was added). */
  resize(key: K): void {
    const slot = this.map.get(key);
    if (slot === undefined) return;
    const size = this.sizeOf(slot.value);
    this.usedBytes += size - slot.size;
    slot.size = size;
    if (size > this.capacity) this.delete(key);
    this.evict();
  }

  delete(key: K): void {
    const slot = this.map.get(key);
    if (slot === undefined) return;
    this.map.delete(key);
    this.usedBytes -= slot.size;
  }

  private evict(): void {
    // Each pass either evicts or clears a used mark, so this ends.
    while (this.usedBytes > this.capacity) {
      const [key, slot] = this.map.entries().next().value as [K, Slot<V>];
      this.map.delete(key);
      if (slot.used) {
        slot.used = false;
        this.map.set(key, slot);
      } else {
        this.usedBytes -= slot.size;
      }
    }
  }

  clear(): void {
    this.map.clear();
    this.usedBytes = 0;
  }

  get size(): number {
    return this.map.size;
  }

  get bytes(): number {
    return this.usedBytes;
  }
}
