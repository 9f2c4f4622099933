import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DATE_TEXT_BYTES, gridBytes } from '../../src/domain/dateTexts.js';
import { MAX_STEP, STEP_MS } from '../../src/domain/run.js';
import { formatBeijing } from '../../src/domain/time.js';

/** The grid's texts as formatted one by one. */
function formatted(issueMs: number): string {
  let all = '';
  for (let k = 0; k <= MAX_STEP; k++) all += formatBeijing(issueMs + k * STEP_MS);
  return all;
}

const texts = (issueMs: number): string => {
  const v = gridBytes(issueMs);
  return String.fromCharCode(...new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
};

test('a grid pieced from its days and times of day is every step formatted one by one', () => {
  for (const issue of [
    Date.UTC(2026, 10, 20, 0),
    Date.UTC(2026, 10, 20, 12),
    // Across a year's end, a leap day and a month's end in Beijing time.
    Date.UTC(2026, 11, 24, 12),
    Date.UTC(2028, 1, 20, 0),
    Date.UTC(2027, 0, 31, 18),
  ]) {
    assert.equal(texts(issue).length, (MAX_STEP + 1) * DATE_TEXT_BYTES);
    assert.equal(texts(issue), formatted(issue), new Date(issue).toISOString());
  }
});

test('any issue time, on the hour or not, gives the texts formatted one by one', () => {
  fc.assert(
    fc.property(fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2199, 0, 1) }), (ms) => {
      assert.equal(texts(ms), formatted(ms));
    }),
    { numRuns: 60 },
  );
});
