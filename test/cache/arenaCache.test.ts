import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ArenaCache } from '../../src/cache/arenaCache.js';

/** Lets the event loop turn, so that regions handed out before may be written again. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

interface Held {
  readonly key: number;
  readonly region: Uint8Array;
}

/** Fills a region with a pattern of its key, so that an overwrite shows. */
const fillWith =
  (key: number) =>
  (region: Uint8Array): Held => {
    region.fill(key & 0xff);
    return { key, region };
  };

const intact = (h: Held): boolean => h.region.every((b) => b === (h.key & 0xff));

describe('ArenaCache', () => {
  it('keeps values within its capacity, evicting the oldest unused ones first', async () => {
    const c = new ArenaCache<number, Held>(100);
    for (let k = 1; k <= 3; k++) assert.ok(c.set(k, 30, fillWith(k)));
    assert.equal(c.bytes, 96, 'regions are 8-aligned: 3 x 32');
    await nextTurn();
    assert.ok(c.set(4, 30, fillWith(4)), 'room made by evicting key 1');
    assert.equal(c.get(1), undefined);
    assert.deepEqual([2, 3, 4].map((k) => c.get(k)?.key), [2, 3, 4]);
    assert.ok(c.bytes <= 100);
    assert.equal(c.size, 3);
  });

  it('gives an entry asked for since it was written a second chance', async () => {
    const c = new ArenaCache<number, Held>(128);
    for (let k = 1; k <= 3; k++) c.set(k, 32, fillWith(k));
    await nextTurn();
    c.get(1);
    // A write in this turn, into free room, lets the turn count move on: key 1 is then no longer in use,
    // only marked as asked for.
    c.set(4, 32, fillWith(4));
    await nextTurn();
    c.set(5, 32, fillWith(5));
    const one = c.get(1);
    assert.ok(one && intact(one), 'key 1 was asked for: kept in place');
    assert.equal(c.get(2), undefined, 'key 2, the oldest not asked for, evicted instead');
    assert.deepEqual([3, 4, 5].map((k) => c.get(k)?.key), [3, 4, 5]);
  });

  it('never overwrites a region handed out in the current turn; keeps the value once the turn is over', async () => {
    const c = new ArenaCache<number, Held>(64);
    c.set(1, 32, fillWith(1));
    c.set(2, 32, fillWith(2));
    await nextTurn();
    const one = c.get(1)!;
    const two = c.get(2)!;
    assert.equal(c.set(3, 64, fillWith(3)), undefined, 'no region may be freed in this turn');
    assert.ok(intact(one) && intact(two), 'the handed-out bytes are untouched');
    c.delete(1);
    assert.equal(c.set(4, 32, fillWith(4)), undefined, 'a deleted region handed out in this turn is not reused either');
    assert.ok(intact(one));
    await nextTurn();
    assert.equal(c.set(5, 64, fillWith(5))?.key, 5);
    assert.equal(c.get(2), undefined);
  });

  it('does not keep a value larger than a segment, or anything at capacity 0', () => {
    const c = new ArenaCache<number, Held>(1000, { segmentBytes: 100 });
    assert.equal(c.set(1, 101, fillWith(1)), undefined);
    assert.equal(c.get(1), undefined);
    assert.equal(new ArenaCache<number, Held>(0).set(1, 1, fillWith(1)), undefined);
  });

  it('a key set again replaces its value', async () => {
    const c = new ArenaCache<number, Held>(128);
    c.set(1, 8, fillWith(1));
    await nextTurn();
    const again = c.set(1, 16, (r) => ({ key: 1, region: r.fill(9) }));
    assert.equal(c.get(1), again);
    assert.equal(c.bytes, 16);
    assert.equal(c.size, 1);
  });

  it('with admission, keeps every value until it first has to evict one, then one new value in admitOneIn', async () => {
    const c = new ArenaCache<number, Held>(128, { segmentBytes: 128, admitOneIn: 4 });
    for (let k = 1; k <= 4; k++) assert.ok(c.set(k, 32, fillWith(k)), `key ${k}: room left`);
    await nextTurn();
    assert.ok(c.set(5, 32, fillWith(5)), 'the first insertion that evicts is still kept');
    assert.equal(c.get(1), undefined, 'key 1 evicted');
    await nextTurn();
    const kept = [];
    for (let k = 6; k <= 13; k++) {
      if (c.set(k, 32, fillWith(k))) kept.push(k);
      await nextTurn();
    }
    assert.deepEqual(kept, [9, 13], 'one in four');
    for (const k of [6, 7, 8, 10, 11, 12]) assert.equal(c.get(k), undefined, `key ${k} not kept`);
    assert.deepEqual([9, 13].map((k) => c.get(k)?.key), [9, 13]);
    // A value set again and not admitted leaves no stale one behind.
    assert.equal(c.set(13, 32, fillWith(13)), undefined);
    assert.equal(c.get(13), undefined);
    // Room made by deletions: the next value kept evicts nothing, and every value is kept again.
    for (const k of [3, 4, 5, 9]) c.delete(k);
    await nextTurn();
    const after = [];
    for (let k = 20; k <= 25; k++) {
      if (c.set(k, 32, fillWith(k))) after.push(k);
      await nextTurn();
    }
    assert.deepEqual(after, [22, 23, 24, 25], 'declined up to the next one in four, which goes into free room and lifts admission');
  });

  it('keeps every value it holds intact, within capacity, in one segment, under any sequence of operations (property)', async () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), key: fc.integer({ min: 0, max: 40 }), length: fc.integer({ min: 1, max: 70 }) }),
      fc.record({ kind: fc.constant('get' as const), key: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ kind: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 40 }) }),
      fc.constant({ kind: 'turn' as const }),
    );
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 64, max: 400 }), fc.integer({ min: 70, max: 200 }), fc.integer({ min: 1, max: 4 }), fc.array(op, { maxLength: 120 }), async (capacity, segment, admitOneIn, ops) => {
        const c = new ArenaCache<number, Held>(capacity, { segmentBytes: Math.min(segment, capacity), admitOneIn });
        const handedThisTurn: Held[] = [];
        for (const o of ops) {
          if (o.kind === 'turn') {
            await nextTurn();
            handedThisTurn.length = 0;
          } else if (o.kind === 'set') {
            const held = c.set(o.key, o.length, fillWith(o.key));
            if (held) {
              assert.ok(held.region.length >= o.length);
              assert.equal(held.region.byteOffset % 8, 0);
              assert.ok(held.region.byteOffset + held.region.length <= held.region.buffer.byteLength, 'within one segment');
              handedThisTurn.push(held);
            } else {
              assert.equal(c.get(o.key), undefined, 'a value not kept leaves no older one under its key');
            }
          } else if (o.kind === 'get') {
            const held = c.get(o.key);
            if (held) {
              assert.equal(held.key, o.key);
              assert.ok(intact(held), 'a held value was overwritten');
              handedThisTurn.push(held);
            }
          } else {
            c.delete(o.key);
            assert.equal(c.get(o.key), undefined);
          }
          assert.ok(c.bytes <= capacity, 'over capacity');
          for (const h of handedThisTurn) assert.ok(intact(h), 'a region handed out in this turn was overwritten');
        }
      }),
      { numRuns: 300 },
    );
  });
});
