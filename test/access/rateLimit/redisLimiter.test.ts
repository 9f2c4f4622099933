/**
 * The Redis-shared limiter against a real redis-server of the test's own (on
 * a free port, killed and restarted by the tests). Two limiters stand for two
 * processes. Requests are played as a server meets them: each one an
 * event-loop turn that costs about 20 us of CPU, so that Redis answers arrive
 * between requests as they would.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setImmediate as turn, setTimeout as sleep } from 'node:timers/promises';
import type { Decision } from '../../../src/access/rateLimit/decision.js';
import type { RateLimiter } from '../../../src/access/rateLimit/rateLimiter.js';
import { redisLimiter, type RedisLimiterOptions } from '../../../src/access/rateLimit/redisLimiter.js';
import { freePort, RedisServer, redisTestOptions } from './redisServer.js';

const T0 = 1_800_000_000_000;
let prefixes = 0;
const freshPrefix = (): string => `t${process.pid}:${Date.now().toString(36)}:${prefixes++}:`;

/** Burns about `us` microseconds of CPU: the cost of serving the request. */
function work(us: number): void {
  const end = performance.now() + us / 1000;
  while (performance.now() < end);
}

/**
 * Plays `n` requests for `id` as a server meets them: one per event-loop turn,
 * each costing about 20 us, round-robin over `limiters`, through `acquire`
 * (the path the server takes for shared limits); returns how many passed.
 */
async function play(limiters: RateLimiter[], id: string, rate: number, burst: number, n: number, nowMs: number): Promise<number> {
  const answers: (Decision | Promise<Decision>)[] = [];
  for (let i = 0; i < n; i++) {
    answers.push(limiters[i % limiters.length]!.acquire('key', id, rate, burst, nowMs));
    work(20);
    await turn();
  }
  return (await Promise.all(answers)).filter((d) => d.allowed).length;
}

/**
 * Plays `n` requests arriving together (in one event-loop turn, as from many
 * connections at once), round-robin over `limiters`, through `acquire`;
 * returns how many passed.
 */
async function storm(limiters: RateLimiter[], id: string, rate: number, burst: number, n: number, nowMs: number): Promise<number> {
  const answers: (Decision | Promise<Decision>)[] = [];
  for (let i = 0; i < n; i++) {
    answers.push(limiters[i % limiters.length]!.acquire('key', id, rate, burst, nowMs));
    work(20);
  }
  return (await Promise.all(answers)).filter((d) => d.allowed).length;
}

