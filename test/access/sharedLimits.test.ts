/**
 * Rate limits shared through Redis by two real server processes: one budget
 * for a key across both (within 10 %); Redis killed under load: no 500, no
 * answer slower than a second, limits per process meanwhile; Redis back:
 * shared again by itself.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openStore } from '../../src/store/openStore.js';
import { serve, type Served } from '../helpers/cli.js';
import { seed, testDbUrl } from '../helpers/fixtures.js';
import { createKey } from '../helpers/keys.js';
import { RedisServer, redisTestOptions } from './rateLimit/redisServer.js';

let redis: RedisServer;
let servers: Served[] = [];
let drop: () => Promise<void>;
const keys: Record<string, string> = {};

before(async () => {
  if (redisTestOptions().skip) return;
  redis = await RedisServer.start();
  const db = await testDbUrl();
  drop = db.drop;
  const store = await openStore(db.url);
  await seed(store, [{ farmId: 'WF_A', issue: '2026112000', opts: { steps: [0, 1] } }]);
  // Rates so low that nothing refills during a test: what passes is the burst.
  keys.burst = await createKey(store, 'shared-burst', { rate: 0.001, burst: 100 });
  keys.outage = await createKey(store, 'outage', { rate: 1000, burst: 100000 });
  keys.after = await createKey(store, 'after-outage', { rate: 0.001, burst: 60 });
  keys.small = await createKey(store, 'shared-small', { rate: 0.001, burst: 3 });
  await store.close();
  const args = ['--db', db.url, '--workers', '1', '--auth', 'required', '--redis', redis.url];
  servers = await Promise.all([serve(args), serve(args)]);
});

after(async () => {
  for (const s of servers) await s.stop();
  await redis?.kill();
  await drop?.();
});

interface Tally {
  ok: number;
  limited: number;
  other: number[];
  slowestMs: number;
}

/** n requests with the key, spread over both servers, `parallel` at a time. */
async function burst(key: string, n: number, parallel = 8): Promise<Tally> {
  const t: Tally = { ok: 0, limited: 0, other: [], slowestMs: 0 };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) {
      const i = next++;
      const t0 = performance.now();
      const res = await fetch(`${servers[i % 2]!.base}/api/v1/forecast?farm_id=WF_A&size=1`, { headers: { authorization: `Bearer ${key}` } });
      await res.arrayBuffer();
      t.slowestMs = Math.max(t.slowestMs, performance.now() - t0);
      if (res.status === 200) t.ok++;
      else if (res.status === 429) t.limited++;
      else t.other.push(res.status);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return t;
}

describe('rate limits shared through Redis by two processes', redisTestOptions(), () => {
  test('one budget for a key across both processes, within 10 %', async () => {
    const t = await burst(keys.burst!, 300);
    assert.deepEqual(t.other, []);
    assert.ok(t.ok >= 90 && t.ok <= 110, `${t.ok} passed of a burst of 100 (per process it would be 200)`);
    assert.equal(t.ok + t.limited, 300);
  });

  test('a small burst holds exactly across both processes: no credit beyond it', async () => {
    const t = await burst(keys.small!, 12, 4);
    assert.deepEqual(t.other, []);
    assert.equal(t.ok, 3, `${t.ok} passed of a burst of 3`);
  });

  test('Redis killed under load: no 500, no answer slower than a second; shared again once it is back', async () => {
    const load = burst(keys.outage!, 1500, 6);
    await new Promise((r) => setTimeout(r, 300));
    await redis.kill();
    await new Promise((r) => setTimeout(r, 1500));
    await redis.start();
    const t = await load;
    assert.deepEqual(t.other, [], 'only 200s (the key has budget to spare)');
    assert.equal(t.ok, 1500);
    assert.ok(t.slowestMs < 1000, `slowest answer ${t.slowestMs.toFixed(0)} ms`);
    // Shared again by itself: a fresh key's burst holds across both processes once more.
    await new Promise((r) => setTimeout(r, 2000));
    const shared = await burst(keys.after!, 150);
    assert.ok(shared.ok >= 54 && shared.ok <= 66, `${shared.ok} passed of a burst of 60 after Redis came back`);
    for (const s of servers) assert.match(s.stderr(), /Redis unreachable/, 'the fault is logged');
  });
});
