/** Content negotiation helpers: the coding from Accept-Encoding, the CSV preference from Accept. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync, gzipSync } from 'node:zlib';
import { prefersCsv } from '../../src/http/accept.js';
import { chooseCoding, CODING_TAGS, compress, entityTag, LARGE_BODY_BYTES, matchesIfNoneMatch, notModified } from '../../src/http/conditional.js';

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
  // At equal weight the one listed first.
  assert.equal(prefersCsv('application/json, text/csv'), false);
  assert.equal(prefersCsv('text/csv, application/json'), true);
  assert.equal(prefersCsv('application/json;q=0, text/csv'), true);
});

/** Brotli at `quality` with the other parameters compress() sets (text mode, size hint). */
const brotliAt = (body: Buffer, quality: number): Buffer =>
  brotliCompressSync(body, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: quality,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
    },
  });

test('compress: the fast settings of docs/performance.md (gzip level 2, brotli quality 2), each decoding to the body', () => {
  const body = Buffer.from(
    Array.from({ length: 400 }, (_, i) => `{"date_time":"2026-11-20T${String(i % 24).padStart(2, '0')}:00:00+08:00","t2m":${(i * 7) % 300 / 10}}`).join(','),
  );
  const gz = compress(body, 'gzip');
  assert.deepEqual(gunzipSync(gz), body);
  assert.deepEqual(gz, gzipSync(body, { level: 2 }));
  assert.notDeepEqual(gz, gzipSync(body), 'not the zlib default (level 6)');
  const br = compress(body, 'br');
  assert.deepEqual(brotliDecompressSync(br), body);
  assert.deepEqual(br, brotliAt(body, 2));
  assert.notDeepEqual(br, brotliAt(body, 5));
  // The tags of these bytes: a change of the settings above needs new suffixes (a strong tag names its bytes).
  assert.deepEqual(CODING_TAGS, { gzip: 'gz2', br: 'br2' });
});

test('entityTag: one tag per coding, the compressed ones marked with the compression settings', () => {
  assert.equal(entityTag('3-1fa', 'identity'), '"3-1fa"');
  assert.equal(entityTag('3-1fa', 'gzip'), '"3-1fa-gz2"');
  assert.equal(entityTag('3-1fa', 'br'), '"3-1fa-br2"');
});

test('notModified: If-None-Match when given (If-Modified-Since then ignored), else If-Modified-Since to the second', () => {
  const at = Date.parse('Sun, 29 Nov 2026 01:00:00 GMT') + 700;
  const date = 'Sun, 29 Nov 2026 01:00:00 GMT';
  const tag = 'r1-abc';
  assert.equal(notModified({ 'if-modified-since': date }, tag, at), true, 'the second it changed in is not after');
  assert.equal(notModified({ 'if-modified-since': 'Sun, 29 Nov 2026 00:59:59 GMT' }, tag, at), false);
  assert.equal(notModified({ 'if-modified-since': 'not a date' }, tag, at), false);
  assert.equal(notModified({ 'if-none-match': '"other"', 'if-modified-since': date }, tag, at), false, 'a tag given decides');
  assert.equal(notModified({ 'if-none-match': entityTag(tag, 'identity') }, tag, at + 10_000), true);
  assert.equal(notModified({}, tag, at), false);
});

test('matchesIfNoneMatch: any coding of the resource, earlier compression settings included, and nothing else', () => {
  const base = '3-1fa';
  for (const inm of ['"3-1fa"', 'W/"3-1fa"', '"3-1fa-gz2"', '"3-1fa-br2"', '"3-1fa-gz"', '"3-1fa-br"', '*', '"x", "3-1fa-br2"', 'W/"3-1fa-gz"']) {
    assert.equal(matchesIfNoneMatch(inm, base), true, inm);
  }
  for (const inm of ['"3-1f"', '"3-1fab"', '"3-1fa-"', '"3-1fa-zz"', '"3-1fa-gz3"', '"3-1fa-gz2x"', '"3-1fagz2"', '"4-1fa-gz2"', '""']) {
    assert.equal(matchesIfNoneMatch(inm, base), false, inm);
  }
});

test('compress: a body from LARGE_BODY_BYTES on (a whole-run file) gets the fastest settings, gzip level 1 and brotli quality 1', () => {
  const line = '2026-11-20T08:15:00+08:00,285.5,81.2,101325,0.4,0,3.25,271.5,4.5,5.25,5.75,6.5,262.5,674040,0,0\n';
  const text = line.repeat(Math.ceil(LARGE_BODY_BYTES / line.length));
  const large = Buffer.from(text);
  assert.ok(large.length >= LARGE_BODY_BYTES);
  assert.deepEqual(compress(large, 'gzip'), gzipSync(large, { level: 1 }));
  assert.deepEqual(compress(large, 'br'), brotliAt(large, 1));
  assert.deepEqual(gunzipSync(compress(large, 'gzip')), large);
  assert.deepEqual(brotliDecompressSync(compress(large, 'br')), large);
  // One byte under the bound: a page's settings.
  const under = large.subarray(0, LARGE_BODY_BYTES - 1);
  assert.deepEqual(compress(under, 'gzip'), gzipSync(under, { level: 2 }));
  assert.deepEqual(compress(under, 'br'), brotliAt(under, 2));
});
