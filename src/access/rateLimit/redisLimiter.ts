/**
 * Rate limits shared through Redis, decided without a Redis round trip.
 *
 * Design: leases. The shared bucket of a key lives in Redis (leaseScript.ts).
 * Each process takes tokens from it in small leases and spends them locally;
 * `take` and `acquire` are synchronous looks at this process's state
 * (lease.ts). With C = max(1, ceil(f * B)) (f = `leaseFraction`, default
 * 1/40): a sync asks for twice what the bucket used since its last one,
 * between C and 2C, and is sent when the lease falls to half of that, so that
 * a steady caller rarely finds it empty. With the lease spent, up to
 * K = floor(f * B) requests (none below 40 tokens) pass on credit while the
 * estimated shared level shows tokens; the
 * next sync charges the credit in Redis. Past that the answer hangs on the
 * sync under way: `take` refuses (Retry-After 1), `acquire` waits for it (at
 * most `waitMs`, 20 ms; a late answer is treated as `take` would) and the sync
 * asks for one token more per waiting request. Syncs that requests wait for
 * leave in the next event-loop turn, the others within `syncDelayMs` (2 ms),
 * all of a turn in one script call. A bucket unused for `idleMs` (10 s) gives
 * its lease back. Redis's level thus counts every request let through, at
 * most one sync late, and goes below zero by the credit at most, which later
 * refills pay back: over time the rate is exact.
 *
 * The bound, for P processes sharing a key: over any window t, at most
 * B + R*t + P*K requests pass (only unreported credit, at most K per process,
 * is invisible to the others). Fewer pass only (a) while tokens sit in the
 * lease of a process that no longer receives requests for the key (at most
 * 3C per process, until its idle return), (b) for `take` callers, when one
 * key's requests reach a process faster than a Redis round trip lets its
 * lease follow, (c) when Redis answers later than `waitMs`. With B=100, P=2
 * (C=3, K=2), a burst of 200 over both passes at most 104 and, with `acquire`,
 * at least 100 unless (a), then at least 91; with B=3, exactly 3 at most.
 *
 * Why not a periodic reconciliation (a local bucket per process reporting its
 * consumption and learning the shared level every 50-100 ms): a burst that
 * reaches two processes inside one period passes in full at each, 2B instead
 * of B. Why not a round trip per request (RateLimiterRedis): 13-23 us of
 * client CPU per request on this host, as much as a whole cached answer
 * (docs/rate-limits.md has the measurements).
 *
 * Failure: a killed Redis is seen at once (its socket closes); one that
 * stops answering, after `timeoutMs` (500 ms, the command and socket
 * deadline). Then every bucket falls back to a per-process bucket at the level
 * it showed, waiting requests are answered per process, `onFault` is called
 * once for the outage and `faults` counts it. ioredis reconnects (every 1 s at
 * most); when Redis answers again the buckets are shared again on their own,
 * each with a fresh lease. No call waits on Redis beyond `waitMs` or throws.
 * The clock is the caller's (`nowMs`), in Redis too, so processes' clocks must
 * agree (NTP): a skew of s seconds moves refills by at most s*R tokens. Redis
 * Cluster is not supported (one script call names several keys).
 */
import { Redis } from 'ioredis';
import { Bucket, takeLocal, type Waiter } from './bucket.js';
import { BucketTable } from './bucketTable.js';
import { newDecision, type Decision, type Namespace } from './decision.js';
import { applySync, chunkOf, creditOf, Outcome, prepareSync, serveWaiters, settleLateWaiters, takeLeased, wantsSync } from './lease.js';
import { LEASE_SCRIPT } from './leaseScript.js';
import { DEFAULT_MAX_BUCKETS, type RateLimiter, type TableOptions } from './rateLimiter.js';

export interface RedisLimiterOptions extends TableOptions {
  /** Called once at the start of each outage of Redis (also when it is away at start). */
  onFault(err: unknown): void;
  /** Called when Redis answers again after an outage. */
  onRecover?(): void;
  /** Prefix of the Redis keys (default `forecastd:rl:`). */
  keyPrefix?: string;
  /** Namespaces shared through Redis (default only `key`; the per-address ones stay per process). */
  sharedNamespaces?: readonly Namespace[];
  /** Chunk of a lease as a fraction of the burst (default 0.025); the error bound is P chunks. */
  leaseFraction?: number;
  /** Deadline of a Redis command, ms (default 500); past it Redis counts as down. */
  timeoutMs?: number;
  /** Longest an `acquire` waits for a sync (then: what credit is left, else refused with Retry-After 1), ms (default 20). */
  waitMs?: number;
  /** Longest a sync that no request waits for is held back to share a script call with others, ms (default 2). */
  syncDelayMs?: number;
  /** Period of the idle-lease check, ms (default 100). */
  syncMs?: number;
  /** A bucket unused this long gives its lease back and reports its credit, ms (default 10,000). */
  idleMs?: number;
  /** How long `redisLimiter` waits for the first connection before starting per process, ms (default 1000). */
  connectWaitMs?: number;
}

