/**
 * A whole number as a header value (Content-Length), made without V8's
 * number-to-string cache.
 *
 * String(n) and `${n}` keep their result in that cache until another number
 * takes its slot, so each answer of a size not seen just before leaves behind a
 * string that outlives a few scavenges and dies in the old generation. Mixed
 * load at 10,000 sites sends answers of thousands of sizes: those strings grew
 * the old generation by about 0.2 MB a second, which was most of what started
 * its mark-compacts once the run cache and the garbage-collection metric no
 * longer did (docs/performance.md). toFixed(0) gives the same digits for any
 * whole number below 10^21 and makes a fresh string that dies young.
 */
export const decimalHeader = (n: number): string => n.toFixed(0);
