import assert from 'node:assert/strict';
import { Socket } from 'node:net';
import { describe, test } from 'node:test';
import { RequestIds } from '../../src/ops/requestId.js';
import { WireRequest, WireResponse, type WireLink } from '../../src/http/wireExchange.js';

/** The link's end of an exchange: what the response hands it to write (the wire front writes it to the socket). */
function exchange(opts: { keepAliveMs?: number; close?: boolean; requestId?: string } = {}) {
  const sent: { head: string; body: Buffer | string | undefined }[] = [];
  const link: WireLink = {
    socket: new Socket(),
    keepAliveTimeoutMs: () => opts.keepAliveMs ?? 5000,
    send: (_res, head, body) => sent.push({ head, body }),
  };
  const headers: Record<string, string> = { host: 'test' };
  if (opts.requestId !== undefined) headers['x-request-id'] = opts.requestId;
  const req = new WireRequest({ url: '/api/v1/forecast?farm_id=A', headers, close: opts.close ?? false, end: 0 }, link.socket);
  const answered: number[] = [];
  const res = new WireResponse(req, link, { ids: new RequestIds('t'), answered: (_r, status) => answered.push(status) }, opts.close ?? false);
  return { res, sent, answered };
}

/** The head's lines, the Date line's value blanked. */
const lines = (head: string): string[] =>
  head
    .split('\r\n')
    .map((l) => (l.startsWith('Date: ') ? 'Date: -' : l));

describe('WireResponse', () => {
  test('writes the status line, the headers in order, the request id after them, then Date, Connection, Keep-Alive and Content-Length', () => {
    const { res, sent, answered } = exchange({ requestId: 'abc-1' });
    res.writeHead(200, ['etag', '"x"', 'content-type', 'application/json']).end(Buffer.from('{"a":1}'));
    assert.equal(sent.length, 1);
    assert.deepEqual(lines(sent[0]!.head), [
      'HTTP/1.1 200 OK',
      'etag: "x"',
      'content-type: application/json',
      'x-request-id: abc-1',
      'Date: -',
      'Connection: keep-alive',
      'Keep-Alive: timeout=5',
      'Content-Length: 7',
      '',
      '',
    ]);
    assert.match(sent[0]!.head, /\r\nDate: [A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT\r\n/);
    assert.deepEqual(answered, [200]);
  });

  test('a list that names its own length, date and connection gets none added; a 304 names no length', () => {
    const { res, sent } = exchange({ requestId: 'r2', close: true });
    res.writeHeadPlaced(200, ['Content-Length', '3', 'date', 'then', 'x-request-id', 'r2']).end('abc');
    assert.deepEqual(lines(sent[0]!.head), ['HTTP/1.1 200 OK', 'Content-Length: 3', 'date: then', 'x-request-id: r2', 'Connection: close', '', '']);
    const second = exchange({ requestId: 'r3', keepAliveMs: 0 });
    second.res.writeHead(304, ['etag', '"y"']).end();
    assert.deepEqual(lines(second.sent[0]!.head), ['HTTP/1.1 304 Not Modified', 'etag: "y"', 'x-request-id: r3', 'Date: -', 'Connection: keep-alive', '', '']);
    assert.equal(second.sent[0]!.body, undefined);
  });

  test('headers set before writeHead keep their place, and Connection: close ends the connection after the answer', () => {
    const { res, sent } = exchange({ requestId: 'r4' });
    res.setHeader('Connection', 'close');
    res.setHeader('ratelimit', 'x');
    res.writeHead(429, ['ratelimit', 'y', 'content-type', 'text/plain']).end('no');
    assert.deepEqual(lines(sent[0]!.head), [
      'HTTP/1.1 429 Too Many Requests',
      'Connection: close',
      'ratelimit: y',
      'content-type: text/plain',
      'x-request-id: r4',
      'Date: -',
      'Content-Length: 2',
      '',
      '',
    ]);
    assert.equal(res.last, true);
  });

  test('a header value with a control character, or a name that is not a token, is refused before anything is written', () => {
    for (const value of ['a\r\nset-cookie: x', 'a\nb', 'tab\tok\u0000', 'del\u007f', 'wide\u0100']) {
      const { res, sent } = exchange();
      assert.throws(() => res.writeHead(200, ['x-thing', value]).end('z'), /invalid character in header x-thing/);
      assert.equal(sent.length, 0);
    }
    const { res, sent } = exchange();
    assert.throws(() => res.writeHead(200, ['bad name', 'v']).end('z'), /invalid header name "bad name"/);
    assert.equal(sent.length, 0);
    // A tab and Latin-1 letters are allowed, as Node allows them.
    const ok = exchange();
    ok.res.writeHead(200, ['x-thing', 'a\tb é']).end('z');
    assert.match(ok.sent[0]!.head, /\r\nx-thing: a\tb é\r\n/);
  });

  test('headers given apart follow the list, the request id after both; with headers set before, they merge as one list', () => {
    const { res, sent } = exchange({ requestId: 'r5' });
    const own = ['etag', '"z"', 'content-length', '2'];
    res.writeHeadWith(200, own, ['ratelimit', 'r=1']).end('ok');
    assert.deepEqual(lines(sent[0]!.head), ['HTTP/1.1 200 OK', 'etag: "z"', 'content-length: 2', 'ratelimit: r=1', 'x-request-id: r5', 'Date: -', 'Connection: keep-alive', 'Keep-Alive: timeout=5', '', '']);
    assert.deepEqual(own, ['etag', '"z"', 'content-length', '2']);
    const merged = exchange({ requestId: 'r6' });
    merged.res.setHeader('Vary', 'Origin');
    merged.res.setHeader('ratelimit', 'old');
    merged.res.writeHeadWith(200, ['etag', '"w"'], ['ratelimit', 'new']).end('ab');
    assert.deepEqual(lines(merged.sent[0]!.head), ['HTTP/1.1 200 OK', 'Vary: Origin', 'ratelimit: new', 'etag: "w"', 'x-request-id: r6', 'Date: -', 'Connection: keep-alive', 'Keep-Alive: timeout=5', 'Content-Length: 2', '', '']);
    // A further header is checked as the others are.
    const bad = exchange();
    assert.throws(() => bad.res.writeHeadWith(200, [], ['x-limit', 'a\nb']).end('z'), /invalid character in header x-limit/);
    assert.equal(bad.sent.length, 0);
  });

  test('a body given as text is measured in bytes', () => {
    const { res, sent } = exchange();
    res.writeHead(200, ['content-type', 'text/plain; charset=utf-8']).end('é€');
    assert.ok(lines(sent[0]!.head).includes('Content-Length: 5'));
  });
});
