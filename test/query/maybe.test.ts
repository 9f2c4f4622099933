import assert from 'node:assert/strict';
import { test } from 'node:test';
import { then } from '../../src/query/maybe.js';

test('then applies f at once to a value at hand, and throws its error at once', () => {
  let ran = false;
  const out = then(2, (v) => {
    ran = true;
    return v * 3;
  });
  assert.equal(out, 6);
  assert.ok(ran);
  assert.throws(() => then(1, () => { throw new Error('now'); }), /now/);
});

test('then waits for a promise, and rejects with its error or f\'s', async () => {
  const out = then(Promise.resolve(2), (v) => v * 3);
  assert.ok(out instanceof Promise);
  assert.equal(await out, 6);
  await assert.rejects(Promise.resolve(then(Promise.resolve(1), () => { throw new Error('later'); })), /later/);
  await assert.rejects(Promise.resolve(then(Promise.reject(new Error('source')), () => 0)), /source/);
});
