import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { SegmentedLru, SizedLru } from '../../src/cache/lru.js';

const bytes = (s: string): number => s.length;

test('holds entries within the byte bound and evicts the oldest unused first', () => {
  const c = new SizedLru<string, string>(10, bytes);
  c.set('a', 'aaaa');
  c.set('b', 'bbbb');
  assert.equal(c.bytes, 8);
  c.set('c', 'cccc'); // over 10: 'a' (oldest, unused) goes
  assert.equal(c.get('a'), undefined);
  assert.equal(c.get('b'), 'bbbb');
  assert.equal(c.get('c'), 'cccc');
  assert.equal(c.bytes, 8);
});

test('a recently read entry survives an eviction that an older unread one does not', () => {
  const c = new SizedLru<string, string>(12, bytes);
  c.set('a', 'aaaa');
  c.set('b', 'bbbb');
  c.set('c', 'cccc');
  c.get('a'); // a is now the most recent
  c.set('d', 'dddd');
  assert.equal(c.get('a'), 'aaaa');
  assert.equal(c.get('b'), undefined);
  assert.equal(c.get('c'), 'cccc');
  assert.equal(c.get('d'), 'dddd');
});

test("an entry's size may count its key: when set and when re-measured", () => {
  const c = new SizedLru<string, { s: string }>(20, (v, key) => key.length + v.s.length);
  const v = { s: 'xx' };
  c.set('a-long-key', v);
  assert.equal(c.bytes, 12);
  v.s = 'xxxxxx';
  c.resize('a-long-key');
  assert.equal(c.bytes, 16);
  c.set('k', { s: 'yyyy' }); // 5 more: over 20, the oldest goes
  assert.equal(c.get('a-long-key'), undefined);
  assert.equal(c.bytes, 5);
  const seg = new SegmentedLru<string, string>(100, (value, key) => key.length + value.length);
  seg.set('key', 'value');
  assert.equal(seg.bytes, 8);
});

test('a value larger than the bound is not kept; resize re-measures; delete frees', () => {
  const c = new SizedLru<string, { s: string }>(10, (v) => v.s.length);
  c.set('big', { s: 'x'.repeat(11) });
  assert.equal(c.size, 0);
  const v = { s: 'abc' };
  c.set('v', v);
  v.s = 'abcdefgh';
  c.resize('v');
  assert.equal(c.bytes, 8);
  c.delete('v');
  assert.equal(c.bytes, 0);
  assert.equal(c.size, 0);
});

test('never exceeds its bound and keeps its byte count exact (property)', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.constantFrom('set', 'get', 'delete'), fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 8 }))),
      (ops) => {
        const c = new SizedLru<number, string>(20, bytes);
        const model = new Map<number, string>();
        for (const [op, k, n] of ops) {
          if (op === 'set') {
            c.set(k, 'x'.repeat(n));
            model.set(k, 'x'.repeat(n));
          } else if (op === 'delete') {
            c.delete(k);
            model.delete(k);
          } else {
            const got = c.get(k);
            if (got !== undefined) assert.equal(got, model.get(k));
          }
          assert.ok(c.bytes <= 20);
        }
        let sum = 0;
        for (const k of model.keys()) sum += c.get(k)?.length ?? 0;
        assert.equal(sum, c.bytes);
      },
    ),
  );
});

test('after many deletions, re-insertions and reads the bound and the entry count stay exact', () => {
  const c = new SizedLru<number, string>(1000, bytes);
  for (let i = 0; i < 200_000; i++) {
    c.set(i, 'xxxxxxxxxx');
    c.get(i - 50);
  }
  assert.equal(c.size, 100);
  assert.equal(c.bytes, 1000);
});

test('segmented: a flood of new entries does not push out entries read again', () => {
  const c = new SegmentedLru<string, string>(100, bytes); // probation 20, protected 80
  for (const k of ['h1', 'h2', 'h3']) {
    c.set(k, 'x'.repeat(10));
    assert.equal(c.get(k), 'xxxxxxxxxx'); // read again: protected
  }
  for (let i = 0; i < 1000; i++) c.set(`cold${i}`, 'y'.repeat(10));
  for (const k of ['h1', 'h2', 'h3']) assert.equal(c.get(k), 'xxxxxxxxxx', k);
  assert.equal(c.get('cold0'), undefined);
  assert.equal(c.get('cold999'), 'yyyyyyyyyy');
  assert.ok(c.bytes <= 100);
});

test('hooks: dropped on eviction, deletion and replacement, not on promotion; secondChance keeps a marked value once; peek leaves recency alone', () => {
  const dropped: string[] = [];
  const marked = new Set<string>();
  const c = new SizedLru<string, string>(12, bytes, {
    dropped: (v) => dropped.push(v),
    secondChance: (v) => marked.delete(v),
  });
  c.set('a', 'aaaa');
  c.set('b', 'bbbb');
  c.set('c', 'cccc');
  assert.equal(c.peek('a'), 'aaaa'); // not made recent: a is still the oldest
  marked.add('aaaa'); // but marked by its holder
  c.set('d', 'dddd'); // a passed over once, b goes
  assert.deepEqual(dropped, ['bbbb']);
  c.set('e', 'eeee'); // now c, then a would go: c is older
  assert.deepEqual(dropped, ['bbbb', 'cccc']);
  c.set('e', 'EEEE'); // replaced
  c.delete('d');
  assert.deepEqual(dropped, ['bbbb', 'cccc', 'eeee', 'dddd']);
  assert.equal(c.get('a'), 'aaaa');

  const promoted: string[] = [];
  const seg = new SegmentedLru<string, string>(100, bytes, { dropped: (v) => dropped.push(v), promoted: (v) => promoted.push(v) });
  dropped.length = 0;
  seg.set('k', 'x'.repeat(10));
  assert.equal(seg.get('k'), 'xxxxxxxxxx');
  assert.deepEqual(promoted, ['xxxxxxxxxx']);
  assert.deepEqual(dropped, [], 'moving to the protected part is not leaving the cache');
});

