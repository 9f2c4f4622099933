/** The strict head reader: what it takes, and everything it leaves to Node's parser. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { INCOMPLETE, MAX_HEAD_BYTES, OTHER, readRequestHead, type RequestHead } from '../../src/http/requestHead.js';

const read = (text: string): ReturnType<typeof readRequestHead> => readRequestHead(Buffer.from(text, 'latin1'));
const head = (text: string): RequestHead => {
  const h = read(text);
  assert.ok(typeof h === 'object', `not taken: ${JSON.stringify(text)}`);
  return h;
};
const PLAIN = 'GET /api/v1/forecast?farm_id=WF_A&elements=t2m,tr&start=2026-11-21T08:00:00%2B08:00 HTTP/1.1\r\nHost: x\r\n\r\n';

describe('readRequestHead', () => {
  test('takes a plain GET: the target as sent, headers by lower-case name and trimmed, where the head ends', () => {
    const text = 'GET /api/v1/forecast?farm_id=WF_A HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-API-Key: \t abc \t\r\nAccept-Encoding: gzip, br\r\n\r\n';
    const h = head(text + 'GET /next');
    assert.equal(h.url, '/api/v1/forecast?farm_id=WF_A');
    assert.deepEqual(h.headers, { host: '127.0.0.1:8080', 'x-api-key': 'abc', 'accept-encoding': 'gzip, br' });
    assert.equal(h.end, text.length);
    assert.equal(h.close, false);
    assert.equal(head(PLAIN).url.includes('%2B08:00'), true);
  });

  test('every header name comes lower-cased, the common ones in any spelling and their near misses alike', () => {
    const common = ['Host', 'User-Agent', 'ACCEPT', 'accept-Encoding', 'Accept-Language', 'Authorization', 'If-None-Match', 'If-Modified-Since', 'X-Request-Id', 'X-Forwarded-For', 'X-Forwarded-Proto', 'X-Real-IP', 'Cache-Control', 'Pragma', 'Referer', 'Origin', 'Cookie', 'X-API-Key', 'TE', 'Via', 'Forwarded'];
    // Each common name with one byte changed (a letter moved by one, or a symbol a letter's case would not fold).
    const near = common.map((n, i) => {
      const at = i % n.length;
      const c = n.charCodeAt(at);
      const other = c === 45 ? 95 : /[a-y]/i.test(n[at]!) ? c + 1 : 65;
      return n.slice(0, at) + String.fromCharCode(other) + n.slice(at + 1);
    });
    const names = [...common, ...near, 'x^y', 'x~y', 'X_Y', 'x-custom'];
    const text = `GET / HTTP/1.1\r\n${names.map((n, i) => `${n}: v${i}\r\n`).join('')}\r\n`;
    const h = head(text);
    assert.deepEqual(Object.keys(h.headers), names.map((n) => n.toLowerCase()));
    assert.deepEqual(Object.values(h.headers), names.map((_, i) => `v${i}`));
  });

  test('Connection: close asks for the connection to close; keep-alive is the default', () => {
    assert.equal(head('GET / HTTP/1.1\r\nHost: x\r\nConnection: Close\r\n\r\n').close, true);
    assert.equal(head('GET / HTTP/1.1\r\nHost: x\r\nconnection: keep-alive\r\n\r\n').close, false);
  });

  test('a head not all there is INCOMPLETE; one longer than the limit is OTHER', () => {
    assert.equal(read(PLAIN.slice(0, -1)), INCOMPLETE);
    assert.equal(read('GET / HTTP/1.1\r\nHost: x\r\n'), INCOMPLETE);
    const long = `GET /?q=${'a'.repeat(MAX_HEAD_BYTES)} HTTP/1.1\r\nHost: x\r\n\r\n`;
    assert.equal(read(long), OTHER);
    assert.equal(read(long.slice(0, MAX_HEAD_BYTES + 10)), OTHER);
  });

  const others: [string, string][] = [
    ['another method', 'HEAD / HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a lower-case method', 'get / HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['POST', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n'],
    ['HTTP/1.0', 'GET / HTTP/1.0\r\nHost: x\r\n\r\n'],
    ['HTTP/2 preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'],
    ['an absolute-form target', 'GET http://x/ HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a fragment in the target', 'GET /a#b HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a quote in the target', 'GET /a"b HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a byte over 127 in the target', 'GET /\xe9 HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['two spaces after the method', 'GET  / HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a body by length', 'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello'],
    ['a body by length, any case', 'GET / HTTP/1.1\r\nHost: x\r\ncOnTeNt-LeNgTh: 0\r\n\r\n'],
    ['a chunked body', 'GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['an upgrade', 'GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n'],
    ['Expect', 'GET / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n'],
    ['another Connection option', 'GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, TE\r\n\r\n'],
    ['no Host', 'GET / HTTP/1.1\r\nAccept: */*\r\n\r\n'],
    ['two Hosts', 'GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n'],
    ['a repeated header', 'GET / HTTP/1.1\r\nHost: x\r\nX-API-Key: a\r\nx-api-key: b\r\n\r\n'],
    ['space before the colon', 'GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n'],
    ['a folded line', 'GET / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n'],
    ['a bare LF ending a line', 'GET / HTTP/1.1\r\nHost: x\nX-A: a\r\n\r\n'],
    ['a bare LF ending the request line', 'GET / HTTP/1.1\nHost: x\r\n\r\n'],
    ['a control character in a value', 'GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n'],
    ['a bare CR in a value', 'GET / HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n'],
    ['a byte over 127 in a value', 'GET / HTTP/1.1\r\nHost: x\r\nX-A: caf\xe9\r\n\r\n'],
    ['a name that is no token', 'GET / HTTP/1.1\r\nHost: x\r\nX(A): a\r\n\r\n'],
    ['a name that is a prototype', 'GET / HTTP/1.1\r\nHost: x\r\n__proto__: a\r\n\r\n'],
    ['a line without a colon', 'GET / HTTP/1.1\r\nHost: x\r\nnonsense\r\n\r\n'],
  ];
  for (const [what, text] of others) {
    test(`leaves to Node: ${what}`, () => assert.equal(read(text), OTHER));
  }

  test('too many header lines are Node’s', () => {
    const lines = (n: number): string => Array.from({ length: n }, (_, i) => `X-${i}: v\r\n`).join('');
    // With Host: 64 lines taken, 65 not.
    assert.equal(typeof read(`GET / HTTP/1.1\r\nHost: x\r\n${lines(63)}\r\n`), 'object');
    assert.equal(read(`GET / HTTP/1.1\r\nHost: x\r\n${lines(64)}\r\n`), OTHER);
  });
});
