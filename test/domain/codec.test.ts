import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { decodeSeries, encodeSeries, openSeries, SERIES_FORMAT } from '../../src/domain/codec.js';
import { renderCsv } from '../../src/domain/csvFormat.js';
import { ELEMENT_COUNT } from '../../src/domain/elements.js';
import { emptySeries, MAX_STEP, type RunSeries } from '../../src/domain/run.js';
import { CHUNK, ENC_PACK1, ENC_PACK2, ENC_SPARSE } from '../../src/domain/seriesView.js';

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

  it('keeps exact a column whose scale rises after a value that the larger scale overflows', () => {
    // 2^49 fits scale 0; 0.5 raises the column to scale 1, where 2^49 * 10 is past the scaled range: raw float64.
    // Infinity never fits a scale; 0.25 after 0.5 raises it once more.
    const cols = [[2 ** 49, 0.5, 1], [1, 0.5, 0.25], [3, Infinity, 1], [NaN, 2 ** 49, 0.5]];
    const s = series([0, 1, 2], (i, e) => cols[e % cols.length]![i]!);
    assertSameSeries(decodeSeries(encodeSeries(s)), s);
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
    assert.throws(() => decodeSeries(blob.subarray(0, blob.length - 1)), /length|truncated/);
    const other = new Uint8Array(blob);
    other[0] = 9;
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

  it('reads format 2 blobs written by the previous encoder, value for value', () => {
    type Fixture = { name: string; blob: string; steps: number[]; columns: (number | string | null)[][] };
    const fixtures = JSON.parse(readFileSync(new URL('../../../test/domain/fixtures/series-format2.json', import.meta.url), 'utf8')) as Fixture[];
    assert.equal(fixtures.length, 3);
    for (const f of fixtures) {
      const blob = Buffer.from(f.blob, 'base64');
      assert.equal(blob[0], 2, f.name);
      const expected = emptySeries(f.steps.length);
      expected.steps.set(f.steps);
      f.columns.forEach((col, e) => col.forEach((v, i) => (expected.columns[e]![i] = v === null ? NaN : v === '-0' ? -0 : Number(v))));
      assertSameSeries(decodeSeries(blob), expected);
      // Written again, it is format 3 and still the same series.
      const again = encodeSeries(expected);
      assert.equal(again[0], SERIES_FORMAT);
      assertSameSeries(decodeSeries(again), expected);
    }
  });

  it('reads format 1 (plain float64) blobs written by earlier versions', () => {
    const s = series([0, 1, 5], (i, e) => (e === 3 ? NaN : i * 1.5 - e));
    const n = s.steps.length;
    const buf = Buffer.alloc(3 + 2 * n + 8 * n * ELEMENT_COUNT);
    buf[0] = 1;
    buf.writeUInt16LE(n, 1);
    let o = 3;
    for (const k of s.steps) (buf.writeUInt16LE(k, o), (o += 2));
    for (const col of s.columns) for (const v of col) (buf.writeDoubleLE(v, o), (o += 8));
    assertSameSeries(decodeSeries(buf), s);
  });
});

/** A column of decimal values as a provider writes them: d decimals, smooth or constant, some missing. */
const decimalColumn = (n: number) =>
  fc.record({
    d: fc.integer({ min: 0, max: 6 }),
    start: fc.integer({ min: -2_000_000_000, max: 2_000_000_000 }),
    steps: fc.array(fc.integer({ min: -5000, max: 5000 }), { minLength: n, maxLength: n }),
    constant: fc.boolean(),
    missing: fc.array(fc.boolean(), { minLength: n, maxLength: n }),
    missingRate: fc.constantFrom(0, 0, 0.1, 1),
    magnitude: fc.constantFrom(1, 1, 1e6, 1e9),
  }).map(({ d, start, steps, constant, missing, missingRate, magnitude }) => {
    const p = 10 ** d;
    let s = start;
    return steps.map((delta, i) => {
      if (missingRate > 0 && (missingRate === 1 || missing[i])) return NaN;
      if (!constant) s += delta * magnitude;
      return Number((s / p).toFixed(d));
    });
  });

const gappedSteps = fc
  .uniqueArray(fc.integer({ min: 0, max: MAX_STEP }), { minLength: 0, maxLength: 300 })
  .map((a) => a.sort((x, y) => x - y));