const enum State {
  Starting,
  Up,
  Down,
  Closed,
}

/** Most buckets per script call (each costs Redis a few microseconds). */
const BATCH_MAX = 128;
/** Most idle leases given back per tick, so that a crowd of idle buckets does not become one long burst of work for Redis. */
const RETURNS_PER_TICK = 4 * BATCH_MAX;

type LeaseClient = Redis & { rlLease(numKeys: number, ...args: (string | number)[]): Promise<number[]> };

class RedisLimiter implements RateLimiter {
  private readonly tables: Record<Namespace, BucketTable>;
  private readonly sharedNs: Record<Namespace, boolean>;
  private readonly scratch = newDecision();
  private readonly prefix: string;
  private readonly fraction: number;
  private state = State.Starting;
  /** Changes at every switch between shared and per process; syncs of an older epoch are ignored. */
  private epoch = 1;
  private faultCount = 0;
  private queue: Bucket[] = [];
  private immediateScheduled = false;
  private timerScheduled = false;
  private readonly syncDelayMs: number;
  private readonly holding = new Set<Bucket>();
  /** Buckets with requests waiting for a sync. */
  private readonly waiting = new Set<Bucket>();
  private readonly waitMs: number;
  private readonly idleTicks: number;
  private readonly inFlight = new Set<Promise<unknown>>();
  private probing = false;
  private lastError: unknown = undefined;
  private readonly timer: NodeJS.Timeout;
  private started!: () => void;
  readonly ready: Promise<void>;

  constructor(
    private readonly client: LeaseClient,
    private readonly opts: RedisLimiterOptions,
  ) {
    const cap = opts.maxBuckets ?? DEFAULT_MAX_BUCKETS;
    const evict = (b: Bucket): void => this.giveBack(b);
    this.tables = { key: new BucketTable(cap, evict), authfail: new BucketTable(cap, evict), anon: new BucketTable(cap, evict) };
    const shared = opts.sharedNamespaces ?? ['key'];
    this.sharedNs = { key: shared.includes('key'), authfail: shared.includes('authfail'), anon: shared.includes('anon') };
    this.prefix = opts.keyPrefix ?? 'forecastd:rl:';
    this.fraction = opts.leaseFraction ?? 0.025;
    this.waitMs = opts.waitMs ?? 20;
    this.syncDelayMs = opts.syncDelayMs ?? 2;
    this.idleTicks = Math.max(1, Math.round((opts.idleMs ?? 10_000) / (opts.syncMs ?? 100)));
    if (!(this.fraction > 0 && this.fraction <= 1)) throw new RangeError(`leaseFraction must be in (0, 1], got ${this.fraction}`);
    this.ready = new Promise((resolve) => (this.started = resolve));
    client.on('ready', () => {
      // Loaded ahead, so that the first sync after a (re)connection costs one round trip, not two.
      client.script('LOAD', LEASE_SCRIPT).catch(() => undefined);
      this.up();
    });
    client.on('error', (err: unknown) => {
      this.lastError = err;
      if (this.state === State.Up) this.down(err);
    });
    client.on('close', () => this.down(this.lastError ?? new Error('Redis connection closed')));
    this.timer = setInterval(() => this.tick(), opts.syncMs ?? 100);
    this.timer.unref();
  }

  get faults(): number {
    return this.faultCount;
  }

  get shared(): boolean {
    return this.state === State.Up;
  }

  get size(): number {
    return this.tables.key.size + this.tables.authfail.size + this.tables.anon.size;
  }

  take(ns: Namespace, id: string, rate: number, burst: number, nowMs: number, out: Decision = this.scratch): Decision {
    this.decide(ns, id, rate, burst, nowMs, out);
    return out;
  }

  acquire(ns: Namespace, id: string, rate: number, burst: number, nowMs: number, out?: Decision): Decision | Promise<Decision> {
    const d = out ?? newDecision();
    const b = this.decide(ns, id, rate, burst, nowMs, d);
    if (b === null) return d;
    return new Promise<Decision>((resolve) => this.wait(b, { out: d, resolve }));
  }