async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe('redisLimiter', redisTestOptions(), () => {
  let server: RedisServer;
  const open: RateLimiter[] = [];
  const faults: unknown[] = [];
  // A long wait for syncs: these tests measure the lease arithmetic, not how a slow machine delays Redis answers.
  const limiter = async (url: string, opts: Partial<RedisLimiterOptions> = {}): Promise<RateLimiter> => {
    const l = await redisLimiter(url, { onFault: (e) => faults.push(e), waitMs: 2000, ...opts });
    open.push(l);
    return l;
  };

  before(async () => {
    server = await RedisServer.start();
  });
  after(async () => {
    await Promise.all(open.map((l) => l.close()));
    await server?.kill();
  });

  test('one process with Redis: a burst of 2B lets through B, and is shared from the start', async () => {
    const keyPrefix = freshPrefix();
    const a = await limiter(server.url, { keyPrefix });
    assert.equal(a.shared, true);
    assert.equal(a.faults, 0);
    const passed = await play([a], 'k', 1, 100, 200, T0);
    assert.equal(passed, 100);
    const d = a.take('key', 'k', 1, 100, T0);
    assert.equal(d.allowed, false);
    assert.equal(d.retryAfterS >= 1, true);
  });

  test('two processes: a burst of 2B spread over both lets through B within 10 %; refills are shared', async () => {
    const keyPrefix = freshPrefix();
    const a = await limiter(server.url, { keyPrefix, idleMs: 200 });
    const b = await limiter(server.url, { keyPrefix, idleMs: 200 });
    const passed = await play([a, b], 'k', 1, 100, 200, T0);
    assert.ok(passed >= 90 && passed <= 110, `passed ${passed}`);
    if (process.env.RL_SHOW) console.log(`burst passed ${passed}`);
    // 20 s later the shared bucket has 20 tokens more, for both together (6 = P chunks of slack).
    await sleep(500); // idle leases go back
    const refilled = await play([a, b], 'k', 1, 100, 60, T0 + 20_000);
    assert.ok(refilled >= 20 - 6 && refilled <= 20 + 6, `refilled ${refilled}`);
    if (process.env.RL_SHOW) console.log(`refilled ${refilled}`);
  });

  test('two processes: 2B requests arriving at once, through acquire, let through B within 10 %', async () => {
    const keyPrefix = freshPrefix();
    const a = await limiter(server.url, { keyPrefix });
    const b = await limiter(server.url, { keyPrefix });
    const passed = await storm([a, b], 'k', 1, 100, 200, T0);
    assert.ok(passed >= 90 && passed <= 110, `passed ${passed}`);
    if (process.env.RL_SHOW) console.log(`burst passed ${passed}`);
    // All at one process: the same.
    const c = await limiter(server.url, { keyPrefix });
    const alone = await storm([c], 'k2', 1, 100, 200, T0);
    assert.ok(alone >= 90 && alone <= 110, `alone passed ${alone}`);
    if (process.env.RL_SHOW) console.log(`alone passed ${alone}`);
  });

  test('two processes: what one consumed, the other sees (and a closed limiter gives its lease back)', async () => {
    const keyPrefix = freshPrefix();
    const a = await limiter(server.url, { keyPrefix });
    const b = await limiter(server.url, { keyPrefix });
    assert.equal(await play([a], 'k', 1, 100, 30, T0), 30);
    await a.close();
    // b starts cold (it may pass its credit, 2 of 100, before its first sync), then sees 70 left.
    const passed = await play([b], 'k', 1, 100, 150, T0);
    assert.ok(passed >= 70 && passed <= 72, `passed ${passed}`);
  });

  test('headers in shared mode: remaining counts down, reset and Retry-After follow the shared bucket', async () => {
    const keyPrefix = freshPrefix();
    const a = await limiter(server.url, { keyPrefix });
    const seen: Decision[] = [];
    for (let i = 0; i < 12; i++) seen.push(await a.acquire('key', 'k', 2, 10, T0));
    assert.deepEqual(
      seen.map((d) => d.remaining),
      [9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0],
    );
    assert.deepEqual(
      seen.map((d) => d.allowed),
      [...Array(10).fill(true), false, false],
    );
    assert.equal(seen[9]!.resetS, 5);
    assert.equal(seen[10]!.retryAfterS, 1);
    assert.equal((await a.acquire('key', 'k', 2, 10, T0 + 499)).allowed, false);
    const d = await a.acquire('key', 'k', 2, 10, T0 + 500);
    assert.equal(d.allowed, true);
    assert.equal(d.remaining, 0);
    assert.equal(d.resetS, 5);
  });

  test('take never waits: with the lease and credit spent it refuses (Retry-After 1) until the sync under way answers', async () => {
    const keyPrefix = freshPrefix();
    const a = await limiter(server.url, { keyPrefix });
    const first = [0, 1, 2, 3, 4].map(() => ({ ...a.take('key', 'k', 1, 100, T0) }));
    // Cold: its credit (2 of 100, a fortieth rounded down) passes at once, the next are refused for now.
    assert.deepEqual(
      first.map((d) => d.allowed),
      [true, true, false, false, false],
    );
    assert.equal(first[2]!.retryAfterS, 1);
    await until(() => a.take('key', 'k', 1, 100, T0).allowed, 5000, 'the first sync');
    // Whatever the timing, take never lets through more than the bucket plus the credit.
    let passed = 3;
    for (let i = 0; i < 300; i++) {
      if (a.take('key', 'k', 1, 100, T0).allowed) passed++;
      await sleep(i % 10 === 0 ? 5 : 0);
    }
    assert.ok(passed <= 100, `passed ${passed}`);
    await sleep(300);
    assert.equal((await a.acquire('key', 'k', 1, 100, T0)).allowed, false);
  });

  test('per-address namespaces stay per process unless shared is asked for', async () => {
    const keyPrefix = freshPrefix();
    const a = await limiter(server.url, { keyPrefix });
    const b = await limiter(server.url, { keyPrefix });
    const burstOf = async (l: RateLimiter): Promise<number> => {
      let n = 0;
      for (let i = 0; i < 20; i++) if ((await l.acquire('authfail', '192.0.2.1', 1, 10, T0)).allowed) n++;
      return n;
    };
    assert.equal(await burstOf(a), 10);
    assert.equal(await burstOf(b), 10);
    const c = await limiter(server.url, { keyPrefix, sharedNamespaces: ['key', 'authfail'] });
    const d = await limiter(server.url, { keyPrefix, sharedNamespaces: ['key', 'authfail'] });
    assert.equal(await burstOf(c), 10);
    assert.equal(await burstOf(d), 0, 'no credit on a burst of 10 at a cold process: the shared bucket is spent');
  });

  test('memory stays bounded with shared buckets too', async () => {
    const keyPrefix = freshPrefix();
    const a = await limiter(server.url, { keyPrefix, sharedNamespaces: ['key', 'anon'], maxBuckets: 2_000 });
    let max = 0;
    for (let i = 0; i < 20_000; i++) {
      a.take('anon', `198.51.${i >> 8}.${i & 255}`, 1, 10, T0);
      if (i % 500 === 0) await turn();
      max = Math.max(max, a.size);
    }
    assert.ok(max <= 2_000, `size reached ${max}`);
  });
});

