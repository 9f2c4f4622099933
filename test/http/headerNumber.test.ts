/** Content-Length values written without the number-to-string cache: the same digits as String(n). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decimalHeader } from '../../src/http/headerNumber.js';

test('a whole number as a header value has the digits String gives it, from 0 to the largest safe integer', () => {
  const samples = [0, 1, 9, 10, 99, 100, 21_099, 65_535, 140_000, 2 ** 31 - 1, 2 ** 31, 2 ** 32 + 5, Number.MAX_SAFE_INTEGER];
  for (let n = 0; n < 5000; n++) samples.push(n, Math.floor(Math.random() * 2 ** 40));
  for (const n of samples) assert.equal(decimalHeader(n), String(n), `${n}`);
});
