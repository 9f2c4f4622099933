import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { formatDuration, parseDuration } from '../../src/settings/duration.js';

describe('parseDuration', () => {
  it('reads a number with a unit into milliseconds', () => {
    const cases: [string, number][] = [
      ['90s', 90_000],
      ['3h', 10_800_000],
      ['250ms', 250],
      ['1.5m', 90_000],
      ['2d', 172_800_000],
      ['1.5s', 1500],
      ['0s', 0],
      ['0', 0],
      ['1.1s', 1100],
    ];
    for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
  });

  it('refuses a bare number, spaces, signs, other units, empty text and fractions of a millisecond', () => {
    for (const text of ['10', '00', '0.0', '5 s', ' 5s', '5s ', '-1s', '+1s', '1w', '', 's', '1S', '1H', '1.s', '.5s', '1e3ms', '1.5ms', '0.0001s', '1,5s', '10sec', '1h30m']) {
      assert.equal(parseDuration(text), undefined, JSON.stringify(text));
    }
  });

  it('refuses an amount too large for a whole number of milliseconds', () => {
    assert.equal(parseDuration('999999999999999999d'), undefined);
  });
});

describe('formatDuration', () => {
  it('writes the largest unit that divides the value', () => {
    assert.equal(formatDuration(10_000), '10s');
    assert.equal(formatDuration(90_000), '90s');
    assert.equal(formatDuration(120_000), '2m');
    assert.equal(formatDuration(86_400_000), '1d');
    assert.equal(formatDuration(1500), '1500ms');
    assert.equal(formatDuration(0), '0s');
  });

  it('is read back by parseDuration as the same milliseconds', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 10 ** 12 }), (ms) => parseDuration(formatDuration(ms)) === ms));
  });
});
