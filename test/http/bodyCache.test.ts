import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { BodyCache } from '../../src/http/bodyCache.js';
import type { ByteSink } from '../../src/domain/byteSink.js';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A body of `size` bytes that names its key, so that bodies differ and an overwrite shows. */
const text = (key: string, size: number): string => (key + ' ').repeat(Math.ceil(size / (key.length + 1))).slice(0, size);
const renderOf = (key: string, size: number) => (sink: ByteSink) => sink.ascii(text(key, size));

describe('BodyCache', () => {
  it('keeps a body on the second sighting of its key and answers it from memory after that', () => {
    const c = new BodyCache(1 << 20);
    let renders = 0;
    const render = (sink: ByteSink): void => {
      renders++;
      renderOf('a', 3000)(sink);
    };
    const first = c.body('a', render)!;
    assert.ok(first.release, 'first sighting: a pooled buffer, not kept');
    first.release!();
    assert.equal(c.body('a', undefined), undefined);
    const second = c.body('a', render)!;
    assert.equal(second.release, undefined, 'second sighting: kept');
    assert.equal(c.body('a', render)!.identity.toString(), text('a', 3000));
    assert.equal(renders, 2);
  });

  it('a body being sent is not overwritten by later bodies until its response has closed', async () => {
    const c = new BodyCache(16 * 1024); // room for four 4 KB bodies
    c.body('held', renderOf('held', 4000));
    const kept = c.body('held', renderOf('held', 4000))!;
    const sending = c.sending(kept, 'identity');
    assert.ok(sending.release, 'a kept body is pinned while sent');
    const bytes = sending.bytes;
    for (let i = 0; i < 20; i++) {
      await nextTurn();
      const key = `other${i}`;
      c.body(key, renderOf(key, 4000));
      c.body(key, renderOf(key, 4000));
      assert.ok(bytes.toString() === text('held', 4000), `intact after ${i + 1} other bodies`);
    }
    sending.release!();
    for (let i = 20; i < 30; i++) {
      await nextTurn();
      const key = `other${i}`;
      c.body(key, renderOf(key, 4000));
      c.body(key, renderOf(key, 4000));
    }
    assert.notEqual(bytes.toString(), text('held', 4000), 'released: its region was reused');
  });

  it('compresses a kept body once per coding, to bytes that decompress to the identity body; small bodies stay identity', async () => {
    const c = new BodyCache(1 << 20);
    c.body('z', renderOf('zebra', 5000));
    const kept = c.body('z', renderOf('zebra', 5000))!;
    assert.equal(c.coding(kept, 'br'), 'br');
    const br = c.sending(kept, 'br');
    const gzip = c.sending(kept, 'gzip');
    assert.equal(brotliDecompressSync(br.bytes).toString(), text('zebra', 5000));
    assert.equal(gunzipSync(gzip.bytes).toString(), text('zebra', 5000));
    await nextTurn();
    assert.equal(c.sending(kept, 'br').bytes, br.bytes, 'the same kept variant, not compressed again');
    c.body('s', renderOf('s', 100));
    const small = c.body('s', renderOf('s', 100))!;
    assert.equal(c.coding(small, 'gzip'), 'identity');
  });
});
