import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ByteSink, asciiBytes } from '../../src/domain/byteSink.js';
import { encodeSeries, openSeries } from '../../src/domain/codec.js';
import { ELEMENT_COUNT } from '../../src/domain/elements.js';
import { numberText } from '../../src/domain/numberText.js';
import { putScaled, tableText, writeRecords, type RecordStyle } from '../../src/domain/recordWriter.js';
import { emptySeries } from '../../src/domain/run.js';

/** One value per line after the date_time, so that each can be read back alone. */
const LINES: RecordStyle = {
  open: new Uint8Array(0),
  afterDate: asciiBytes('|'),
  field: Array.from({ length: ELEMENT_COUNT }, () => new Uint8Array(0)),
  missing: asciiBytes('null'),
  close: asciiBytes('\n'),
  separator: new Uint8Array(0),
};

function rendered(values: readonly number[]): string[] {
  const s = emptySeries(values.length);
  values.forEach((v, i) => {
    s.steps[i] = i;
    s.columns[0]![i] = v;
    for (let e = 1; e < ELEMENT_COUNT; e++) s.columns[e]![i] = NaN;
  });
  const sink = new ByteSink(16);
  writeRecords(sink, LINES, openSeries(encodeSeries(s)), Date.UTC(2026, 10, 20), [0], 0, values.length);
  return new TextDecoder().decode(sink.take()).split('\n').slice(0, -1).map((line) => line.slice(line.indexOf('|') + 1));
}

test('record values on both sides of the small-value text table read back exactly (property)', () => {
  // Scaled integers up to 65,535 are written from a table per count of decimals, larger ones digit by digit.
  const scaled = fc.oneof(fc.integer({ min: -70_000, max: 70_000 }), fc.constantFrom(0, 65_535, 65_536, -65_535, -65_536));
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 6 }), fc.array(fc.option(scaled, { nil: null, freq: 8 }), { minLength: 1, maxLength: 200 }), (d, column) => {
      const values = column.map((s) => (s === null ? NaN : s / 10 ** d));
      const texts = rendered(values);
      assert.equal(texts.length, values.length);
      texts.forEach((t, i) => {
        const v = values[i]!;
        if (Number.isNaN(v)) assert.equal(t, 'null');
        else assert.equal(t, numberText(v), `${column[i]} / 10^${d}`);
      });
    }),
    { numRuns: 400 },
  );
});

test('the table edge and the largest six-decimal entries are spelled in full', () => {
  assert.deepEqual(rendered([6553.5, 6553.6, -6553.5, 0.065535, 0.065536, 65535, 65536, -0.000001]), [
    '6553.5',
    '6553.6',
    '-6553.5',
    '0.065535',
    '0.065536',
    '65535',
    '65536',
    '-0.000001',
  ]);
});

test('large whole numbers (pressure in Pa, accumulated radiation) are spelled in full, by thousands and three digits', () => {
  // Whole numbers from 65,536 up to 65,535,999 are written as their thousands from the text table and three
  // more digits; from 65,536,000 on, digit by digit.
  const edges = [65_536, 65_999, 66_000, 100_000, 101_325, 100_007, 674_040, 999_999, 1_000_000, 1_000_001, 9_999_000];
  const more = [65_535_999, 65_536_000, 65_536_001, 2 ** 31 - 1, 2 ** 31, 2 ** 40 + 7];
  const values = [...edges, ...more, ...edges.map((n) => -n), ...more.map((n) => -n)];
  assert.deepEqual(rendered(values), values.map((n) => String(n)));
  fc.assert(
    fc.property(fc.array(fc.integer({ min: -70_000_000, max: 70_000_000 }), { minLength: 1, maxLength: 200 }), (column) => {
      assert.deepEqual(rendered(column), column.map((n) => String(n)));
    }),
    { numRuns: 300 },
  );
});

test('every entry of every small-value text table is spelled as its number (lengths 1 to 8 included)', () => {
  // The table holds each text and its length in one pair of words: every entry is checked, not a sample.
  for (let d = 0; d <= 6; d++) {
    for (let first = 0; first < 65_536; first += 1441) {
      const values = Array.from({ length: Math.min(1441, 65_536 - first) }, (_, i) => (first + i) / 10 ** d);
      const texts = rendered(values);
      for (let i = 0; i < values.length; i++) {
        if (texts[i] !== numberText(values[i]!)) assert.fail(`${first + i} / 10^${d}: ${texts[i]} instead of ${numberText(values[i]!)}`);
      }
    }
  }
});

test('a raw column (values beyond six decimals) is written by its shortest round-trip text', () => {
  const values = [0.1 + 0.2, 1e-7, -123456.7890123, NaN, 5e-324, 65535.0000001];
  assert.deepEqual(rendered(values), values.map((v) => (Number.isNaN(v) ? 'null' : numberText(v))));
});

test('field fragments of any length up to twelve bytes, mixed in one record, are written whole (property)', () => {
  // Fragments of at most four bytes (CSV's comma) are written as one word, longer ones as three: a record
  // that mixes both must still spell every fragment in full.
  const fragment = fc.string({ unit: fc.constantFrom('a', ',', '"', ':', 'z'), minLength: 0, maxLength: 12 });
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.integer({ min: 0, max: ELEMENT_COUNT - 1 }), { minLength: 1, maxLength: ELEMENT_COUNT }),
      fc.array(fragment, { minLength: ELEMENT_COUNT, maxLength: ELEMENT_COUNT }),
      fc.array(fc.integer({ min: -70_000, max: 70_000 }), { minLength: 3 * ELEMENT_COUNT, maxLength: 3 * ELEMENT_COUNT }),
      (chosen, fragments, ints) => {
        const elements = [...chosen].sort((a, b) => a - b);
        const style: RecordStyle = { ...LINES, afterDate: asciiBytes('|'), field: fragments.map(asciiBytes), close: asciiBytes('\n') };
        const s = emptySeries(3);
        for (let i = 0; i < 3; i++) {
          s.steps[i] = i;
          for (let e = 0; e < ELEMENT_COUNT; e++) s.columns[e]![i] = ints[i * ELEMENT_COUNT + e]! / 10;
        }
        const sink = new ByteSink(16);
        writeRecords(sink, style, openSeries(encodeSeries(s)), Date.UTC(2026, 10, 20), elements, 0, 3);
        const lines = new TextDecoder().decode(sink.take()).split('\n').slice(0, -1);
        assert.equal(lines.length, 3);
        lines.forEach((line, i) => {
          const expected = elements.map((e) => fragments[e]! + numberText(s.columns[e]![i]!)).join('');
          assert.equal(line.slice(line.indexOf('|') + 1), expected);
        });
      },
    ),
    { numRuns: 300 },
  );
});

test('every text of the scaled-value tables is what putScaled writes, for every count of decimals', () => {
  const bytes = new Uint8Array(32);
  for (let d = 0; d <= 6; d++) {
    for (let s = 0; s < 65_536; s++) {
      const len = putScaled(bytes, 0, s, d);
      const want = String.fromCharCode(...bytes.subarray(0, len));
      if (tableText(s, d) !== want) assert.fail(`${s} / 10^${d}: table "${tableText(s, d)}", putScaled "${want}"`);
    }
  }
});
