import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ByteSink } from '../../src/domain/byteSink.js';
import { putScaled } from '../../src/domain/recordWriter.js';

const scaled = (s: number, d: number): string => {
  const buf = new Uint8Array(32);
  return new TextDecoder().decode(buf.subarray(0, putScaled(buf, 0, s, d)));
};

test('putScaled writes plain decimals with trailing zeros dropped', () => {
  const cases: [number, number, string][] = [
    [28135, 2, '281.35'],
    [28130, 2, '281.3'],
    [28100, 2, '281'],
    [-5, 2, '-0.05'],
    [-100, 2, '-1'],
    [0, 3, '0'],
    [1, 6, '0.000001'],
    [-123456789, 6, '-123.456789'],
    [2 ** 31, 2, '21474836.48'],
    [2 ** 50, 6, '1125899906.842624'],
    [-(2 ** 50) + 1, 0, '-1125899906842623'],
    [42, 0, '42'],
  ];
  for (const [v, d, want] of cases) assert.equal(scaled(v, d), want, `${v} / 10^${d}`);
});

test('putScaled text parses to s / 10^d, never with an exponent, on both sides of 2^31 (property)', () => {
  fc.assert(
    fc.property(fc.integer({ min: -(2 ** 50), max: 2 ** 50 }), fc.integer({ min: 0, max: 6 }), (v, d) => {
      const t = scaled(v, d);
      assert.equal(Number(t), v / 10 ** d);
      assert.doesNotMatch(t, /e/);
      if (d > 0 && t.includes('.')) assert.doesNotMatch(t, /0$/);
    }),
    { numRuns: 5000 },
  );
});

test('ascii, text and bytes append and grow', () => {
  const s = new ByteSink(1);
  s.ascii('ab');
  s.text('é');
  s.bytes(new Uint8Array([0x21]));
  assert.equal(new TextDecoder().decode(s.take()), 'abé!');
});
