import assert from 'node:assert/strict';
import { test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { fnv1a } from '../../src/cache/hash.js';
import { BodyCache, type BodyCacheKey } from '../../src/http/bodyCache.js';

const MB = 1024 * 1024;

const k = (text: string): BodyCacheKey => ({ text, hash: fnv1a(text) });

/** Asks for key three times with a body of `bytes` bytes; returns how often it was rendered and the answers. */
function ask(cache: BodyCache, key: string, bytes: number, likely = false): { renders: number; kept: boolean[] } {
  let renders = 0;
  const kept: boolean[] = [];
  for (let i = 0; i < 3; i++) {
    const entry = cache.body(
      k(key),
      (sink) => {
        renders++;
        sink.bytes(new Uint8Array(bytes).fill(0x61 + (key.length % 20)));
      },
      likely,
    );
    assert.equal(entry.identity.length, bytes);
    kept.push(entry.release === undefined);
    entry.release?.();
  }
  return { renders, kept };
}

test('a body is kept from its second sighting on: rendered twice, then served from the cache', () => {
  const cache = new BodyCache(8 * MB);
  assert.deepEqual(ask(cache, 'page', 10_000), { renders: 2, kept: [false, true, true] });
  assert.ok(cache.cached('page'));
});

test('a likely body is kept from its first sighting while the cache has room, from its second once it is full', () => {
  const cache = new BodyCache(1 * MB);
  assert.deepEqual(ask(cache, 'latest page', 1000, true), { renders: 1, kept: [true, true, true] });
  // Filled with pages kept on their second sighting (some pushed out again: the cache is then full).
  for (let i = 0; i < 2000; i++) ask(cache, `page ${i}`, 1000);
  assert.equal(cache.cached('page 0'), undefined, 'the cache is full: the first pages were pushed out');
  assert.deepEqual(ask(cache, 'another latest page', 1000, true), { renders: 2, kept: [false, true, true] });
  // Too large to keep is too large however likely.
  assert.deepEqual(ask(cache, 'a whole run', MB / 512 + 1, true).kept, [false, false, false]);
});

test('a body larger than a 512th of the cache is never kept: rendered for every answer, into pooled buffers', () => {
  const cache = new BodyCache(8 * MB);
  const limit = (8 * MB) / 512;
  assert.deepEqual(ask(cache, 'whole run', limit + 1), { renders: 3, kept: [false, false, false] });
  assert.equal(cache.cached('whole run'), undefined);
  assert.deepEqual(ask(cache, 'at the limit', limit), { renders: 2, kept: [false, true, true] });
});

test('a body too large to keep keeps its compressed variants: compressed once, identity rendered each time', () => {
  const cache = new BodyCache(8 * MB);
  const size = (8 * MB) / 512 + 1000;
  // Text-like, so that it compresses well below the size limit.
  const text = Buffer.from('2026-11-20T08:15:00+08:00,12.5,3.25,101325,0.5\n'.repeat(Math.ceil(size / 48))).subarray(0, size);
  const answers: Buffer[] = [];
  let renders = 0;
  for (let i = 0; i < 3; i++) {
    const entry = cache.body(k('whole run'), (sink) => {
      renders++;
      sink.bytes(text);
    });
    assert.ok(entry.release, 'the identity body is not kept');
    const { bytes, coding } = cache.encoded(k('whole run'), entry, 'gzip');
    assert.equal(coding, 'gzip');
    assert.ok(gunzipSync(bytes).equals(text));
    answers.push(bytes);
    entry.release!();
  }
  assert.equal(renders, 3);
  assert.equal(answers[1], answers[0], 'the same compressed bytes, not compressed again');
  assert.equal(answers[2], answers[0]);
  // Another coding is a variant of its own.
  const entry = cache.body(k('whole run'), (sink) => sink.bytes(text));
  const br = cache.encoded(k('whole run'), entry, 'br');
  assert.equal(br.coding, 'br');
  assert.ok(brotliDecompressSync(br.bytes).equals(text));
  assert.equal(cache.encoded(k('whole run'), entry, 'br').bytes, br.bytes);
});

test('a one-off body that is not kept yet is compressed for its answer alone', () => {
  const cache = new BodyCache(8 * MB);
  const text = Buffer.from('x,1.5\n'.repeat(2000));
  const first = cache.body(k('page'), (sink) => sink.bytes(text));
  assert.ok(first.release);
  const a = cache.encoded(k('page'), first, 'gzip').bytes;
  const b = cache.encoded(k('page'), first, 'gzip').bytes;
  assert.notEqual(a, b, 'compressed again: nothing is kept for a body seen once');
  assert.ok(gunzipSync(b).equals(text));
});

/** Keeps `key` (asked three times: admitted, then promoted out of probation) with a body of `bytes` bytes. */
function keep(cache: BodyCache, key: string, bytes: number): void {
  ask(cache, key, bytes);
}

test('a held body is sent again without a lookup while kept; once it leaves the cache it is refused and its bytes let go', () => {
  const cache = new BodyCache(1 * MB);
  keep(cache, 'held', 1000);
  const held = cache.cached('held')!;
  assert.equal(cache.sentAgain(k('held'), held), held);
  assert.equal(held.identity.length, 1000);
  // Pages never sent again push it out: the main part holds 31/32 MB, and it is passed over once (it was sent again),
  // then moved back to probation, then evicted from there.
  for (let i = 0; i < 2000; i++) keep(cache, `other ${i}`, 1000);
  assert.equal(cache.cached('held'), undefined);
  assert.equal(cache.sentAgain(k('held'), held), undefined);
  assert.equal(held.dropped, true);
  assert.equal(held.identity.length, 0, 'the holder keeps no bytes alive');
});

test("an evicted body's memory is handed back at once: its buffer is detached, not left for a full collection", () => {
  const cache = new BodyCache(1 * MB);
  keep(cache, 'old', 1000);
  const bytes = cache.cached('old')!.identity;
  assert.equal(bytes.byteOffset, 0);
  assert.equal(bytes.buffer.byteLength, 1000, 'a kept body owns its whole ArrayBuffer, never a slice of the shared pool');
  for (let i = 0; i < 2000; i++) keep(cache, `other ${i}`, 1000);
  assert.equal(cache.cached('old'), undefined);
  assert.equal(bytes.buffer.byteLength, 0, 'detached');
});

test('a body evicted while answers are writing it keeps its bytes until the last of them is sent', () => {
  const cache = new BodyCache(1 * MB);
  keep(cache, 'busy', 1000);
  const entry = cache.cached('busy')!;
  const bytes = entry.identity;
  const first = cache.lease(entry);
  const second = cache.lease(entry);
  assert.equal(first, second, 'one callback per body');
  for (let i = 0; i < 2000; i++) keep(cache, `other ${i}`, 1000);
  assert.equal(entry.dropped, true);
  assert.equal(cache.sentAgain(k('busy'), entry), undefined, 'no new answer takes it');
  assert.equal(bytes.length, 1000);
  assert.equal(bytes[999], 0x61 + ('busy'.length % 20), 'the bytes being written are intact');
  first();
  assert.equal(bytes.length, 1000, 'one answer still writing');
  second();
  assert.equal(bytes.buffer.byteLength, 0);
  assert.equal(entry.identity.length, 0);
});

test("a body that is not kept is leased by its own release: its pooled buffer goes back once sent", () => {
  const cache = new BodyCache(1 * MB);
  const once = cache.body(k('one-off'), (sink) => sink.bytes(new Uint8Array(100)));
  assert.notEqual(once.release, undefined);
  assert.equal(cache.lease(once), once.release);
});

test('a body sent again without a lookup outlives one that was not, as a looked-up one would', () => {
  const cache = new BodyCache(1 * MB);
  keep(cache, 'sent', 1000);
  keep(cache, 'idle', 1000);
  const sent = cache.cached('sent')!;
  // Fill the cache with pages asked once more each, sending `sent` again now and then.
  for (let i = 0; i < 1200; i++) {
    keep(cache, `other ${i}`, 1000);
    if (i % 50 === 0) assert.equal(cache.sentAgain(k('sent'), sent), sent);
  }
  assert.equal(cache.cached('idle'), undefined);
  assert.ok(cache.cached('sent'));
});

test('a held body still in probation is promoted by being sent again, as a lookup would promote it', () => {
  const cache = new BodyCache(1 * MB);
  ask(cache, 'new', 1000); // kept on its second sighting, then read once more: promoted
  const fresh = cache.body(k('fresh'), (sink) => sink.bytes(new Uint8Array(1000)));
  fresh.release?.();
  const kept = cache.body(k('fresh'), (sink) => sink.bytes(new Uint8Array(1000)));
  assert.equal(kept.release, undefined);
  assert.equal(kept.probation, true);
  assert.equal(cache.sentAgain(k('fresh'), kept), kept);
  assert.equal(kept.probation, false);
  // Promoted, it survives a flood that only passes through probation.
  for (let i = 0; i < 400; i++) {
    const e = cache.body(k(`flood ${i}`), (sink) => sink.bytes(new Uint8Array(1000)));
    e.release?.();
    cache.body(k(`flood ${i}`), (sink) => sink.bytes(new Uint8Array(1000))).release?.();
  }
  assert.equal(cache.sentAgain(k('fresh'), kept), kept);
});

test("a key's text is not asked for on its first sighting: a one-off body is neither looked up nor kept", () => {
  const cache = new BodyCache(8 * MB);
  let reads = 0;
  const key = {
    hash: fnv1a('one-off'),
    get text(): string {
      reads++;
      return 'one-off';
    },
  };
  const first = cache.body(key, (sink) => sink.bytes(new Uint8Array(1000)));
  assert.ok(first.release, 'sent from a pooled buffer');
  first.release!();
  assert.equal(reads, 0, 'no map was asked');
  const second = cache.body(key, (sink) => sink.bytes(new Uint8Array(1000)));
  assert.equal(second.release, undefined, 'kept on its second sighting');
  assert.ok(reads > 0);
  assert.equal(cache.body(key, () => assert.fail('rendered again')), second);
});
