/** Which request ids are taken as sent, and the ids made when not. */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, test } from 'node:test';
import { acceptableRequestId, assignRequestId, RequestIds, requestIdOf } from '../../src/ops/requestId.js';

const request = (headers: Record<string, string | undefined>): IncomingMessage => ({ headers }) as unknown as IncomingMessage;

describe('request ids', () => {
  test('1 to 64 characters of A-Z a-z 0-9 . _ - are taken; anything else is not', () => {
    for (const ok of ['a', 'Z', '0', '.', '_', '-', 'abc.DEF_123-x', 'x'.repeat(64), '0f8fad5b-d9cb-469f-a165-70867728950e']) {
      assert.ok(acceptableRequestId(ok), ok);
    }
    for (const bad of ['', 'x'.repeat(65), 'a b', 'a,b', 'a/b', 'a:b', 'ä', 'a\n', 'a\tb', '"a"', 'a=b', 'a@b', 'a+b']) {
      assert.ok(!acceptableRequestId(bad), JSON.stringify(bad));
    }
  });

  test("an API key's text is never taken as an id: it would be echoed and logged", async () => {
    const { mintKey } = await import('../../src/access/keyHash.js');
    const key = mintKey().key;
    assert.ok(!acceptableRequestId(key));
    assert.equal(assignRequestId(request({ 'x-request-id': key }), new RequestIds('k-')), 'k-1');
    // Text of the same length and characters that fails the key's checksum is an id like any other.
    const other = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    assert.ok(acceptableRequestId(other));
  });

  test('new ids: a per-process prefix and a counter, all different', () => {
    const ids = new RequestIds();
    const made = Array.from({ length: 1000 }, () => ids.next());
    assert.equal(new Set(made).size, made.length);
    for (const id of made) {
      assert.match(id, /^[0-9a-z]{8}-[0-9a-z]+$/);
      assert.ok(acceptableRequestId(id));
    }
    assert.notEqual(RequestIds.randomPrefix(), RequestIds.randomPrefix());
    assert.equal(new RequestIds('p-').next(), 'p-1');
  });

  test("a request keeps its id: the one it sent when acceptable, else a new one, assigned once", () => {
    const ids = new RequestIds('t-');
    const sent = request({ 'x-request-id': 'client-1' });
    assert.equal(requestIdOf(sent), undefined);
    assert.equal(assignRequestId(sent, ids), 'client-1');
    assert.equal(assignRequestId(sent, ids), 'client-1');
    assert.equal(requestIdOf(sent), 'client-1');
    const bad = request({ 'x-request-id': 'client 1, client 2' });
    assert.equal(assignRequestId(bad, ids), 't-1');
    assert.equal(assignRequestId(bad, ids), 't-1');
    assert.equal(assignRequestId(request({}), ids), 't-2');
  });
});
