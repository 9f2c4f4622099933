/**
 * A cache whose values live in regions of a few large, long-lived byte
 * segments, bounded by the bytes of those regions.
 *
 * Why not an ordinary LRU of the buffers a store returns: a value kept for a
 * while is promoted to V8's old generation, and once evicted its memory stays
 * there until the next full collection. With many misses (a store larger than
 * the cache, read at random) the process then drops tens of MB a second of old
 * external memory, and V8 answers with a mark-compact about once a second.
 * Copied into a region here, the store's buffer dies young, and the region is
 * reused in place.
 *
 * Placement and eviction are CLOCK over a ring: each new value is written at a
 * moving pointer. An entry in its way is evicted, unless it was asked for since
 * it was written or last passed: then it keeps its place, loses that mark, and
 * the pointer skips past it (a second chance: close to LRU at the cost of FIFO).
 *
 * Admission (optional, `admitOneIn`): while the last value kept had to evict
 * another, only one new value in that many is kept. Under reads spread evenly
 * over more than the cache holds (history backfills, random windows over
 * thousands of sites), any set of values kept gives the same hit rate, so
 * admitting every miss buys nothing and costs a copy and old-generation
 * garbage per miss; values asked for often still get in after a few misses
 * and then keep their place by their second chances.
 *
 * Reuse is safe under one rule: a value handed out by get() or set() is used
 * synchronously, before the current turn of the event loop ends (no I/O wait in
 * between). A region handed out in the current turn is never overwritten: the
 * pointer skips it, and set() declines to keep its value when it would have to
 * skip too many. A deleted or evicted region's bytes stay as they were until a
 * later turn writes there.
 */

const MB = 1024 * 1024;
/** Entries skipped per insertion at most (second chances, regions in use), so that its cost stays bounded. */
const MAX_SKIPS = 16;

interface Entry<K, V> {
  readonly key: K;
  readonly value: V;
  readonly offset: number;
  readonly length: number;
  /** Asked for since written or last passed. */
  used: boolean;
  /** The turn count when it was last handed out (see countTurn). */
  turn: number;
  live: boolean;
  /** Next entry in ring order. */
  next: Entry<K, V> | undefined;
}

export interface ArenaOptions {
  /** Size of each segment; a value never spans two, so none may be larger. Default: the capacity, at most 64 MB. */
  readonly segmentBytes?: number;
  /** Once full, keep one new value in this many. Default 1: every one. */
  readonly admitOneIn?: number;
}

export class ArenaCache<K, V> {
  private readonly map = new Map<K, Entry<K, V>>();
  private readonly segments: Uint8Array[] = [];
  /** Entries (live or not yet passed) in ring order from the write pointer. */
  private front: Entry<K, V> | undefined;
  private back: Entry<K, V> | undefined;
  private pointer = 0;
  private usedBytes = 0;
  private turn = 0;
  private turnScheduled = false;
  /** The last value kept had to evict a live one: the cache is full, and admission applies. */
  private full = false;
  /** Values offered to set() while full: every admitOneIn-th is kept. */
  private offeredWhileFull = 0;
  private readonly nextTurn = (): void => {
    this.turn++;
    this.turnScheduled = false;
  };

  private readonly segmentBytes: number;
  private readonly admitOneIn: number;

  /** @param capacity bytes of all regions together */
  constructor(
    readonly capacity: number,
    options: ArenaOptions = {},
  ) {
    this.segmentBytes = options.segmentBytes ?? Math.min(capacity, 64 * MB);
    this.admitOneIn = options.admitOneIn ?? 1;
  }

  get size(): number {
    return this.map.size;
  }

  /** Bytes of the regions of the entries held. */
  get bytes(): number {
    return this.usedBytes;
  }

  /**
   * The value under key without marking it used, nor keeping its region for this turn: to be copied from at
   * once, before anything is set.
   */
  peek(key: K): V | undefined {
    return this.map.get(key)?.value;
  }

