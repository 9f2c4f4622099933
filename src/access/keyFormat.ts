/**
 * The form of an API key (INTERFACE.md section 10): `fcd_` + 32 base62
 * characters drawn at random + 6 base62 characters of the CRC-32 of those 32,
 * 42 characters in all. Base62 digits are `0-9A-Za-z` in that order.
 *
 * Pure: no I/O, no clock; randomness comes in as bytes from the caller (a
 * CSPRNG in production, fixed bytes in tests). The checksum only catches typing
 * and copying mistakes cheaply, before any lookup; it protects nothing.
 *
 * The CRC-32 (IEEE, the one of zlib) is computed here from a 1 KB table rather
 * than with zlib.crc32: that function only exists from Node 20.15 on while this
 * package runs on any Node 20, it would keep this module from being pure, and
 * checkKeyForm can feed the table straight from the text's char codes without
 * slicing or encoding the 32 characters first.
 */

export const KEY_PREFIX = 'fcd_';
export const KEY_RANDOM_CHARS = 32;
export const KEY_CHECK_CHARS = 6;
export const KEY_LENGTH = KEY_PREFIX.length + KEY_RANDOM_CHARS + KEY_CHECK_CHARS; // 42
/** `fcd_` and the first 4 random characters: enough to tell keys apart in a list, far too little to guess one. */
export const KEY_DISPLAY_CHARS = KEY_PREFIX.length + 4;

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Bytes from 248 up are drawn again: 248 = 4 × 62, so b % 62 of the bytes kept hits every digit equally often. */
const REJECT_FROM = 248;
/**
 * A CSPRNG rejects a byte with probability 1/32, so needing this many rounds
 * has a chance far below 1e-30; reaching it means the source is broken
 * (constant, or handing back fewer bytes than asked), and looping on would hang.
 */
const MAX_ROUNDS = 32;

/** ASCII code -> base62 digit value, -1 for anything else. */
const DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE62.length; i++) DIGIT[BASE62.charCodeAt(i)] = i;

/** The reflected CRC-32 table of polynomial 0x04C11DB7 (0xEDB88320 reversed). */
const CRC_TABLE = new Int32Array(256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  CRC_TABLE[n] = c;
}

/** CRC-32 of text[start, end), each char taken as one byte (callers pass ASCII only). */
function crc32Chars(text: string, start: number, end: number): number {
  let crc = -1;
  for (let i = start; i < end; i++) crc = CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff]! ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

/** CRC-32 (IEEE) of an ASCII text, as an unsigned 32-bit number. */
export const crc32Ascii = (text: string): number => crc32Chars(text, 0, text.length);

/** The check characters: the CRC as 6 base62 digits, most significant first (62^6 > 2^32, so 6 always suffice). */
function checkChars(crc: number): string {
  let out = '';
  for (let i = 0; i < KEY_CHECK_CHARS; i++) {
    out = BASE62[crc % 62]! + out;
    crc = Math.floor(crc / 62);
  }
  return out;
}

/** A new key from the random source; `random(n)` returns n random bytes. */
export function formatKey(random: (n: number) => Uint8Array): string {
  let body = '';
  for (let round = 0; body.length < KEY_RANDOM_CHARS; round++) {
    if (round === MAX_ROUNDS) throw new Error('the random source keeps giving too few usable bytes');
    const bytes = random(KEY_RANDOM_CHARS - body.length);
    for (let i = 0; i < bytes.length && body.length < KEY_RANDOM_CHARS; i++) {
      const b = bytes[i]!;
      if (b < REJECT_FROM) body += BASE62[b % 62];
    }
  }
  return KEY_PREFIX + body + checkChars(crc32Ascii(body));
}

/**
 * Whether the text has the form of a key: length, prefix, digits and checksum.
 * Runs on every request before any lookup, so it allocates nothing and looks at
 * no more than 42 characters whatever it is given.
 */
export function checkKeyForm(text: string): boolean {
  if (typeof text !== 'string' || text.length !== KEY_LENGTH || !text.startsWith(KEY_PREFIX)) return false;
  const bodyEnd = KEY_PREFIX.length + KEY_RANDOM_CHARS;
  for (let i = KEY_PREFIX.length; i < bodyEnd; i++) {
    const c = text.charCodeAt(i);
    if (c > 127 || DIGIT[c]! < 0) return false;
  }
  let check = 0;
  for (let i = bodyEnd; i < KEY_LENGTH; i++) {
    const c = text.charCodeAt(i);
    const d = c > 127 ? -1 : DIGIT[c]!;
    if (d < 0) return false;
    check = check * 62 + d; // at most 62^6 - 1, exact in a double
  }
  return check === crc32Chars(text, KEY_PREFIX.length, bodyEnd);
}

/** The display prefix of a well-formed key: `fcd_` and its first 4 random characters. */
export const keyPrefix = (key: string): string => key.slice(0, KEY_DISPLAY_CHARS);
