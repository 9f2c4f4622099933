/** 32-bit FNV-1a of a string's UTF-16 code units: cheap, well spread, not cryptographic. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** One 32-bit value mixed into a running hash (a MurmurHash3 block step): for keys made of numbers. */
export function mixInt(h: number, v: number): number {
  let k = Math.imul(v | 0, 0xcc9e2d51);
  k = Math.imul((k << 15) | (k >>> 17), 0x1b873593);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/** The final avalanche of a hash built with mixInt, as an unsigned 32-bit number. */
export function finishHash(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
