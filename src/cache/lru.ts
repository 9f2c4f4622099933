/**
 * A least-recently-used cache bounded by the summed size of its values (bytes,
 * as the caller measures them): a Map for lookup and an intrusive doubly linked
 * list for recency, so get, set and eviction are O(1). (Evicting through a Map
 * iterator instead degrades badly: deleted slots pile up at the front of the
 * Map's table and every fresh iterator walks over them.)
 */
interface Node<K, V> {
  key: K;
  value: V;
  size: number;
  newer: Node<K, V> | undefined;
  older: Node<K, V> | undefined;
}

export class SizedLru<K, V> {
  private readonly map = new Map<K, Node<K, V>>();
  private newest: Node<K, V> | undefined;
  private oldest: Node<K, V> | undefined;
  private usedBytes = 0;

  constructor(
    private readonly capacity: number,
    private readonly sizeOf: (value: V) => number,
  ) {}

  get(key: K): V | undefined {
    const node = this.map.get(key);
    if (node === undefined) return undefined;
    if (node !== this.newest) {
      this.unlink(node);
      this.pushNewest(node);
    }
    return node.value;
  }

  set(key: K, value: V): void {
    this.delete(key);
    const size = this.sizeOf(value);
    if (size > this.capacity) return;
    const node: Node<K, V> = { key, value, size, newer: undefined, older: undefined };
    this.map.set(key, node);
    this.pushNewest(node);
    this.usedBytes += size;
    this.evict();
  }

  /** Re-measures an entry whose value grew (e.g. a compressed variant was added). */
  resize(key: K): void {
    const node = this.map.get(key);
    if (node === undefined) return;
    const size = this.sizeOf(node.value);
    this.usedBytes += size - node.size;
    node.size = size;
    if (size > this.capacity) this.delete(key);
    else this.evict();
  }

  delete(key: K): void {
    const node = this.map.get(key);
    if (node === undefined) return;
    this.map.delete(key);
    this.unlink(node);
    this.usedBytes -= node.size;
  }

  get size(): number {
    return this.map.size;
  }

  get bytes(): number {
    return this.usedBytes;
  }

  private evict(): void {
    while (this.usedBytes > this.capacity && this.oldest !== undefined) this.delete(this.oldest.key);
  }

  private pushNewest(node: Node<K, V>): void {
    node.older = this.newest;
    node.newer = undefined;
    if (this.newest) this.newest.newer = node;
    this.newest = node;
    if (!this.oldest) this.oldest = node;
  }

  private unlink(node: Node<K, V>): void {
    if (node.newer) node.newer.older = node.older;
    else this.newest = node.older;
    if (node.older) node.older.newer = node.newer;
    else this.oldest = node.newer;
    node.newer = node.older = undefined;
  }
}

/**
 * Segmented LRU: new entries start in a small probation segment; an entry read
 * again there moves to the protected segment. A flood of entries asked once or
 * twice (random queries) then cycles through probation only, and cannot push
 * out the entries that are asked again and again (the hot pages).
 */
export class SegmentedLru<K, V> {
  private readonly probation: SizedLru<K, V>;
  private readonly protectedPart: SizedLru<K, V>;

  constructor(capacity: number, sizeOf: (value: V) => number, probationShare = 0.2) {
    this.probation = new SizedLru(Math.floor(capacity * probationShare), sizeOf);
    this.protectedPart = new SizedLru(capacity - Math.floor(capacity * probationShare), sizeOf);
  }

  get(key: K): V | undefined {
    const hot = this.protectedPart.get(key);
    if (hot !== undefined) return hot;
    const warm = this.probation.get(key);
    if (warm !== undefined) {
      this.probation.delete(key);
      this.protectedPart.set(key, warm);
    }
    return warm;
  }

  set(key: K, value: V): void {
    this.protectedPart.delete(key);
    this.probation.set(key, value);
  }

  resize(key: K): void {
    this.protectedPart.resize(key);
    this.probation.resize(key);
  }

  delete(key: K): void {
    this.protectedPart.delete(key);
    this.probation.delete(key);
  }

  get size(): number {
    return this.probation.size + this.protectedPart.size;
  }

  get bytes(): number {
    return this.probation.bytes + this.protectedPart.bytes;
  }
}
