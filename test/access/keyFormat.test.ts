import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { BASE62, checkKeyForm, crc32Ascii, formatKey, KEY_LENGTH, keyPrefix } from '../../src/access/keyFormat.js';
import { hashKey, mintKey } from '../../src/access/keyHash.js';

const csprng = (n: number): Uint8Array => randomBytes(n);

/** A random source that hands out the given arrays, one per call, and records what was asked. */
function scripted(...answers: number[][]): { random: (n: number) => Uint8Array; asked: number[] } {
  const asked: number[] = [];
  return {
    asked,
    random: (n) => {
      asked.push(n);
      return Uint8Array.from(answers.shift() ?? []);
    },
  };
}

/**
 * The known vector, worked out by hand:
 * - the first call asks for 32 bytes and gets 255, 248 (both >= 248: drawn again), then 0..29, which
 *   are below 62 and so are the digits themselves: "0123456789ABCDEFGHIJKLMNOPQRST" (30 characters);
 * - the second call asks for the 2 missing and gets 124 (124 % 62 = 0: "0") and 247 (the largest byte
 *   kept; 247 % 62 = 61: "z"), so the random part is "0123456789ABCDEFGHIJKLMNOPQRST0z";
 * - its CRC-32 (IEEE), from an independent implementation (Python: zlib.crc32(b"0123...ST0z")), is
 *   0x76616942 = 1986095426, which in base 62 is 2·62^5 + 10·62^4 + 25·62^3 + 28·62^2 + 9·62 + 12
 *   (1832265664 + 147763360 + 5958200 + 107632 + 558 + 12), digits 2 A P S 9 C: "2APS9C";
 * - its SHA-256 (hex), from Python's hashlib, is 9c50840b…ee91.
 */
const VECTOR = 'fcd_0123456789ABCDEFGHIJKLMNOPQRST0z2APS9C';

test('a known vector: rejection of bytes from 248, b % 62 below it, the CRC in 6 base62 digits, and its hash', () => {
  const src = scripted([255, 248, ...Array.from({ length: 30 }, (_, i) => i)], [124, 247]);
  const key = formatKey(src.random);
  assert.equal(key, VECTOR);
  assert.deepEqual(src.asked, [32, 2]);
  assert.equal(crc32Ascii('0123456789ABCDEFGHIJKLMNOPQRST0z'), 0x76616942);
  assert.ok(checkKeyForm(VECTOR));
  assert.equal(keyPrefix(VECTOR), 'fcd_0123');
  assert.equal(hashKey(VECTOR), '9c50840b003bedb951aeb0cf9f5c646775e3f5aa2d3f710547cc15ca446cee91');
});

test('a small checksum is zero-padded to 6 digits', () => {
  // 30 zero bytes, then 12 and 31: "000…0CV". Its CRC-32 (Python's zlib.crc32) is 0x317C88 = 3243144
  // = 13·62^3 + 37·62^2 + 42·62 + 48 (3098264 + 142228 + 2604 + 48): digits D b g m, padded to "00Dbgm".
  const key = formatKey(scripted([...new Array<number>(30).fill(0), 12, 31]).random);
  assert.equal(key, `fcd_${'0'.repeat(30)}CV00Dbgm`);
  assert.ok(checkKeyForm(key));
  assert.equal(checkKeyForm(`fcd_${'0'.repeat(30)}CVDbgm00`), false, 'padding goes in front');
});

test('the CRC-32 is zlib\'s (IEEE)', { skip: typeof (zlib as { crc32?: unknown }).crc32 !== 'function' && 'zlib.crc32 needs Node 20.15' }, () => {
  const crc32 = (zlib as unknown as { crc32: (s: string) => number }).crc32;
  for (const text of ['', 'a', '123456789', BASE62, ...Array.from({ length: 200 }, () => formatKey(csprng).slice(4, 36))]) {
    assert.equal(crc32Ascii(text), crc32(text), text);
  }
  assert.equal(crc32Ascii('123456789'), 0xcbf43926); // the standard check value
});

test('keys are 42 characters: fcd_, then base62 only, and pass their own check', () => {
  for (let i = 0; i < 500; i++) {
    const key = formatKey(csprng);
    assert.equal(key.length, 42);
    assert.equal(KEY_LENGTH, 42);
    assert.match(key, /^fcd_[0-9A-Za-z]{38}$/);
    assert.ok(checkKeyForm(key), key);
  }
});

