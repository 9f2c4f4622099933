import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BufferPool } from '../../src/http/bufferPool.js';

test('a lease holds an exact copy, and a released buffer is reused for the next lease', () => {
  const pool = new BufferPool();
  const a = pool.copyOf(new Uint8Array([1, 2, 3]));
  assert.deepEqual([...a.bytes], [1, 2, 3]);
  const under = a.bytes.buffer;
  a.release();
  a.release(); // twice is harmless
  const b = pool.copyOf(new Uint8Array([9, 8]));
  assert.equal(b.bytes.buffer, under, 'reused');
  assert.deepEqual([...b.bytes], [9, 8]);
  const c = pool.copyOf(new Uint8Array([7]));
  assert.notEqual(c.bytes.buffer, under, 'a leased buffer is never handed out twice');
});

test('bodies above the largest class are plain copies', () => {
  const pool = new BufferPool();
  const big = new Uint8Array(5 * 1024 * 1024).fill(3);
  const l = pool.copyOf(big);
  assert.equal(l.bytes.length, big.length);
  assert.equal(l.bytes[12345], 3);
});
