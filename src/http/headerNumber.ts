/**
 * Whole numbers as header texts (Content-Length, the parts of an entity tag),
 * made from tables of digit groups without V8's number-to-string conversions.
 *
 * String(n) and `${n}` keep their result in V8's number-to-string cache until
 * another number takes its slot, so each answer of a size not seen just before
 * leaves behind a string that outlives a few scavenges and dies in the old
 * generation. Mixed load at 10,000 sites sends answers of thousands of sizes:
 * those strings grew the old generation by about 0.2 MB a second, which was
 * most of what started its mark-compacts once the run cache and the
 * garbage-collection metric no longer did (docs/performance.md). toFixed(0) and
 * toString(36) avoid the cache but take the engine's conversion for doubles
 * (a 32-bit hash above 2^31 is one), which divides with `fmod`: with the entity
 * tag they were about 1.5 % of a mixed answer's CPU. Groups from a table give
 * the same digits, in fresh strings that die young.
 */
const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';

/** For a base b and a width w: the text of each n < b^w without leading zeros, and with them (w digits). */
interface Groups {
  readonly size: number;
  readonly plain: readonly string[];
  readonly padded: readonly string[];
}

function groups(base: number, width: number): Groups {
  const size = base ** width;
  const plain: string[] = [];
  const padded: string[] = [];
  for (let n = 0; n < size; n++) {
    let text = '';
    for (let k = 0, m = n; k < width; k++, m = Math.floor(m / base)) text = DIGITS[m % base]! + text;
    padded.push(text);
    plain.push(text.replace(/^0+(?=.)/, ''));
  }
  return { size, plain, padded };
}

const DECIMAL = groups(10, 3);
const BASE36 = groups(36, 2);

/** The digits of the whole number 0 <= n <= 2^53 - 1 in g's base. */
function wholeText(n: number, g: Groups): string {
  const size = g.size;
  if (n < size) return g.plain[n]!;
  let text = '';
  while (n >= size) {
    let q = Math.floor(n / size);
    let r = n - q * size;
    // n / size is rounded: above 2^43 the quotient may come out one too high.
    if (r < 0) {
      q--;
      r += size;
    }
    text = g.padded[r]! + text;
    n = q;
  }
  return g.plain[n]! + text;
}

/** A whole number as a header value: the same digits as String(n), below 2^53. */
export const decimalHeader = (n: number): string => wholeText(n, DECIMAL);

/** A whole number in base 36: the same digits as n.toString(36), below 2^53. */
export const base36 = (n: number): string => wholeText(n, BASE36);