/** Gapless windows of the grid (what providers deliver), some with one gap before the last record. */
const windowSteps = fc
  .tuple(fc.integer({ min: 0, max: MAX_STEP }), fc.integer({ min: 1, max: MAX_STEP + 1 }), fc.integer({ min: 0, max: 3 }))
  .map(([first, n, gap]) => {
    const count = Math.min(n, MAX_STEP + 1 - first);
    const steps = Array.from({ length: count }, (_, i) => first + i);
    if (gap > 0 && count > 1 && steps[count - 1]! + gap <= MAX_STEP) steps[count - 1]! += gap;
    return steps;
  });

describe('series steps', () => {
  it('gapless and almost gapless windows at any offset come back with their steps (property)', () => {
    fc.assert(
      fc.property(windowSteps, (steps) => {
        const view = openSeries(encodeSeries(series(steps, (i, e) => i + e / 4)));
        assert.deepEqual([...view.steps], steps);
        const out = new Float64Array(steps.length);
        view.values(3, 0, steps.length, out);
        assert.deepEqual([...out], steps.map((_, i) => i + 3 / 4));
      }),
      { numRuns: 300 },
    );
  });
});

describe('a view over a stored blob', () => {
  it('is made without memory outside the heap: no ArrayBuffer of its own, which every scavenge would sweep', () => {
    const steps = Array.from({ length: MAX_STEP + 1 }, (_, k) => k);
    const blob = encodeSeries(series(steps, (i, e) => Number((e * 10 + 20 + Math.sin(i / 9) * 5).toFixed(1))));
    const count = 20_000;
    const before = process.memoryUsage().arrayBuffers;
    const views = Array.from({ length: count }, () => openSeries(blob));
    const grown = process.memoryUsage().arrayBuffers - before;
    // An ArrayBuffer of even 32 bytes per view would be 640 KB.
    assert.ok(grown < count * 16, `${count} views took ${grown} bytes outside the heap`);
    const out = new Float64Array(10);
    views[count - 1]!.values(3, 100, 110, out);
    assert.deepEqual([...out], steps.slice(100, 110).map((i) => Number((50 + Math.sin(i / 9) * 5).toFixed(1))));
  });

  it('reads each blob by its own column heads when blobs with different heads are opened in turn', () => {
    const steps = Array.from({ length: 200 }, (_, k) => k);
    // Different decimals per column, a missing value in one, and a column of large raw numbers in another.
    const blobs = [
      series(steps, (i, e) => Number((e + i / 7).toFixed(1))),
      series(steps, (i, e) => (e === 3 && i === 5 ? NaN : Number((e * 100 + i / 3).toFixed(3)))),
      series(steps, (i, e) => (e === 7 ? 1e300 / (i + 1) : i * 1000 + e)),
    ].map((s) => ({ s, blob: encodeSeries(s) }));
    for (let round = 0; round < 3; round++) {
      for (const { s, blob } of [...blobs, ...blobs.slice().reverse()]) assertSameSeries(openSeries(blob).toSeries(), s);
    }
  });
});

describe('a view copied into memory of its own', () => {
  it('decodes like the original once the original buffer is overwritten, for any series and offset (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(gappedSteps, windowSteps).chain((steps) =>
          fc.tuple(
            fc.constant(steps),
            fc.array(fc.oneof(decimalColumn(steps.length), fc.array(fc.double(), { minLength: steps.length, maxLength: steps.length })), {
              minLength: ELEMENT_COUNT,
              maxLength: ELEMENT_COUNT,
            }),
            fc.integer({ min: 0, max: 64 }),
          ),
        ),
        ([steps, cols, at]) => {
          const s = series(steps, (i, e) => cols[e]![i]!);
          const blob = new Uint8Array(encodeSeries(s));
          const view = openSeries(blob);
          const arena = new Uint8Array(8 * at + view.footprint + 8).fill(0xa5);
          const copy = view.copyTo(arena.subarray(8 * at, 8 * at + view.footprint));
          blob.fill(0xff); // the store's buffer reused: the copy must not look at it
          assertSameSeries(copy.toSeries(), s);
          assert.ok(arena.subarray(8 * at + view.footprint).every((b) => b === 0xa5), 'nothing written past the footprint');
        },
      ),
      { numRuns: 200 },
    );
  });

  it('refuses a target that is too small or not 8-aligned', () => {
    const view = openSeries(encodeSeries(series([0, 1, 2], (i, e) => i + e)));
    const arena = new Uint8Array(view.footprint + 8);
    assert.throws(() => view.copyTo(arena.subarray(0, view.footprint - 1)), /too small/);
    assert.throws(() => view.copyTo(arena.subarray(4, 4 + view.footprint)), /misaligned/);
  });
});

