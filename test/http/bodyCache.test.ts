import assert from 'node:assert/strict';
import { test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { fnv1a } from '../../src/cache/hash.js';
import { BodyCache } from '../../src/http/bodyCache.js';

const MB = 1024 * 1024;

/** Asks for key three times with a body of `bytes` bytes; returns how often it was rendered and the answers. */
function ask(cache: BodyCache, key: string, bytes: number): { renders: number; kept: boolean[] } {
  let renders = 0;
  const kept: boolean[] = [];
  for (let i = 0; i < 3; i++) {
    const entry = cache.body(key, fnv1a(key), (sink) => {
      renders++;
      sink.bytes(new Uint8Array(bytes).fill(0x61 + (key.length % 20)));
    });
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
    const entry = cache.body('whole run', fnv1a('whole run'), (sink) => {
      renders++;
      sink.bytes(text);
    });
    assert.ok(entry.release, 'the identity body is not kept');
    const { bytes, coding } = cache.encoded('whole run', entry, 'gzip');
    assert.equal(coding, 'gzip');
    assert.ok(gunzipSync(bytes).equals(text));
    answers.push(bytes);
    entry.release!();
  }
  assert.equal(renders, 3);
  assert.equal(answers[1], answers[0], 'the same compressed bytes, not compressed again');
  assert.equal(answers[2], answers[0]);
  // Another coding is a variant of its own.
  const entry = cache.body('whole run', fnv1a('whole run'), (sink) => sink.bytes(text));
  const br = cache.encoded('whole run', entry, 'br');
  assert.equal(br.coding, 'br');
  assert.ok(brotliDecompressSync(br.bytes).equals(text));
  assert.equal(cache.encoded('whole run', entry, 'br').bytes, br.bytes);
});

test('a one-off body that is not kept yet is compressed for its answer alone', () => {
  const cache = new BodyCache(8 * MB);
  const text = Buffer.from('x,1.5\n'.repeat(2000));
  const first = cache.body('page', fnv1a('page'), (sink) => sink.bytes(text));
  assert.ok(first.release);
  const a = cache.encoded('page', first, 'gzip').bytes;
  const b = cache.encoded('page', first, 'gzip').bytes;
  assert.notEqual(a, b, 'compressed again: nothing is kept for a body seen once');
  assert.ok(gunzipSync(b).equals(text));
});
