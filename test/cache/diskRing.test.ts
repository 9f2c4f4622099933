import assert from 'node:assert/strict';
import { fstatSync, mkdtempSync, openSync, closeSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { DiskRing, type RingRecord } from '../../src/cache/diskRing.js';

const dir = mkdtempSync(join(tmpdir(), 'forecastd-ring-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A record of `length` bytes, each the key's number: an overwrite or a mix-up shows in any byte. */
const bytesOf = (key: number, length: number): Uint8Array => Buffer.alloc(length, key & 0xff);

const ring = (
  capacityBytes: number,
  o: { slowReadMs?: number; coolMs?: number; diskReads?: () => number; rewarm?: boolean; prefill?: boolean } = {},
): DiskRing<number> =>
  new DiskRing<number>({ dir, capacityBytes, slowReadMs: Infinity, ...o });

/** A count of reads from the disk that moves at every look: every slow read then waited for the disk. */
const movingCount = (): (() => number) => {
  let n = 0;
  return () => n++;
};

/** The record get() finds at once (a test of the synchronous path fails on a promise). */
function now(r: DiskRing<number>, key: number): RingRecord<number> | undefined {
  const got = r.get(String(key));
  assert.ok(!(got instanceof Promise), `key ${key} was read at once`);
  return got;
}

/** The sizes of this process's unlinked ring files, as the OS holds them (found by their names under /proc/self/fd). */
function ringFileSizes(): number[] {
  const sizes: number[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue;
    }
    if (!target.startsWith(join(dir, '.forecastd-copies-')) || !target.endsWith('(deleted)')) continue;
    const again = openSync(`/proc/self/fd/${fd}`, 'r');
    try {
      sizes.push(fstatSync(again).size);
    } finally {
      closeSync(again);
    }
  }
  return sizes;
}

describe('DiskRing', () => {
  it('with prefill, fills its file with zeros a megabyte at a time ahead of the records, never past its capacity', async () => {
    const MB = 1 << 20;
    const plain = ring(MB);
    plain.putNow('1', bytesOf(1, 100), 1);
    assert.deepEqual(ringFileSizes(), [100], 'without prefill, only the records');
    await plain.close();
    const r = ring(3 * MB + MB / 2, { prefill: true });
    r.putNow('1', bytesOf(1, 100), 1);
    assert.deepEqual(ringFileSizes(), [MB], 'the first megabyte, before the first record is written');
    // Records of 400,000 bytes: the third spans the first megabyte's end, and is written after the zeros.
    for (let k = 2; k <= 4; k++) r.put(String(k), bytesOf(k, 400_000), k);
    await r.settled();
    assert.deepEqual(ringFileSizes(), [2 * MB]);
    for (let k = 2; k <= 4; k++) assert.deepEqual(now(r, k)?.bytes, bytesOf(k, 400_000), `record ${k}`);
    for (let k = 5; k <= 12; k++) r.putNow(String(k), bytesOf(k, 400_000), k);
    assert.deepEqual(ringFileSizes(), [3 * MB + MB / 2], 'the last half megabyte, and no further');
    assert.deepEqual(now(r, 12)?.bytes, bytesOf(12, 400_000), 'after the ring wrapped');
    await r.close();
  });

  it('leaves no file behind: the file is unlinked as soon as it is made', async () => {
    const r = ring(1000);
    r.put('1', bytesOf(1, 10), 1);
    await r.settled();
    assert.deepEqual(readdirSync(dir), []);
    assert.deepEqual(now(r, 1)?.bytes, bytesOf(1, 10));
    await r.close();
  });

  it('returns a record once written, with what was kept beside it, and nothing for a key never put', async () => {
    const r = ring(1000);
    r.put('7', bytesOf(7, 300), 70);
    assert.equal(r.get('7'), undefined, 'not readable before its write completed');
    await r.settled();
    const got = now(r, 7)!;
    assert.deepEqual(got.bytes, bytesOf(7, 300));
    assert.equal(got.meta, 70);
    assert.equal(r.get('8'), undefined);
    assert.equal(r.bytes, 300);
    assert.equal(r.counts.syncReads, 1);
    await r.close();
  });

  it('forgets the oldest records as the pointer reaches them, and those at the end when it wraps', async () => {
    const r = ring(100);
    for (let k = 1; k <= 3; k++) r.put(String(k), bytesOf(k, 30), k); // [0,30) [30,60) [60,90)
    await r.settled();
    r.put('4', bytesOf(4, 30), 4); // does not fit in [90,100): wraps to [0,30), over record 1
    await r.settled();
    assert.equal(r.get('1'), undefined);
    for (const k of [2, 3, 4]) assert.deepEqual(now(r, k)?.bytes, bytesOf(k, 30), `record ${k}`);
    r.put('5', bytesOf(5, 45), 5); // [30,75): over records 2 and 3
    await r.settled();
    assert.equal(r.get('2'), undefined);
    assert.equal(r.get('3'), undefined);
    assert.deepEqual(now(r, 4)?.bytes, bytesOf(4, 30));
    assert.deepEqual(now(r, 5)?.bytes, bytesOf(5, 45));
    assert.equal(r.bytes, 75);
    assert.equal(r.size, 2);
    await r.close();
  });

  it('keeps no record larger than the ring, nor an empty one', async () => {
    const r = ring(100);
    r.put('1', bytesOf(1, 101), 1);
    r.put('2', new Uint8Array(0), 2);
    await r.settled();
    assert.equal(r.size, 0);
    await r.close();
  });

  it('answers the latest bytes put under a key, and nothing once the key is deleted, even before its write completed', async () => {
    const r = ring(1000);
    r.put('1', bytesOf(1, 10), 1);
    await r.settled();
    r.put('1', bytesOf(2, 20), 2);
    await r.settled();
    assert.deepEqual(now(r, 1)?.bytes, bytesOf(2, 20));
    assert.equal(now(r, 1)?.meta, 2);
    r.put('3', bytesOf(3, 10), 3);
    r.delete('3');
    await r.settled();
    assert.equal(r.get('3'), undefined, 'a delete reaches a write still under way');
    r.delete('1');
    assert.equal(r.get('1'), undefined);
    assert.equal(r.bytes, 0);
    await r.close();
  });

  it('keeps every record read at once intact until the turn ends, more of them than its reading buffer holds', async () => {
    const r = ring(4 << 20);
    // 120 records of 20,000 bytes: 2.4 MB read in one turn, over twice the 1 MB the reads of a turn share.
    for (let k = 0; k < 120; k++) r.put(String(k), bytesOf(k, 20_000), k);
    await r.settled();
    for (let round = 0; round < 2; round++) {
      const held = Array.from({ length: 120 }, (_, k) => now(r, k)!);
      held.forEach((got, k) => assert.deepEqual(got.bytes, bytesOf(k, 20_000), `record ${k}, round ${round}`));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await r.close();
  });

  it("after a slow read, reads go through libuv's threads for a while, then at once again", async () => {
    // Every read is "slow" (over -1 ms): the next reads, for the next 50 ms, are made on libuv's threads.
    const r = ring(1000, { slowReadMs: -1, coolMs: 50, diskReads: movingCount() });
    r.put('1', bytesOf(1, 10), 1);
    await r.settled();
    assert.deepEqual(now(r, 1)?.bytes, bytesOf(1, 10));
    assert.equal(r.counts.slowReads, 1);
    const later = r.get('1');
    assert.ok(later instanceof Promise, 'cooling down: a promise');
    assert.deepEqual((await later)?.bytes, bytesOf(1, 10));
    assert.equal(r.counts.asyncReads, 1);
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.deepEqual(now(r, 1)?.bytes, bytesOf(1, 10), 'at once again after coolMs');
    await r.close();
  });

  it('a slow read during which the process read nothing from a disk (the machine paused it) leaves reads at once', async () => {
    let looks = 0;
    const r = ring(1000, { slowReadMs: -1, coolMs: 60_000, diskReads: () => (looks++, 7) });
    r.put('1', bytesOf(1, 10), 1);
    await r.settled();
    for (let i = 0; i < 3; i++) assert.deepEqual(now(r, 1)?.bytes, bytesOf(1, 10), `read ${i} at once`);
    assert.equal(r.counts.slowReads, 0);
    assert.equal(r.counts.asyncReads, 0);
    // Once before the first read, and once after each (slow) read.
    assert.equal(looks, 4);
    await r.close();
  });

  it('counts disk reads at most once per 50 ms of fast reads, not once per turn (a count costs a whole resource report)', async () => {
    let looks = 0;
    const r = ring(1000, { diskReads: () => (looks++, 7) });
    r.put('1', bytesOf(1, 10), 1);
    await r.settled();
    const turns = 300;
    const started = performance.now();
    for (let i = 0; i < turns; i++) {
      assert.deepEqual(now(r, 1)?.bytes, bytesOf(1, 10));
      await new Promise((resolve) => setImmediate(resolve));
    }
    const elapsed = performance.now() - started;
    assert.ok(looks >= 1, 'counted before the first read');
    assert.ok(looks <= Math.ceil(elapsed / 50) + 1, `${looks} counts in ${elapsed.toFixed(1)} ms`);
    assert.ok(looks < turns, `${looks} counts for ${turns} turns`);
    await r.close();
  });

  it('after a read from the disk, reads its file back whole in the background, at most once a minute', async () => {
    const r = ring(1 << 22, { slowReadMs: -1, coolMs: 0, diskReads: movingCount(), rewarm: true });
    for (let k = 0; k < 30; k++) r.put(String(k), bytesOf(k, 100_000), k);
    await r.settled();
    assert.deepEqual(r.rewarms, { passes: 0, bytes: 0 });
    assert.deepEqual(now(r, 3)?.bytes, bytesOf(3, 100_000));
    await r.settled();
    assert.deepEqual(r.rewarms, { passes: 1, bytes: 30 * 100_000 }, 'every byte written, once');
    assert.deepEqual(now(r, 4)?.bytes, bytesOf(4, 100_000));
    await r.settled();
    assert.equal(r.rewarms.passes, 1, 'not again within a minute');
    await r.close();
    // A ring made without rewarm reads only what it is asked for.
    const plain = ring(1 << 22, { slowReadMs: -1, coolMs: 0, diskReads: movingCount() });
    plain.put('1', bytesOf(1, 100_000), 1);
    await plain.settled();
    assert.ok(now(plain, 1));
    await plain.settled();
    assert.deepEqual(plain.rewarms, { passes: 0, bytes: 0 });
    await plain.close();
  });

  it('drops a threaded read whose record was overwritten before the read completed', async () => {
    const r = ring(100, { slowReadMs: -1, coolMs: 60_000, diskReads: movingCount() });
    r.put('1', bytesOf(1, 50), 1);
    await r.settled();
    now(r, 1);
    const pending = r.get('1');
    assert.ok(pending instanceof Promise);
    // Two records of 50 bytes: the second wraps over record 1 while its read may still be under way.
    r.put('2', bytesOf(2, 50), 2);
    r.put('3', bytesOf(3, 50), 3);
    assert.equal(await pending, undefined);
    await r.settled();
    assert.deepEqual((await r.get('3'))?.bytes, bytesOf(3, 50));
    await r.close();
  });

  it('closes only once its writes have completed, and is inert after', async () => {
    const r = ring(1 << 20);
    for (let k = 0; k < 20; k++) r.put(String(k), bytesOf(k, 4096), k);
    await r.close();
    assert.equal(r.get('1'), undefined);
    r.put('1', bytesOf(1, 10), 1);
    await r.settled();
    assert.equal(r.get('1'), undefined);
    assert.equal(r.size, 0);
  });

  it('never answers bytes other than the latest put under a key, over random puts, deletes and reads', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.record({ op: fc.constant('put' as const), key: fc.integer({ min: 0, max: 9 }), length: fc.integer({ min: 1, max: 70 }) }),
            fc.record({ op: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 9 }) }),
            fc.record({ op: fc.constant('settle' as const) }),
          ),
          { maxLength: 60 },
        ),
        async (ops) => {
          const r = ring(200);
          // What each key last had put, and a count that makes each put's bytes differ from the last.
          const latest = new Map<number, Uint8Array>();
          let n = 0;
          try {
            for (const o of ops) {
              if (o.op === 'put') {
                const bytes = bytesOf(++n, o.length);
                r.put(String(o.key), bytes, n);
                latest.set(o.key, bytes);
              } else if (o.op === 'delete') {
                r.delete(String(o.key));
                latest.delete(o.key);
              } else await r.settled();
              for (let k = 0; k <= 9; k++) {
                const got = now(r, k);
                if (got !== undefined) assert.deepEqual(got.bytes, latest.get(k), `key ${k}`);
              }
              assert.ok(r.bytes <= r.capacity);
            }
          } finally {
            await r.close();
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('DiskRing, synchronous use', () => {
  it('putNow: readable as soon as it returns; readNow: read into the buffer the caller gives', async () => {
    const r = ring(1000);
    r.putNow('1', bytesOf(1, 300), 1);
    const target = Buffer.alloc(400);
    const got = r.readNow('1', (length) => target.subarray(0, length));
    assert.ok(got);
    assert.equal(got.bytes.buffer, target.buffer, 'the caller’s memory');
    assert.deepEqual(got.bytes, bytesOf(1, 300));
    assert.equal(r.readNow('2', () => assert.fail('no buffer is asked for a key never put')), undefined);
    r.putNow('2', bytesOf(2, 800), 2); // wraps over record 1
    assert.equal(r.readNow('1', () => Buffer.alloc(300)), undefined);
    await r.close();
  });

  it('readNow answers nothing while reads go through libuv’s threads', async () => {
    const r = ring(1000, { slowReadMs: -1, coolMs: 60_000, diskReads: movingCount() });
    r.putNow('1', bytesOf(1, 10), 1);
    assert.ok(r.readNow('1', (length) => Buffer.alloc(length)), 'the first read, at once, is "slow"');
    assert.equal(r.readNow('1', (length) => Buffer.alloc(length)), undefined);
    assert.ok((await r.get('1')) !== undefined, 'get() still reads it, on the threads');
    await r.close();
  });
});
