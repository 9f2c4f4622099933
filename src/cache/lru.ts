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

/** What a cache's owner may learn of and decide about its values. */
export interface LruHooks<V> {
  /** The value left the cache (evicted, deleted or replaced), so that holders of it can tell. */
  dropped?(value: V): void;
  /**
   * Asked of the least recent value before it is evicted: true keeps it once
   * more as the most recent. For values read without get() (a holder that keeps
   * the value itself marks it, and this reads and clears the mark).
   */
  secondChance?(value: V): boolean;
  /** SegmentedLru only: the value was read again in probation and moved to the protected segment. */
  promoted?(value: V): void;
  /** SegmentedLru only: the value was the least recent of a full protected segment and moved back to probation. */
  demoted?(value: V): void;
}

/** A value its holder marks as used when it reads it without get(). */
export interface Marked {
  used?: boolean;
}

/** LruHooks.secondChance for Marked values: whether the value was used since it was last passed, clearing the mark. */
export function usedSincePassed(value: Marked): boolean {
  const used = value.used === true;
  value.used = false;
  return used;
}

export class SizedLru<K, V> {
  private readonly map = new Map<K, Node<K, V>>();
  private newest: Node<K, V> | undefined;
  private oldest: Node<K, V> | undefined;
  private usedBytes = 0;

  constructor(
    private limit: number,
    /** An entry's cost in bytes: its value's, and its key's where the key is large enough to count. */
    private readonly sizeOf: (value: V, key: K) => number,
    private readonly hooks: LruHooks<V> = {},
    /** Takes what eviction removes, instead of it leaving the cache (`dropped` is not told): SegmentedLru's demotion. */
    private readonly spill?: (key: K, value: V) => void,
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

  /** The value without marking it recent: for holders that mark their values themselves (see LruHooks.secondChance). */
  peek(key: K): V | undefined {
    return this.map.get(key)?.value;
  }

  /** Stores the value as the most recent; false when it is larger than the whole capacity (then not stored). */
  set(key: K, value: V): boolean {
    this.delete(key);
    const size = this.sizeOf(value, key);
    if (size > this.capacity) return false;
    const node: Node<K, V> = { key, value, size, newer: undefined, older: undefined };
    this.map.set(key, node);
    this.pushNewest(node);
    this.usedBytes += size;
    this.evict();
    return true;
  }

  /** Re-measures an entry whose value grew (e.g. a compressed variant was added). */
  resize(key: K): void {
    const node = this.map.get(key);
    if (node === undefined) return;
    const size = this.sizeOf(node.value, key);
    this.usedBytes += size - node.size;
    node.size = size;
    if (size > this.capacity) this.delete(key);
    else this.evict();
  }

  delete(key: K): void {
    const value = this.detach(key);
    if (value !== undefined) this.hooks.dropped?.(value);
  }

  /** Removes the entry and returns its value, without telling `dropped` (the value moves elsewhere). */
  detach(key: K): V | undefined {
    const node = this.map.get(key);
    if (node === undefined) return undefined;
    this.map.delete(key);
    this.unlink(node);
    this.usedBytes -= node.size;
    return node.value;
  }

  get size(): number {
    return this.map.size;
  }

  get bytes(): number {
    return this.usedBytes;
  }

  get capacity(): number {
    return this.limit;
  }

  /** Changes the bound, evicting (least recent first) down to a lower one. */
  set capacity(bytes: number) {
    this.limit = bytes;
    this.evict();
  }

  private evict(): void {
    // Ends: a second chance clears the mark it was given for.
    while (this.usedBytes > this.capacity && this.oldest !== undefined) {
      const node = this.oldest;
      if (node !== this.newest && this.hooks.secondChance?.(node.value) === true) {
        this.unlink(node);
        this.pushNewest(node);
      } else if (this.spill !== undefined) {
        this.detach(node.key);
        this.spill(node.key, node.value);
      } else {
        this.delete(node.key);
      }
    }
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
 * Segmented LRU: new entries start in a probation segment; an entry read again
 * there moves to the protected segment, which holds at most all but
 * `probationShare` of the capacity. A flood of entries asked once or twice
 * (random queries) then cycles through probation only, and cannot push out the
 * entries that are asked again and again (the hot pages).
 *
 * Probation holds whatever the protected segment does not: all of the capacity
 * in an empty cache, its share once the protected segment is full. With a fixed
 * share, a cache filling with a hot set larger than that share (the 10,000 hot
 * pages of a server just started, read evenly) lost most of its new entries
 * before they were read again, rendered them again and again, and collected
 * their buffers in a mark-compact every half second for the first eight seconds.
 *
 * The least recent entry of a full protected segment moves back to probation
 * rather than leaving, so a hot set larger than the protected segment still has
 * the whole capacity: at 10,000 sites the hot pages (204 MiB) overflowed the
 * protected four fifths of the default body cache (197 MiB), and 1.7 % of hot
 * answers were rendered again, the churn of their buffers forcing a full
 * collection every second.
 */
export class SegmentedLru<K, V> {
  private readonly probation: SizedLru<K, V>;
  private readonly protectedPart: SizedLru<K, V>;
  private readonly promoted: ((value: V) => void) | undefined;

  constructor(
    readonly capacity: number,
    sizeOf: (value: V, key: K) => number,
    hooks: LruHooks<V> = {},
    probationShare = 0.2,
  ) {
    this.probation = new SizedLru(capacity, sizeOf, hooks);
    this.protectedPart = new SizedLru(capacity - Math.floor(capacity * probationShare), sizeOf, hooks, (key, value) => {
      hooks.demoted?.(value);
      // The protected segment has already let go of the value: probation may take its room.
      this.fit();
      if (!this.probation.set(key, value)) hooks.dropped?.(value);
    });
    this.promoted = hooks.promoted;
  }

  get(key: K): V | undefined {
    const hot = this.protectedPart.get(key);
    if (hot !== undefined) return hot;
    const warm = this.probation.detach(key);
    if (warm !== undefined) {
      this.protectedPart.set(key, warm);
      this.fit();
      this.promoted?.(warm);
    }
    return warm;
  }

  set(key: K, value: V): void {
    this.protectedPart.delete(key);
    this.fit();
    this.probation.set(key, value);
  }

  resize(key: K): void {
    this.protectedPart.resize(key);
    this.fit();
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

  /**
   * Probation gets what the protected segment leaves: evicts from it when the protected segment grew. Called
   * before probation takes a value and after the protected segment takes one; a deletion only frees room.
   */
  private fit(): void {
    this.probation.capacity = this.capacity - this.protectedPart.bytes;
  }
}