  /** Fills `out`; returns the bucket when the answer hangs on the sync under way, else null. */
  private decide(ns: Namespace, id: string, rate: number, burst: number, nowMs: number, out: Decision): Bucket | null {
    const table = this.tables[ns];
    let b = table.get(id);
    if (b === undefined) {
      b = table.create(id, this.sharedNs[ns] ? this.prefix + ns + ':' + id : '', rate, burst, nowMs, this.epoch);
    } else {
      if (b.rate !== rate || b.burst !== burst) b.setLimits(rate, burst);
      if (b.epoch !== this.epoch) this.rebase(b);
    }
    if (this.state !== State.Up || b.redisKey === '') {
      takeLocal(b, nowMs, out);
      return null;
    }
    const chunk = chunkOf(b, this.fraction);
    const outcome = takeLeased(b, nowMs, creditOf(b, this.fraction), out);
    if (wantsSync(b, chunk)) this.enqueue(b);
    if (b.debt > 0) this.hold(b);
    return outcome === Outcome.Undecided ? b : null;
  }

  private wait(b: Bucket, w: Waiter): void {
    if (b.waiters === null) {
      const list = (b.waiters = [w]);
      this.waiting.add(b);
      const epoch = this.epoch;
      setTimeout(() => {
        if (b.epoch === epoch && b.waiters === list) {
          settleLateWaiters(b, creditOf(b, this.fraction));
          this.waiting.delete(b);
          if (b.debt > 0) this.hold(b);
        }
      }, this.waitMs).unref();
    } else b.waiters.push(w);
    if (!b.pending) this.enqueue(b, true);
    else this.schedule(true);
  }

  sweep(nowMs: number): number {
    return this.tables.key.sweep(nowMs) + this.tables.authfail.sweep(nowMs) + this.tables.anon.sweep(nowMs);
  }

  async close(): Promise<void> {
    if (this.state === State.Closed) return;
    clearInterval(this.timer);
    const deadline = Date.now() + (this.opts.timeoutMs ?? 500);
    const landed = (): Promise<unknown> => withDeadline(Promise.allSettled([...this.inFlight]), Math.max(0, deadline - Date.now()));
    // The syncs queued and under way first (what they grant is given back too), then the returns.
    for (let round = 0; round < 3 && this.state === State.Up; round++) {
      this.flush();
      await landed();
      if (round === 0) continue;
      let left = false;
      for (const b of this.holding) if (b.lease > 0 || b.debt > 0) (this.giveBack(b), (left = true));
      if (!left) break;
    }
    this.state = State.Closed;
    this.epoch++;
    this.settleAllLocally();
    await withDeadline(
      this.client.quit().catch(() => undefined),
      this.opts.timeoutMs ?? 500,
    );
    this.client.disconnect();
    this.started();
  }

  /** A bucket last used under the other mode: carry its visible level over, drop lease and credit. */
  private rebase(b: Bucket): void {
    const t = b.lease + b.reserved + b.tokens;
    b.tokens = t < b.burst ? t : b.burst;
    b.lease = 0;
    b.reserved = 0;
    b.debt = 0;
    b.sentDebt = 0;
    b.pending = false;
    b.returning = false;
    b.holding = false;
    b.used = 0;
    b.lastWant = 0;
    b.epoch = this.epoch;
  }

  private hold(b: Bucket): void {
    if (!b.holding) {
      b.holding = true;
      this.holding.add(b);
    }
  }

  /**
   * Queues a sync. Syncs that requests wait for go out in the next event-loop
   * turn; the others (prefetch, credit reports, returns) are gathered for up
   * to `syncDelayMs`, so that one script call carries many buckets: on a
   * loaded host a call costs the client tens of microseconds whatever it
   * carries, and a late report changes no bound (credit is capped per bucket).
   */
  private enqueue(b: Bucket, urgent = false): void {
    b.pending = true;
    this.queue.push(b);
    this.schedule(urgent);
  }

  private schedule(urgent: boolean): void {
    if (urgent) {
      if (!this.immediateScheduled) {
        this.immediateScheduled = true;
        setImmediate(() => ((this.immediateScheduled = false), this.flush()));
      }
    } else if (!this.timerScheduled && !this.immediateScheduled) {
      this.timerScheduled = true;
      setTimeout(() => ((this.timerScheduled = false), this.flush()), this.syncDelayMs);
    }
  }

  /** Queues the return of a bucket's lease and the report of its credit. */
  private giveBack(b: Bucket): void {
    if (this.state !== State.Up || b.epoch !== this.epoch || b.pending || (b.lease === 0 && b.debt === 0)) return;
    b.returning = true;
    this.enqueue(b);
  }

