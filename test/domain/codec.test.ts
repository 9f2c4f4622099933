import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { decodeSeries, encodeSeries } from '../../src/domain/codec.js';
import { ELEMENT_COUNT } from '../../src/domain/elements.js';
import { emptySeries, MAX_STEP, type RunSeries } from '../../src/domain/run.js';

function assertSameSeries(a: RunSeries, b: RunSeries): void {
  assert.deepEqual([...a.steps], [...b.steps]);
  assert.equal(a.columns.length, ELEMENT_COUNT);
  assert.equal(b.columns.length, ELEMENT_COUNT);
  for (let e = 0; e < ELEMENT_COUNT; e++) {
    const x = a.columns[e]!;
    const y = b.columns[e]!;
    assert.equal(x.length, y.length);
    for (let i = 0; i < x.length; i++) {
      assert.ok(Object.is(x[i], y[i]), `column ${e} record ${i}: ${x[i]} vs ${y[i]}`);
    }
  }
}

function series(steps: number[], value: (i: number, e: number) => number): RunSeries {
  const s = emptySeries(steps.length);
  steps.forEach((k, i) => {
    s.steps[i] = k;
    for (let e = 0; e < ELEMENT_COUNT; e++) s.columns[e]![i] = value(i, e);
  });
  return s;
}

describe('encodeSeries / decodeSeries', () => {
  it('round-trips a full run exactly', () => {
    const steps = Array.from({ length: MAX_STEP + 1 }, (_, k) => k);
    const s = series(steps, (i, e) => (e * 1000 + i) / 7 - 300);
    const back = decodeSeries(encodeSeries(s));
    assertSameSeries(back, s);
  });

  it('keeps NaN (missing), -0, extremes and gapped steps', () => {
    const specials = [NaN, -0, 0, 5e-324, -1.7976931348623157e308, 0.1, 281.35, -273.15];
    const s = series([0, 3, 17, 96, 1440], (i, e) => specials[(i + e) % specials.length]!);
    const back = decodeSeries(encodeSeries(s));
    assertSameSeries(back, s);
    assert.ok(Number.isNaN(back.columns[0]![0]));
    assert.ok(Object.is(back.columns[0]![1], -0));
    assert.ok(Object.is(back.columns[1]![0], -0));
    assert.deepEqual([...back.steps], [0, 3, 17, 96, 1440]);
  });

  it('round-trips zero records', () => {
    const blob = encodeSeries(emptySeries(0));
    const back = decodeSeries(blob);
    assert.equal(back.steps.length, 0);
    assert.equal(back.columns.length, ELEMENT_COUNT);
    for (const c of back.columns) assert.equal(c.length, 0);
  });

  it('decodes from a view into a larger buffer', () => {
    const s = series([1, 2], (i, e) => i + e / 10);
    const blob = encodeSeries(s);
    const big = new Uint8Array(blob.length + 13);
    big.set(blob, 5);
    assertSameSeries(decodeSeries(big.subarray(5, 5 + blob.length)), s);
  });

  it('decodes a copy that is not a Buffer', () => {
    const s = series([0, 8], (i, e) => -i - e);
    const copy = new Uint8Array(encodeSeries(s));
    assertSameSeries(decodeSeries(copy), s);
  });

  it('rejects an unknown format or a wrong length', () => {
    const blob = new Uint8Array(encodeSeries(series([0], () => 1)));
    assert.throws(() => decodeSeries(blob.subarray(0, blob.length - 1)), /length/);
    const other = new Uint8Array(blob);
    other[0] = 2;
    assert.throws(() => decodeSeries(other), /format/);
    assert.throws(() => decodeSeries(new Uint8Array(0)), /format/);
  });

  it('round-trips any series (property)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: MAX_STEP }), { maxLength: 50 }).chain((raw) => {
          const steps = raw.sort((a, b) => a - b);
          return fc.tuple(
            fc.constant(steps),
            fc.array(fc.array(fc.double(), { minLength: steps.length, maxLength: steps.length }), {
              minLength: ELEMENT_COUNT,
              maxLength: ELEMENT_COUNT,
            }),
          );
        }),
        ([steps, cols]) => {
          const s = series(steps, (i, e) => cols[e]![i]!);
          assertSameSeries(decodeSeries(encodeSeries(s)), s);
        },
      ),
    );
  });
});
