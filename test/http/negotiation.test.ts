/** Content negotiation helpers: the coding from Accept-Encoding, the CSV preference from Accept. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { prefersCsv } from '../../src/http/accept.js';
import { chooseCoding } from '../../src/http/conditional.js';

test('chooseCoding: br before gzip, q-values, x-gzip, the wildcard, and the same answer when asked again', () => {
  const cases: [string | undefined, string][] = [
    [undefined, 'identity'],
    ['', 'identity'],
    ['identity', 'identity'],
    ['gzip', 'gzip'],
    ['x-gzip', 'gzip'],
    ['gzip, deflate, br', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['BR, GZIP', 'br'],
    ['gzip;q=0, br;q=0', 'identity'],
    ['*', 'br'],
    ['*;q=0.5, br;q=0', 'gzip'],
    ['deflate', 'identity'],
    ['gzip;q=abc', 'identity'],
  ];
  for (let round = 0; round < 2; round++) {
    for (const [header, want] of cases) assert.equal(chooseCoding(header), want, `${header} (round ${round})`);
  }
  // Far more distinct values than are remembered (300 against 64), twice over: every answer stays right.
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < 300; i++) {
      const gzipQ = `0.${String(i + 1).padStart(3, '0')}`;
      const brQ = i % 2 === 1 ? '1' : '0';
      assert.equal(chooseCoding(`gzip;q=${gzipQ}, br;q=${brQ}`), i % 2 === 1 ? 'br' : 'gzip');
    }
  }
});

test('prefersCsv: only a text/csv entry at least as wanted as application/json', () => {
  assert.equal(prefersCsv(undefined), false);
  assert.equal(prefersCsv('*/*'), false);
  assert.equal(prefersCsv('application/json'), false);
  assert.equal(prefersCsv('text/csv'), true);
  assert.equal(prefersCsv('TEXT/CSV'), true);
  assert.equal(prefersCsv('text/csv;q=0.5, application/json'), false);
  assert.equal(prefersCsv('application/json;q=0.4, text/csv;q=0.5'), true);
  assert.equal(prefersCsv('text/csv;q=0'), false);
  assert.equal(prefersCsv('text/csvx'), false);
});
