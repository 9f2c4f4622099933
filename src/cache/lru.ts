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
  /** SegmentedLru: in the protected segment, else in probation (always false in a SizedLru). */
  protectedPart: boolean;
}

/** What a cache's owner may learn of and decide about its values. */
export interface LruHooks<K, V> {
  /** The value left the cache (evicted, deleted or replaced), so that holders of it can tell. */
  dropped?(value: V, key: K): void;
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
  private readonly list: Segment<K, V>;
  /** Takes an evicted entry out of the cache (made once: eviction runs on every insertion). */
  private readonly leave = (node: Node<K, V>): void => {
    this.map.delete(node.key);
    this.hooks.dropped?.(node.value, node.key);
  };

  constructor(
    limit: number,
    /** An entry's cost in bytes: its value's, and its key's where the key is large enough to count. */
    private readonly sizeOf: (value: V, key: K) => number,
    private readonly hooks: LruHooks<K, V> = {},
  ) {
    this.list = newSegment(limit);
  }

  get(key: K): V | undefined {
    const node = this.map.get(key);
    if (node === undefined) return undefined;
    touch(this.list, node);
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
    const node = newNode(key, value, size);
    this.map.set(key, node);
    pushNewest(this.list, node);
    evictOver(this.list, this.hooks, this.leave);
    return true;
  }

  /** Re-measures an entry whose value grew (e.g. a compressed variant was added). */
  resize(key: K): void {
    const node = this.map.get(key);
    if (node !== undefined) remeasure(this.list, node, this.sizeOf(node.value, key), this.hooks, this.leave, this.leave);
  }

  delete(key: K): void {
    const node = this.map.get(key);
    if (node === undefined) return;
    unlink(this.list, node);
    this.leave(node);
  }

  get size(): number {
    return this.map.size;
  }

  get bytes(): number {
    return this.list.bytes;
  }

  get capacity(): number {
    return this.list.capacity;
  }