  get(key: K): V | undefined {
    const e = this.map.get(key);
    if (e === undefined) return undefined;
    e.used = true;
    e.turn = this.turn;
    return e.value;
  }

  /**
   * Keeps a value built by fill() in a region of `length` bytes (8-aligned in
   * its segment), replacing any value under the key. Returns that value, or
   * undefined when it is not kept: too large, or no region could be freed in
   * this turn (the caller then uses the value it already has).
   */
  set(key: K, length: number, fill: (region: Uint8Array) => V): V | undefined {
    this.delete(key);
    if (this.full && ++this.offeredWhileFull % this.admitOneIn !== 0) return undefined;
    // Set again by pass() if this insertion too has to evict: room freed by deletions (a prune) lifts admission.
    this.full = false;
    this.countTurn();
    const size = (length + 7) & ~7;
    if (size > this.segmentBytes || size === 0) return undefined;
    let skips = 0;
    for (let wraps = 0; ; ) {
      const segmentEnd = Math.min(this.capacity, (Math.floor(this.pointer / this.segmentBytes) + 1) * this.segmentBytes);
      if (this.pointer + size > segmentEnd) {
        // The rest of this segment is too short: pass everything in it and go on at the next one.
        while (this.front !== undefined && this.front.offset >= this.pointer && this.front.offset < segmentEnd) {
          if (!this.pass(skips++ < MAX_SKIPS)) return undefined;
        }
        this.pointer = segmentEnd >= this.capacity ? 0 : segmentEnd;
        // Twice round the ring without room: every region is in use in this turn.
        if (this.pointer === 0 && ++wraps > 2) return undefined;
        continue;
      }
      const f = this.front;
      if (f === undefined || f.offset >= this.pointer + size || f.offset < this.pointer) break;
      if (!this.pass(skips++ < MAX_SKIPS)) return undefined;
    }
    const index = Math.floor(this.pointer / this.segmentBytes);
    const start = this.pointer - index * this.segmentBytes;
    // Buffers, like those stores return: code that reads both then sees one kind of array, not two.
    const segment = (this.segments[index] ??= Buffer.allocUnsafeSlow(Math.min(this.segmentBytes, this.capacity - index * this.segmentBytes)));
    const value = fill(segment.subarray(start, start + size));
    const e: Entry<K, V> = { key, value, offset: this.pointer, length: size, used: false, turn: this.turn, live: true, next: undefined };
    this.pushBack(e);
    this.map.set(key, e);
    this.usedBytes += size;
    this.pointer += size;
    return value;
  }

  delete(key: K): void {
    const e = this.map.get(key);
    if (e === undefined) return;
    this.map.delete(key);
    e.live = false;
    this.usedBytes -= e.length;
  }

  /**
   * The front entry is in the pointer's way: skip it (kept in place) or evict it.
   * An entry handed out in this turn is always skipped, so that a region in use
   * never stops the ring. False when the skips allowed for this insertion are
   * used up and the entry may not be evicted.
   */
  private pass(maySkip: boolean): boolean {
    const e = this.front!;
    const inUse = e.turn === this.turn;
    if (inUse && !maySkip) return false;
    this.front = e.next;
    if (this.front === undefined) this.back = undefined;
    e.next = undefined;
    if (inUse || (e.live && e.used && maySkip)) {
      if (!inUse) e.used = false; // one second chance per pass
      this.pushBack(e);
      this.pointer = e.offset + e.length;
    } else if (e.live) {
      this.map.delete(e.key);
      e.live = false;
      this.usedBytes -= e.length;
      this.full = true;
    }
    return true;
  }

  private pushBack(e: Entry<K, V>): void {
    if (this.back === undefined) this.front = e;
    else this.back.next = e;
    this.back = e;
  }

  /**
   * Turns are counted only while values are being written: a count that stands
   * still merely makes entries handed out before look recent (which is safe),
   * and a cache that is only read schedules nothing.
   */
  private countTurn(): void {
    if (!this.turnScheduled) {
      this.turnScheduled = true;
      setImmediate(this.nextTurn);
    }
  }
}
