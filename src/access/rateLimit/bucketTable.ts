/**
 * The buckets of one namespace, bounded in memory. A missing bucket is a full
 * one, so a bucket that is full again (and holds no lease or debt) can be
 * dropped without changing any answer. When the table reaches its cap it
 * first drops those; if that frees less than a tenth of the cap (a flood of
 * distinct addresses that are all still refilling), it also drops the oldest
 * inserted buckets down to 90 % of the cap: each of those callers then starts
 * again from a full bucket, the price of a bound that a flood of random
 * addresses cannot grow. Each eviction pass frees at least a tenth of the cap,
 * so the cost per insertion stays constant on average. Dropped buckets that
 * nothing else refers to are kept (up to half the cap) for the next new ids:
 * under a flood of new addresses, allocating and collecting a bucket per
 * request cost three times the table work itself.
 */
import { Bucket, isIdleFull } from './bucket.js';

export class BucketTable {
  private readonly map = new Map<string, Bucket>();
  private readonly low: number;
  private readonly pool: Bucket[] = [];
  private readonly poolMax: number;

  constructor(
    readonly cap: number,
    /** Called for a bucket dropped while it still holds a lease or debt (shared mode gives them back). */
    private readonly onEvict: (b: Bucket) => void = () => undefined,
  ) {
    if (!(cap >= 1)) throw new RangeError(`bucket cap must be at least 1, got ${cap}`);
    this.low = Math.max(0, Math.floor(cap * 0.9));
    this.poolMax = Math.floor(cap / 2);
  }

  get size(): number {
    return this.map.size;
  }

  get(id: string): Bucket | undefined {
    return this.map.get(id);
  }

  /** Adds a full bucket for `id`, making room first when the table is at its cap. */
  create(id: string, redisKey: string, rate: number, burst: number, nowMs: number, epoch: number): Bucket {
    if (this.map.size >= this.cap) this.makeRoom(nowMs);
    const b = this.pool.pop();
    if (b === undefined) {
      const fresh = new Bucket(redisKey, rate, burst, nowMs, epoch);
      this.map.set(id, fresh);
      return fresh;
    }
    b.reset(redisKey, rate, burst, nowMs, epoch);
    this.map.set(id, b);
    return b;
  }

  /** Drops the buckets that are full again and hold nothing; returns how many. */
  sweep(nowMs: number): number {
    let dropped = 0;
    for (const [id, b] of this.map) {
      if (isIdleFull(b, nowMs)) {
        this.map.delete(id);
        dropped++;
        this.recycle(b);
      }
    }
    return dropped;
  }

  values(): IterableIterator<Bucket> {
    return this.map.values();
  }

  private makeRoom(nowMs: number): void {
    this.sweep(nowMs);
    if (this.map.size <= this.low) return;
    for (const [id, b] of this.map) {
      if (this.map.size <= this.low) break;
      this.map.delete(id);
      if (b.lease !== 0 || b.debt !== 0) this.onEvict(b);
      else this.recycle(b);
    }
  }

  private recycle(b: Bucket): void {
    if (this.pool.length < this.poolMax && b.detached) this.pool.push(b);
  }
}
