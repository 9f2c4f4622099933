/**
 * A least-recently-used map bounded by the summed size of its values (bytes, as
 * the caller measures them). Map iteration order is insertion order, so the
 * first key is the least recently used one.
 */
export class SizedLru<K, V> {
  private readonly map = new Map<K, { value: V; size: number }>();
  private used = 0;

  constructor(
    private readonly capacity: number,
    private readonly sizeOf: (value: V) => number,
  ) {}

  get(key: K): V | undefined {
    const hit = this.map.get(key);
    if (hit === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, hit);
    return hit.value;
  }

  set(key: K, value: V): void {
    this.delete(key);
    const size = this.sizeOf(value);
    if (size > this.capacity) return;
    this.map.set(key, { value, size });
    this.used += size;
    while (this.used > this.capacity) {
      const oldest = this.map.keys().next().value as K;
      this.delete(oldest);
    }
  }

  /** Re-measures an entry whose value grew (e.g. a compressed variant was added). */
  resize(key: K): void {
    const hit = this.map.get(key);
    if (hit !== undefined) this.set(key, hit.value);
  }

  delete(key: K): void {
    const hit = this.map.get(key);
    if (hit === undefined) return;
    this.map.delete(key);
    this.used -= hit.size;
  }

  clear(): void {
    this.map.clear();
    this.used = 0;
  }

  get size(): number {
    return this.map.size;
  }

  get bytes(): number {
    return this.used;
  }
}