describe('redisLimiter when Redis fails', redisTestOptions(), () => {
  test('Redis killed mid-use: answers stay synchronous, one fault, per-process limits, shared again after restart', async () => {
    const server = await RedisServer.start();
    const keyPrefix = freshPrefix();
    const faults: unknown[] = [];
    let recovered = 0;
    const opts = { keyPrefix, waitMs: 2000, idleMs: 200 };
    const a = await redisLimiter(server.url, { ...opts, onFault: (e) => faults.push(e), onRecover: () => recovered++ });
    const watcher = await redisLimiter(server.url, { ...opts, onFault: () => undefined });
    try {
      assert.equal(a.shared, true);
      assert.equal(await play([a], 'k', 1, 100, 10, T0), 10);

      await server.kill();
      let slowest = 0;
      const timed = (id: string): Decision => {
        const t = performance.now();
        const d = a.take('key', id, 1, 100, T0);
        slowest = Math.max(slowest, performance.now() - t);
        return d;
      };
      const end = Date.now() + 3000;
      while (a.shared && Date.now() < end) {
        timed('k');
        await sleep(1);
      }
      assert.equal(a.shared, false, 'fell back to per-process limits');
      assert.equal(faults.length, 1);
      assert.equal(a.faults, 1);
      // Per process now: a fresh key gets exactly its burst here, whatever Redis would say.
      let passed = 0;
      for (let i = 0; i < 150; i++) if (timed('fresh').allowed) passed++;
      assert.equal(passed, 100);
      // More requests during the outage report nothing more.
      for (let i = 0; i < 50; i++) (timed('k'), await sleep(2));
      assert.equal(faults.length, 1, 'one report per outage');
      assert.ok(slowest < 50, `slowest take ${slowest} ms`);
      if (process.env.RL_SHOW) console.log(`slowest take during the outage: ${slowest.toFixed(3)} ms`);

      await server.start();
      await until(() => a.shared && watcher.shared, 5000, 'shared again');
      assert.equal(recovered, 1);
      assert.equal(a.faults, 1);
      // Shared again: what a consumes the watcher sees (the restarted Redis started empty, so full buckets).
      assert.equal(await play([a], 'again', 1, 100, 60, T0), 60);
      await sleep(500); // a gives its idle lease back
      const left = await play([watcher], 'again', 1, 100, 100, T0);
      assert.ok(left >= 40 && left <= 43, `the other process passed ${left}`);
    } finally {
      await a.close();
      await watcher.close();
      await server.kill();
    }
  });

  test('Redis away at start: starts at once per process, reports the fault, turns shared when Redis comes', async () => {
    const port = await freePort();
    const faults: unknown[] = [];
    const started = Date.now();
    const a = await redisLimiter(`redis://127.0.0.1:${port}`, { keyPrefix: freshPrefix(), onFault: (e) => faults.push(e) });
    let server: RedisServer | undefined;
    try {
      assert.ok(Date.now() - started < 1500, 'did not wait for Redis');
      assert.equal(a.shared, false);
      assert.equal(a.faults, 1);
      assert.equal(faults.length, 1);
      let passed = 0;
      for (let i = 0; i < 20; i++) if (a.take('key', 'k', 1, 10, T0).allowed) passed++;
      assert.equal(passed, 10);
      server = await RedisServer.start(port);
      await until(() => a.shared, 5000, 'shared once Redis is up');
      assert.equal(a.faults, 1);
    } finally {
      await a.close();
      await server?.kill();
    }
  });

  test('Redis frozen mid-use: acquire answers within its wait, the fault is reported after the command deadline, shared again when it thaws', async () => {
    const server = await RedisServer.start();
    const faults: unknown[] = [];
    const a = await redisLimiter(server.url, { keyPrefix: freshPrefix(), onFault: (e) => faults.push(e), waitMs: 20, timeoutMs: 250 });
    try {
      assert.ok((await play([a], 'warm', 1, 100, 10, T0)) >= 3);
      assert.equal(a.shared, true);
      server.pause();
      // A cold key: its credit (2 of 100) at once, then requests wait for a sync that does not come.
      const started = performance.now();
      const answers = await Promise.all(Array.from({ length: 10 }, () => a.acquire('key', 'cold', 1, 100, T0)));
      const waited = performance.now() - started;
      assert.ok(waited < 500, `waited ${waited} ms (20 ms and the host's delays)`);
      assert.deepEqual(
        answers.map((d) => d.allowed),
        [true, true, ...Array(8).fill(false)],
      );
      assert.ok(answers.slice(2).every((d) => d.retryAfterS === 1));
      await until(() => !a.shared, 3000, 'the fault');
      assert.equal(faults.length, 1);
      let passed = 0;
      for (let i = 0; i < 150; i++) if (a.take('key', 'fresh', 1, 100, T0).allowed) passed++;
      assert.equal(passed, 100, 'per process while Redis is away');
      server.resume();
      await until(() => a.shared, 8000, 'shared again');
      assert.equal(a.faults, 1);
    } finally {
      server.resume();
      await a.close();
      await server.kill();
    }
  });

  test('a callback that throws does not break the limiter', async () => {
    const port = await freePort();
    const a = await redisLimiter(`redis://127.0.0.1:${port}`, {
      onFault: () => {
        throw new Error('logger broke');
      },
      connectWaitMs: 300,
    });
    try {
      assert.equal(a.faults, 1);
      assert.equal(a.take('key', 'k', 1, 1, T0).allowed, true);
      assert.equal(a.take('key', 'k', 1, 1, T0).allowed, false);
    } finally {
      await a.close();
    }
  });
});