  private flush(): void {
    const queue = this.queue;
    this.queue = [];
    if (this.state !== State.Up) return;
    const epoch = this.epoch;
    for (let start = 0; start < queue.length; start += BATCH_MAX) {
      const batch: Bucket[] = [];
      const keys: string[] = [];
      const args: number[] = [];
      for (let i = start; i < queue.length && i < start + BATCH_MAX; i++) {
        const b = queue[i]!;
        if (b.epoch !== epoch) continue;
        prepareSync(b, chunkOf(b, this.fraction), args);
        batch.push(b);
        keys.push(b.redisKey);
      }
      if (batch.length === 0) continue;
      const sent = this.client.rlLease(keys.length, ...keys, ...args).then(
        (reply) => this.applyBatch(batch, epoch, reply),
        (err: unknown) => {
          if (epoch === this.epoch) this.down(err);
        },
      );
      this.inFlight.add(sent);
      void sent.finally(() => this.inFlight.delete(sent));
    }
  }

  private applyBatch(batch: Bucket[], epoch: number, reply: number[]): void {
    if (epoch !== this.epoch) return;
    for (let i = 0; i < batch.length; i++) {
      const b = batch[i]!;
      if (b.epoch !== epoch) continue;
      applySync(b, Number(reply[2 * i]), Number(reply[2 * i + 1]));
      const stillWaiting = b.waiters !== null && serveWaiters(b);
      if (b.waiters === null) this.waiting.delete(b);
      if (b.lease > 0 || b.debt > 0) this.hold(b);
      if (b.debt > 0 || stillWaiting) this.enqueue(b, stillWaiting);
    }
  }

  /** Every `syncMs`: give back the leases of buckets unused since the last tick; probe Redis while it is away. */
  private tick(): void {
    if (this.state === State.Down) {
      if (this.client.status === 'ready' && !this.probing) this.probe();
      return;
    }
    if (this.state !== State.Up) return;
    let returns = 0;
    for (const b of this.holding) {
      if (b.epoch !== this.epoch || (b.lease === 0 && b.debt === 0 && !b.pending)) {
        b.holding = false;
        this.holding.delete(b);
      } else if (b.uses !== b.usesSeen) {
        b.usesSeen = b.uses;
        b.quietTicks = 0;
      } else if (++b.quietTicks >= this.idleTicks && returns < RETURNS_PER_TICK && !b.pending) {
        this.giveBack(b);
        returns++;
      }
    }
  }

  /** After a failed command on a connection that stayed up: a script call on no key says whether Redis answers again. */
  private probe(): void {
    this.probing = true;
    this.client.rlLease(0).then(
      () => ((this.probing = false), this.up()),
      () => (this.probing = false),
    );
  }

  private up(): void {
    if (this.state !== State.Starting && this.state !== State.Down) return;
    const recovered = this.state === State.Down;
    this.state = State.Up;
    this.epoch++;
    this.lastError = undefined;
    this.started();
    if (recovered) this.opts.onRecover?.();
  }

  private down(err: unknown): void {
    if (this.state !== State.Starting && this.state !== State.Up) return;
    this.state = State.Down;
    this.epoch++;
    this.faultCount++;
    this.queue = [];
    for (const b of this.holding) b.holding = false;
    this.holding.clear();
    this.settleAllLocally();
    this.started();
    try {
      this.opts.onFault(err);
    } catch {
      // a reporting callback that throws must not break rate limiting
    }
  }

  /** Answers every waiting request per process (the bucket rebased to the current epoch first). */
  private settleAllLocally(): void {
    for (const b of this.waiting) {
      const waiters = b.waiters;
      b.waiters = null;
      this.rebase(b);
      if (waiters !== null) for (const w of waiters) w.resolve(takeLocal(b, b.ts, w.out));
    }
    this.waiting.clear();
  }

  /** Called when the first connection has neither come up nor failed in time. */
  notStarted(waitedMs: number): void {
    if (this.state === State.Starting) this.down(new Error(`Redis not ready after ${waitedMs} ms`));
  }
}

function withDeadline<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

/**
 * A limiter sharing buckets through the Redis at `url`. Resolves once the
 * first connection is up, or has failed, or `connectWaitMs` has passed: it
 * starts per process when Redis is away and turns shared when it answers.
 */
export async function redisLimiter(url: string, opts: RedisLimiterOptions): Promise<RateLimiter> {
  const timeoutMs = opts.timeoutMs ?? 500;
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    connectTimeout: Math.max(1000, timeoutMs),
    retryStrategy: (times: number) => Math.min(100 * times, 1000),
    connectionName: 'forecastd-ratelimit',
  }) as LeaseClient;
  client.defineCommand('rlLease', { lua: LEASE_SCRIPT });
  const limiter = new RedisLimiter(client, opts);
  client.connect().catch(() => undefined);
  const waitMs = opts.connectWaitMs ?? 1000;
  await withDeadline(limiter.ready, waitMs);
  limiter.notStarted(waitMs);
  return limiter;
}