test('every digit is equally likely: each byte below 248 maps to one digit, 4 bytes per digit', () => {
  // Bytes 0, 1, …, 255, 0, 1, … : 992 kept bytes are 4 whole cycles of 0..247, i.e. 16 of each digit.
  let next = 0;
  const cycling = (n: number): Uint8Array => Uint8Array.from({ length: n }, () => next++ % 256);
  const counts = new Map<string, number>();
  for (let k = 0; k < 31; k++) {
    for (const c of formatKey(cycling).slice(4, 36)) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  assert.equal(counts.size, 62);
  for (const [c, n] of counts) assert.equal(n, 16, c);
});

test('uniformity sanity: 2,000 keys from the CSPRNG use all 62 digits, none far off its share', () => {
  const counts = new Map<string, number>();
  for (let k = 0; k < 2000; k++) {
    for (const c of formatKey(csprng).slice(4, 36)) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  assert.equal(counts.size, 62);
  // 64,000 draws: about 1032 per digit, standard deviation about 32; 25 % off is over 8 deviations.
  for (const [c, n] of counts) assert.ok(n > 774 && n < 1290, `${c}: ${n}`);
});

test('a broken random source is refused instead of looping', () => {
  assert.throws(() => formatKey((n) => new Uint8Array(n).fill(255)), /random source/);
  assert.throws(() => formatKey(() => new Uint8Array(0)), /random source/);
});

test('any one changed character fails the check, at every position', () => {
  const keys = [VECTOR, formatKey(csprng), formatKey(csprng)];
  for (const key of keys) {
    for (let i = 0; i < key.length; i++) {
      for (const c of BASE62 + '_-') {
        if (c === key[i]) continue;
        const changed = key.slice(0, i) + c + key.slice(i + 1);
        assert.equal(checkKeyForm(changed), false, `position ${i} -> ${c}`);
      }
    }
  }
});

test('two swapped neighbours in the random part fail the check', () => {
  for (let k = 0; k < 20; k++) {
    const key = formatKey(csprng);
    for (let i = 4; i < 35; i++) {
      if (key[i] === key[i + 1]) continue;
      const swapped = key.slice(0, i) + key[i + 1] + key[i] + key.slice(i + 2);
      assert.equal(checkKeyForm(swapped), false, `${i}`);
    }
  }
});

test('empty, short, long, huge and non-ASCII texts are refused, and fast', () => {
  for (const bad of ['', 'fcd_', VECTOR.slice(0, 41), VECTOR + 'A', ` ${VECTOR.slice(1)}`, VECTOR.toUpperCase(), `FCD_${VECTOR.slice(4)}`]) {
    assert.equal(checkKeyForm(bad), false, bad);
  }
  // Characters whose low byte is a digit: U+0130 ends in 0x30 ("0"), U+FF10 is the full-width "0".
  assert.equal(checkKeyForm(VECTOR.replace('fcd_0', 'fcd_\u0130')), false);
  assert.equal(checkKeyForm(VECTOR.replace('fcd_0', 'fcd_\uff10')), false);
  assert.equal(checkKeyForm(VECTOR.slice(0, 40) + '\u0139'.repeat(2)), false);
  // A surrogate pair in place of two characters keeps the length at 42.
  assert.equal(checkKeyForm(VECTOR.slice(0, 10) + '\u{1F511}' + VECTOR.slice(12)), false);
  assert.equal(checkKeyForm(VECTOR.slice(0, 41) + '\u0000'), false);
  assert.equal(checkKeyForm(undefined as unknown as string), false);
  assert.equal(checkKeyForm(42 as unknown as string), false);
  // The length decides before any character is read: a 16 MB text costs what an empty one does.
  const huge = VECTOR.repeat(400_000);
  const start = performance.now();
  for (let i = 0; i < 100_000; i++) assert.equal(checkKeyForm(huge), false);
  assert.ok(performance.now() - start < 1000, 'a huge text is refused without being read');
});

test('mintKey: a well-formed key from the CSPRNG with its hash and display prefix', () => {
  const a = mintKey();
  const b = mintKey();
  assert.notEqual(a.key, b.key);
  assert.ok(checkKeyForm(a.key));
  assert.equal(a.prefix, a.key.slice(0, 8));
  assert.match(a.prefix, /^fcd_[0-9A-Za-z]{4}$/);
  assert.equal(a.hash, hashKey(a.key));
  assert.match(a.hash, /^[0-9a-f]{64}$/);
});
