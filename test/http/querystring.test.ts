/** Reading query pairs: in place where nothing needs decoding, ASCII escapes decoded by hand, the rest by the engine. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eachPair, MALFORMED, parseQuery } from '../../src/http/querystring.js';

type Pair = [string | null, string | null | undefined, string];

function pairs(qs: string): Pair[] {
  const out: Pair[] = [];
  eachPair(qs, (key, value, rawKey) => {
    out.push([key, value, rawKey]);
  });
  return out;
}

/** What a form decoder gives for one key or value: '+' a space, then percent-decoding; null when malformed. */
function reference(s: string): string | null {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

function referencePairs(qs: string): Pair[] {
  const out: Pair[] = [];
  for (const part of qs.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawKey = eq < 0 ? part : part.slice(0, eq);
    out.push([reference(rawKey), eq < 0 ? undefined : reference(part.slice(eq + 1)), rawKey]);
  }
  return out;
}

test('a forecast query: plain pairs as they are, the offset of a date-time decoded', () => {
  assert.deepEqual(pairs('farm_id=WF_A&start=2026-11-20T08:00:00%2B08:00&elements=t2m,rh2m&size=24'), [
    ['farm_id', 'WF_A', 'farm_id'],
    ['start', '2026-11-20T08:00:00+08:00', 'start'],
    ['elements', 't2m,rh2m', 'elements'],
    ['size', '24', 'size'],
  ]);
});

test("'+' is a space, escapes decode in either case, and a key may be escaped too", () => {
  assert.deepEqual(pairs('a+b=c+%2b+%2B&%66arm_id=%3a%3A'), [
    ['a b', 'c + +', 'a+b'],
    ['farm_id', '::', '%66arm_id'],
  ]);
});

test('UTF-8 escapes are put together; malformed escapes are null, in the key or in the value', () => {
  assert.deepEqual(pairs('name=%C3%A9t%C3%A9&bad=%E9&short=%4&end=%&hex=%G1&%ZZ=1&k'), [
    ['name', 'été', 'name'],
    ['bad', null, 'bad'],
    ['short', null, 'short'],
    ['end', null, 'end'],
    ['hex', null, 'hex'],
    [null, '1', '%ZZ'],
    ['k', undefined, 'k'],
  ]);
});

test('empty pairs are skipped; an empty value is an empty text', () => {
  assert.deepEqual(pairs('&&a=&=b&&'), [
    ['a', '', 'a'],
    ['', 'b', ''],
  ]);
});

test('every query of random pieces reads as a form decoder reads it', () => {
  const pieces = ['a', 'Z', '0', '9', 'f', '=', '&', '+', '%', '%2B', '%2b', '%3A', '%20', '%41', '%C3%A9', '%E2%82%AC', '%C3', '%G', '%4', '%%', '%7F', '%80', '-', ','];
  let seed = 12345;
  const random = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (let round = 0; round < 5000; round++) {
    let qs = '';
    for (let k = random(16); k > 0; k--) qs += pieces[random(pieces.length)];
    assert.deepEqual(pairs(qs), referencePairs(qs), qs);
  }
});

test('parseQuery names the first malformed key or value', () => {
  const q = parseQuery('a=1&b=%E9&c=%zz');
  assert.equal(q.a, '1');
  assert.equal(q[MALFORMED], 'b');
});
