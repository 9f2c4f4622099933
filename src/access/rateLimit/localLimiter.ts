/**
 * Per-process rate limits: one bounded table of token buckets per namespace.
 * This is the limiter without `--redis`, and the fallback inside the Redis
 * limiter.
 */
import { takeLocal } from './bucket.js';
import { BucketTable } from './bucketTable.js';
import { newDecision, type Decision, type Namespace } from './decision.js';
import { DEFAULT_MAX_BUCKETS, type RateLimiter, type TableOptions } from './rateLimiter.js';

class LocalLimiter implements RateLimiter {
  private readonly tables: Record<Namespace, BucketTable>;
  private readonly scratch = newDecision();
  readonly faults = 0;
  readonly shared = false;

  constructor(maxBuckets: number) {
    this.tables = { key: new BucketTable(maxBuckets), authfail: new BucketTable(maxBuckets), anon: new BucketTable(maxBuckets) };
  }

  take(ns: Namespace, id: string, rate: number, burst: number, nowMs: number, out: Decision = this.scratch): Decision {
    const table = this.tables[ns];
    let b = table.get(id);
    if (b === undefined) b = table.create(id, '', rate, burst, nowMs, 0);
    else if (b.rate !== rate || b.burst !== burst) b.setLimits(rate, burst);
    return takeLocal(b, nowMs, out);
  }

  acquire(ns: Namespace, id: string, rate: number, burst: number, nowMs: number, out?: Decision): Decision {
    return this.take(ns, id, rate, burst, nowMs, out ?? newDecision());
  }

  sweep(nowMs: number): number {
    return this.tables.key.sweep(nowMs) + this.tables.authfail.sweep(nowMs) + this.tables.anon.sweep(nowMs);
  }

  get size(): number {
    return this.tables.key.size + this.tables.authfail.size + this.tables.anon.size;
  }

  async close(): Promise<void> {}
}

export function localLimiter(opts: TableOptions = {}): RateLimiter {
  return new LocalLimiter(opts.maxBuckets ?? DEFAULT_MAX_BUCKETS);
}
