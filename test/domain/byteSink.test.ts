import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ByteSink } from '../../src/domain/byteSink.js';
import { scaledText } from '../../src/domain/decimalText.js';

const text = (sink: ByteSink): string => new TextDecoder().decode(sink.take());

test('uint writes decimal digits', () => {
  const s = new ByteSink(4);
  for (const n of [0, 7, 10, 99, 100, 123456789, 2 ** 31, 2 ** 53 - 1]) {
    s.reset();
    s.uint(n);
    assert.equal(text(s), String(n));
  }
});

test('scaled writes plain decimals with trailing zeros dropped', () => {
  const cases: [number, number, string][] = [
    [28135, 2, '281.35'],
    [28130, 2, '281.3'],
    [28100, 2, '281'],
    [-5, 2, '-0.05'],
    [-100, 2, '-1'],
    [0, 3, '0'],
    [1, 6, '0.000001'],
    [-123456789, 6, '-123.456789'],
    [2 ** 50, 6, '1125899906.842624'],
    [42, 0, '42'],
  ];
  const s = new ByteSink(2);
  for (const [v, d, want] of cases) {
    s.reset();
    s.scaled(v, d);
    assert.equal(text(s), want, `${v} / 10^${d}`);
  }
});

test('scaled bytes spell the same text as scaledText and parse to s / 10^d (property)', () => {
  fc.assert(
    fc.property(fc.integer({ min: -(2 ** 50), max: 2 ** 50 }).map(Number), fc.integer({ min: 0, max: 6 }), (v, d) => {
      const s = new ByteSink(1);
      s.scaled(v, d);
      const t = text(s);
      assert.equal(t, scaledText(v, d));
      assert.equal(Number(t), v / 10 ** d);
      assert.doesNotMatch(t, /e/);
    }),
    { numRuns: 5000 },
  );
});

test('ascii, text and bytes append and grow', () => {
  const s = new ByteSink(1);
  s.ascii('ab');
  s.text('é');
  s.bytes(new Uint8Array([0x21]));
  assert.equal(text(s), 'abé!');
});