describe('compact encoding of decimal columns', () => {
  it('round-trips decimals, negatives, missing values, constant columns, extreme magnitudes, gapped runs (property)', () => {
    fc.assert(
      fc.property(
        gappedSteps.chain((steps) =>
          fc.tuple(fc.constant(steps), fc.array(decimalColumn(steps.length), { minLength: ELEMENT_COUNT, maxLength: ELEMENT_COUNT })),
        ),
        ([steps, cols]) => {
          const s = series(steps, (i, e) => cols[e]![i]!);
          assertSameSeries(decodeSeries(encodeSeries(s)), s);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a view decodes any record range of any column like the whole series, and its text parses to the same double (property)', () => {
    fc.assert(
      fc.property(
        gappedSteps.filter((s) => s.length > 0).chain((steps) =>
          fc.tuple(
            fc.constant(steps),
            fc.array(decimalColumn(steps.length), { minLength: ELEMENT_COUNT, maxLength: ELEMENT_COUNT }),
            fc.integer({ min: 0, max: steps.length - 1 }),
            fc.integer({ min: 0, max: steps.length }),
            fc.integer({ min: 0, max: ELEMENT_COUNT - 1 }),
          ),
        ),
        ([steps, cols, a, b, e]) => {
          const from = Math.min(a, b);
          const to = Math.max(a, b);
          const view = openSeries(encodeSeries(series(steps, (i, c) => cols[c]![i]!)));
          const out = new Float64Array(to - from);
          view.values(e, from, to, out);
          // The CSV of the range spells each value; it must parse back to the same double.
          const lines = new TextDecoder().decode(renderCsv(view, 0, [e], from, to)).trim().split('\n').slice(1);
          assert.equal(lines.length, to - from);
          for (let i = from; i < to; i++) {
            const v = cols[e]![i]!;
            const cell = lines[i - from]!.split(',')[1]!;
            assert.ok(Object.is(out[i - from], v), `values ${i}: ${out[i - from]} vs ${v}`);
            if (Number.isNaN(v)) assert.equal(cell, '');
            else {
              assert.ok(Object.is(Number(cell), v), `text ${cell} vs ${v}`);
              assert.doesNotMatch(cell, /e/);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('picks the smallest chunk encoding: packed differences, packed differences of differences, or sparse varints', () => {
    const steps = Array.from({ length: 4 * CHUNK }, (_, k) => k);
    const encodings = (f: (i: number) => number): number[] =>
      openSeries(encodeSeries(series(steps, (i) => f(i)))).chunkEncodings().map((n) => n / ELEMENT_COUNT);
    // A noisy walk: small differences of any sign.
    assert.deepEqual(encodings((i) => Number((280 + Math.sin(i * 1.7) * 3 + Math.cos(i * 0.9)).toFixed(2))), [0, 4, 0]);
    // A steady ramp: constant differences.
    assert.deepEqual(encodings((i) => 101_325 - 12 * i), [0, 0, 4]);
    // Still for hours, then jumps: mostly zero differences, some wide.
    assert.deepEqual(encodings((i) => (i % 96 < 40 ? 0 : Math.floor(i / 7) * 9_000_017)), [4, 0, 0]);
    // Differences too wide to pack (2^24 and more) go to the sparse varints.
    assert.deepEqual(encodings((i) => (i % 2) * 2 ** 40 + i), [4, 0, 0]);
    assert.equal(ENC_SPARSE, 0);
    assert.equal(ENC_PACK1, 1);
    assert.equal(ENC_PACK2, 2);
  });

  it('round-trips every encoding over any record range, with missing values, at the widest packed widths (property)', () => {
    // Shapes that make each encoding win somewhere, with differences around the 24-bit packing limit.
    const shaped = (n: number) =>
      fc.record({
        shape: fc.constantFrom('walk', 'ramp', 'curve', 'spikes', 'wide'),
        d: fc.integer({ min: 0, max: 6 }),
        start: fc.integer({ min: -1_000_000_000, max: 1_000_000_000 }),
        jump: fc.constantFrom(1, 3, 2 ** 22, 2 ** 23 - 1, 2 ** 23, 2 ** 24, 2 ** 30, 2 ** 45),
        seed: fc.integer({ min: 1, max: 1000 }),
        missing: fc.constantFrom(0, 0, 0.05, 0.5, 0.97),
      }).map(({ shape, d, start, jump, seed, missing }) => {
        const p = 10 ** d;
        let s = start;
        let step = 0;
        return Array.from({ length: n }, (_, i) => {
          const r = Math.sin(i * seed) * 0.5 + 0.5;
          if (shape === 'walk') s += Math.round((r - 0.5) * 2 * jump);
          else if (shape === 'ramp') s += jump;
          else if (shape === 'curve') s += step += r < 0.5 ? 1 : -1;
          else if (shape === 'spikes') s += r > 0.9 ? jump : 0;
          else s = start + (i % 2) * jump;
          if (Math.abs(s) > 2 ** 49) s = Math.sign(s) * 2 ** 49;
          return missing > 0 && Math.cos(i * seed * 7) * 0.5 + 0.5 < missing ? NaN : Number((s / p).toFixed(d));
        });
      });
    fc.assert(
      fc.property(
        fc.oneof(windowSteps, gappedSteps).chain((steps) =>
          fc.tuple(
            fc.constant(steps),
            fc.array(shaped(steps.length), { minLength: ELEMENT_COUNT, maxLength: ELEMENT_COUNT }),
            fc.nat(),
            fc.nat(),
          ),
        ),
        ([steps, cols, a, b]) => {
          const s = series(steps, (i, e) => cols[e]![i]!);
          const view = openSeries(encodeSeries(s));
          assertSameSeries(view.toSeries(), s);
          const from = Math.min(a, b) % (steps.length + 1);
          const to = from + (Math.max(a, b) % (steps.length + 1 - from));
          const out = new Float64Array(to - from);
          for (let e = 0; e < ELEMENT_COUNT; e++) {
            view.values(e, from, to, out);
            for (let i = from; i < to; i++) assert.ok(Object.is(out[i - from], s.columns[e]![i]), `column ${e} record ${i}`);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('names a damaged chunk: an unknown encoding, a width over 24 bits, packed bits cut short', () => {
    const steps = Array.from({ length: CHUNK }, (_, k) => k);
    const s = series(steps, (i, e) => Number((10 + e + Math.sin(i) * 2).toFixed(1)));
    const blob = new Uint8Array(encodeSeries(s));
    const view = openSeries(blob);
    assert.deepEqual(view.chunkEncodings(), [0, ELEMENT_COUNT, 0]);
    // Column 0's chunk opens the data: after the format, n, the first step, 15 heads and 15 one-byte chunk lengths.
    const at = 3 + 2 * ELEMENT_COUNT;
    assert.equal(blob[at]! >> 5, ENC_PACK1);
    const out = new Float64Array(CHUNK);
    for (const [head, pattern] of [
      [(3 << 5) | 1, /bad chunk head/],
      [(ENC_PACK1 << 5) | 25, /bad chunk head/],
      [(ENC_PACK1 << 5) | 24, /truncated/],
    ] as const) {
      const bad = new Uint8Array(blob);
      bad[at] = head;
      assert.throws(() => openSeries(bad).values(0, 0, CHUNK, out), pattern);
    }
  });

  it('a damaged blob decodes or is refused with a named error, never anything else (property)', () => {
    const steps = Array.from({ length: 2 * CHUNK + 7 }, (_, k) => k + 3);
    const kinds = [
      (i: number, e: number) => Number((280 + e + Math.sin(i / 5) * 3).toFixed(2)), // packed
      (i: number) => 1000 + 7 * i, // ramps
      (i: number, e: number) => (i % 96 < 40 ? 0 : i * 90_001 + e), // sparse
      (i: number) => (i % 11 === 0 ? NaN : i / 3), // raw, with gaps
    ];
    const blobs = kinds.map((f) => encodeSeries(series(steps, (i, e) => (e % 5 === 4 && i % 13 === 0 ? NaN : f(i, e)))));
    fc.assert(
      fc.property(
        fc.nat({ max: blobs.length - 1 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        (which, flips, cut) => {
          const bad = new Uint8Array(blobs[which]!);
          for (const [at, b] of flips) bad[at % bad.length] = b;
          const blob = cut ? bad.subarray(0, bad.length - 1 - (flips[0]![0] % 16)) : bad;
          try {
            openSeries(blob).toSeries();
          } catch (err) {
            assert.ok(err instanceof Error && /series blob|unknown series format|series steps/.test(err.message), String(err));
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('keeps a smooth two-decimal run under 2 bytes per value', () => {
    const steps = Array.from({ length: MAX_STEP + 1 }, (_, k) => k);
    const s = series(steps, (i, e) => Number((280 + e * 10 + 5 * Math.sin(i / 20 + e)).toFixed(2)));
    const bytes = encodeSeries(s).length;
    const perValue = bytes / (steps.length * ELEMENT_COUNT);
    assert.ok(perValue < 2, `${perValue} bytes per value`);
    assertSameSeries(decodeSeries(encodeSeries(s)), s);
  });
});
