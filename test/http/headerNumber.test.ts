/** Header numbers written from digit-group tables: the same digits as the engine's conversions. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { base36, decimalHeader } from '../../src/http/headerNumber.js';

/** Whole numbers from 0 to the largest safe integer: the edges of each digit group, and random ones of every size. */
function samples(): number[] {
  const out = [0, 1, 9, 10, 35, 36, 99, 100, 999, 1000, 1001, 1295, 1296, 1297, 21_099, 65_535, 140_000];
  for (let p = 1; p < 53; p++) out.push(2 ** p - 1, 2 ** p, 2 ** p + 1);
  for (let k = 1; k < 16; k++) out.push(10 ** k - 1, 10 ** k, 36 ** Math.min(k, 10) - 1);
  out.push(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER - 1, 9_007_199_254_740_000, 8_796_093_021_999);
  for (let n = 0; n < 5000; n++) out.push(n, Math.floor(Math.random() * 2 ** 32), Math.floor(Math.random() * 2 ** (1 + (n % 53))));
  return out.filter((n) => n <= Number.MAX_SAFE_INTEGER);
}

test('a whole number as a header value has the digits String gives it, from 0 to the largest safe integer', () => {
  for (const n of samples()) assert.equal(decimalHeader(n), String(n), `${n}`);
});

test('a whole number in base 36 has the digits toString(36) gives it, from 0 to the largest safe integer', () => {
  for (const n of samples()) assert.equal(base36(n), n.toString(36), `${n}`);
});

test('every multiple of a digit group less one, near the limit, keeps its last group', () => {
  // Where n / 1000 rounds up to the next whole number, the quotient is corrected down.
  for (let k = 2 ** 43; k < 2 ** 43 + 2000; k++) {
    const n = k * 1000 - 1;
    if (n > Number.MAX_SAFE_INTEGER) break;
    assert.equal(decimalHeader(n), String(n));
  }
  for (let k = 2 ** 42; k < 2 ** 42 + 2000; k++) assert.equal(base36(k * 1296 - 1), (k * 1296 - 1).toString(36));
});
