import assert from 'node:assert/strict';
import { test } from 'node:test';
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
