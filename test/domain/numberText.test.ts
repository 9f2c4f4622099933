import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { numberText } from '../../src/domain/numberText.js';
import { DECIMAL } from '../../src/ingest/fault.js';

function roundTrips(v: number): void {
  const s = numberText(v);
  assert.ok(!/[eE]/.test(s), `${v} -> ${s} has an exponent`);
  assert.ok(DECIMAL.test(s), `${v} -> ${s} is not a plain decimal`);
  assert.ok(Object.is(Number(s), v), `${v} -> ${s} -> ${Number(s)}`);
}

describe('numberText', () => {
  it('writes ordinary values as String does', () => {
    assert.equal(numberText(0), '0');
    assert.equal(numberText(281.35), '281.35');
    assert.equal(numberText(-3), '-3');
    assert.equal(numberText(0.5), '0.5');
    assert.equal(numberText(101325), '101325');
  });

  it('keeps the sign of -0', () => {
    assert.equal(numberText(-0), '-0');
    assert.ok(Object.is(Number(numberText(-0)), -0));
  });

  it('writes tiny and huge values without an exponent', () => {
    assert.equal(numberText(1e-7), '0.0000001');
    assert.equal(numberText(-1.5e-7), '-0.00000015');
    assert.equal(numberText(1e21), '1000000000000000000000');
    assert.equal(numberText(1.2345e22), '12345000000000000000000');
    assert.equal(numberText(-0.000001), '-0.000001');
    assert.equal(numberText(123456789012345680000), '123456789012345680000');
  });

  it('round-trips chosen values', () => {
    const values = [
      0, -0, 1, -1, 0.1, 0.2, 0.1 + 0.2, 1 / 3, -2 / 3, 1e-7, 1.5e-7, 1e-6, -0.000001, 1e20, 1e21, 1e22, -1e21,
      123456789012345680000, 1.7976931348623157e308, -1.7976931348623157e308, 5e-324, -5e-324, 2.2250738585072014e-308,
      Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, Number.EPSILON, 281.35, 101325.5, -273.15, 9.999999999999999e-8,
      4.94e-322, 1.2345678901234567e-100, 9.87654321e200,
    ];
    for (const v of values) roundTrips(v);
  });

  it('round-trips every finite double (property)', () => {
    fc.assert(fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), roundTrips), { numRuns: 5000 });
  });

  it('round-trips integers of every size (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }), (b) => roundTrips(Number(b))),
    );
  });
});