  /** Changes the bound, evicting (least recent first) down to a lower one. */
  set capacity(bytes: number) {
    this.list.capacity = bytes;
    evictOver(this.list, this.hooks, this.leave);
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
 *
 * Such a hot set keeps moving entries between the segments (about one hot
 * answer in thirty at 10,000 sites), so a move allocates nothing: both
 * segments share one map and an entry is relinked from one list to the other.
 * With a map and list nodes per segment, each move made a node and churned
 * both maps' tables, which outlived a scavenge or two; that was a third of
 * what hot load promoted to the old generation.
 */
export class SegmentedLru<K, V> {
  /** One map for both segments: an entry moving between them is relinked, neither copied nor re-keyed. */
  private readonly map = new Map<K, Node<K, V>>();
  private readonly probation: Segment<K, V>;
  private readonly protectedPart: Segment<K, V>;
  /** Takes an entry out of the cache. */
  private readonly drop = (node: Node<K, V>): void => {
    this.map.delete(node.key);
    this.hooks.dropped?.(node.value, node.key);
  };
  /** Moves the least recent entry of a full protected segment back to probation, or out when it cannot hold it. */
  private readonly demote = (node: Node<K, V>): void => {
    this.hooks.demoted?.(node.value);
    // The protected segment has already let go of the entry: probation may take its room.
    this.fit();
    if (node.size > this.probation.capacity) return this.drop(node);
    node.protectedPart = false;
    pushNewest(this.probation, node);
    evictOver(this.probation, this.hooks, this.drop);
  };

  constructor(
    readonly capacity: number,
    private readonly sizeOf: (value: V, key: K) => number,
    private readonly hooks: LruHooks<K, V> = {},
    probationShare = 0.2,
  ) {
    this.probation = newSegment(capacity);
    this.protectedPart = newSegment(capacity - Math.floor(capacity * probationShare));
  }

  get(key: K): V | undefined {
    const node = this.map.get(key);
    if (node === undefined) return undefined;
    const hot = this.protectedPart;
    if (node.protectedPart) {
      touch(hot, node);
      return node.value;
    }
    unlink(this.probation, node);
    const fits = node.size <= hot.capacity;
    if (fits) {
      node.protectedPart = true;
      pushNewest(hot, node);
      evictOver(hot, this.hooks, this.demote);
    } else this.drop(node);
    this.fit();
    if (fits) this.hooks.promoted?.(node.value);
    return node.value;
  }

  /** The value under key, its place and segment untouched. */
  peek(key: K): V | undefined {
    return this.map.get(key)?.value;
  }

  set(key: K, value: V): void {
    this.delete(key);
    this.fit();
    const size = this.sizeOf(value, key);
    if (size > this.probation.capacity) return;
    const node = newNode(key, value, size);
    this.map.set(key, node);
    pushNewest(this.probation, node);
    evictOver(this.probation, this.hooks, this.drop);
  }

  resize(key: K): void {
    const hot = this.map.get(key);
    if (hot?.protectedPart === true) remeasure(this.protectedPart, hot, this.sizeOf(hot.value, key), this.hooks, this.drop, this.demote);
    this.fit();
    // Measured in probation after the fit, also when the protected segment has just moved it there.
    const warm = this.map.get(key);
    if (warm?.protectedPart === false) remeasure(this.probation, warm, this.sizeOf(warm.value, key), this.hooks, this.drop, this.drop);
  }

  delete(key: K): void {
    const node = this.map.get(key);
    if (node === undefined) return;
    unlink(node.protectedPart ? this.protectedPart : this.probation, node);
    this.drop(node);
  }

  get size(): number {
    return this.map.size;
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
    evictOver(this.probation, this.hooks, this.drop);
  }
}

/** A recency list and the bytes of its entries: a SizedLru's one, or one segment of a SegmentedLru. */
interface Segment<K, V> {
  newest: Node<K, V> | undefined;
  oldest: Node<K, V> | undefined;
  bytes: number;
  capacity: number;
}

const newSegment = <K, V>(capacity: number): Segment<K, V> => ({ newest: undefined, oldest: undefined, bytes: 0, capacity });

function pushNewest<K, V>(segment: Segment<K, V>, node: Node<K, V>): void {
  node.older = segment.newest;
  node.newer = undefined;
  if (segment.newest) segment.newest.newer = node;
  segment.newest = node;
  if (!segment.oldest) segment.oldest = node;
  segment.bytes += node.size;
}

function unlink<K, V>(segment: Segment<K, V>, node: Node<K, V>): void {
  if (node.newer) node.newer.older = node.older;
  else segment.newest = node.older;
  if (node.older) node.older.newer = node.newer;
  else segment.oldest = node.newer;
  node.newer = node.older = undefined;
  segment.bytes -= node.size;
}

const newNode = <K, V>(key: K, value: V, size: number): Node<K, V> => ({ key, value, size, newer: undefined, older: undefined, protectedPart: false });

/**
 * An entry of the segment measured again at `size`: out through `leave` when the segment cannot hold it at
 * all, else the segment evicts down to its capacity through `evicted`.
 */
function remeasure<K, V>(
  segment: Segment<K, V>,
  node: Node<K, V>,
  size: number,
  hooks: LruHooks<K, V>,
  leave: (node: Node<K, V>) => void,
  evicted: (node: Node<K, V>) => void,
): void {
  segment.bytes += size - node.size;
  node.size = size;
  if (size > segment.capacity) {
    unlink(segment, node);
    leave(node);
  } else evictOver(segment, hooks, evicted);
}

/** Marks an entry of the segment as its most recent. */
function touch<K, V>(segment: Segment<K, V>, node: Node<K, V>): void {
  if (node === segment.newest) return;
  unlink(segment, node);
  pushNewest(segment, node);
}

/**
 * Evicts the segment's least recent entries down to its capacity, each handed unlinked to `leave`, except
 * that one the hooks give a second chance goes round once more as the most recent (the chance clears the
 * mark it was given for, so this ends).
 */
function evictOver<K, V>(segment: Segment<K, V>, hooks: LruHooks<K, V>, leave: (node: Node<K, V>) => void): void {
  while (segment.bytes > segment.capacity && segment.oldest !== undefined) {
    const node = segment.oldest;
    const again = node !== segment.newest && hooks.secondChance?.(node.value) === true;
    unlink(segment, node);
    if (again) pushNewest(segment, node);
    else leave(node);
  }
}