test('segmented: the least recent of a full protected segment moves back to probation, so a hot set larger than the protected segment keeps the whole capacity', () => {
  const dropped: string[] = [];
  const demoted: string[] = [];
  const c = new SegmentedLru<string, string>(100, bytes, { dropped: (v) => dropped.push(v), demoted: (v) => demoted.push(v) }); // probation 20, protected 80
  // Nine hot entries of 10: 90, more than the protected 80, less than the whole 100.
  const hot = Array.from({ length: 9 }, (_, i) => `h${i}`);
  for (const k of hot) {
    c.set(k, k.repeat(5));
    assert.equal(c.get(k), k.repeat(5));
  }
  assert.deepEqual(demoted, ['h0h0h0h0h0'], 'the ninth promotion demotes the least recent');
  assert.deepEqual(dropped, [], 'demotion is not leaving the cache');
  // Read round and round: every read finds its entry (one moves back and forth between the segments).
  for (let round = 0; round < 5; round++) for (const k of hot) assert.equal(c.get(k), k.repeat(5), `${k} in round ${round}`);
  assert.deepEqual(dropped, []);
  assert.equal(c.bytes, 90);
});

test('segmented: probation holds what the protected segment does not, so a cache filling with a hot set keeps every new entry', () => {
  const dropped: string[] = [];
  const c = new SegmentedLru<string, string>(100, bytes, { dropped: (v) => dropped.push(v) }); // probation 20, protected 80
  // Nine new entries of 10, none read yet: with a fixed probation share only two would stay.
  const hot = Array.from({ length: 9 }, (_, i) => `h${i}`);
  for (const k of hot) c.set(k, k.repeat(5));
  assert.equal(c.size, 9);
  assert.equal(dropped.length, 0);
  // Read again, they fill the protected segment (eight) and one goes back to probation: still all kept.
  for (const k of hot) assert.equal(c.get(k), k.repeat(5), k);
  assert.equal(c.bytes, 90);
  // With the protected segment full, probation is back to its share: a flood of new entries stays within it.
  for (let i = 0; i < 100; i++) c.set(`cold${i}`, 'y'.repeat(10));
  assert.ok(c.bytes <= 100);
  for (const k of hot.slice(1)) assert.equal(c.get(k), k.repeat(5), `${k} protected`);
  assert.equal(c.get('h0'), undefined, 'the demoted entry left with the flood');
  assert.equal(c.get('cold99'), 'y'.repeat(10));
  // A value in probation that grows past what probation may hold leaves.
  const sized = new SegmentedLru<string, { name: string; n: number }>(100, (v) => v.n, { dropped: (v) => dropped.push(v.name) });
  for (const k of ['a', 'b', 'c', 'd']) {
    sized.set(k, { name: k, n: 20 });
    sized.get(k);
  }
  const grown = { name: 'grown', n: 10 };
  sized.set('g', grown);
  grown.n = 30;
  sized.resize('g');
  assert.equal(sized.get('g'), undefined);
  assert.ok(dropped.includes('grown'));
});

test('segmented: whatever is set, read, resized or deleted, the entries never cost more than the capacity', () => {
  let seed = 7;
  const random = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const values = new Map<string, { n: number }>();
  const c = new SegmentedLru<string, { n: number }>(1000, (v) => v.n);
  for (let i = 0; i < 20_000; i++) {
    const key = `k${random(200)}`;
    const op = random(10);
    if (op < 4) {
      const v = { n: 1 + random(120) };
      values.set(key, v);
      c.set(key, v);
    } else if (op < 8) c.get(key);
    else if (op < 9) {
      const v = values.get(key);
      if (v !== undefined) {
        v.n = 1 + random(300);
        c.resize(key);
      }
    } else c.delete(key);
    assert.ok(c.bytes <= 1000, `step ${i}: ${c.bytes} bytes`);
  }
});

test('segmented: an entry read again that the protected segment cannot hold leaves the cache, and its owner is told', () => {
  const dropped: string[] = [];
  const promoted: string[] = [];
  const c = new SegmentedLru<string, string>(100, bytes, { dropped: (v) => dropped.push(v), promoted: (v) => promoted.push(v) }, 0.9); // protected 10
  const big = 'b'.repeat(50);
  c.set('big', big);
  assert.equal(c.get('big'), big, 'the reader still gets the value');
  assert.deepEqual(dropped, [big], 'told, so that a pooled body is handed back');
  assert.deepEqual(promoted, [], 'not promoted: it left');
  assert.equal(c.get('big'), undefined);
  assert.deepEqual([c.size, c.bytes], [0, 0]);
});
