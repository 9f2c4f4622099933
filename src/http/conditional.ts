/**
 * HTTP validators and content codings for forecast bodies: strong ETags derived
 * from the run's revision and the normalised query, If-None-Match, and the
 * choice of gzip or brotli from Accept-Encoding.
 */
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { keepRecent } from '../cache/keepRecent.js';
import { base36 } from './headerNumber.js';

export type Coding = 'identity' | 'gzip' | 'br';

/** Bodies smaller than this are sent as they are: compression would not pay. */
export const MIN_COMPRESS_BYTES = 1024;

/** The entity tag, without quotes and coding, of one (run revision, normalised query), from the query's 32-bit hash. */
export const tagBase = (revision: number, keyHash: number): string => `${base36(revision)}-${base36(keyHash)}`;

/**
 * The tag suffix of each compressed coding. A strong tag names one byte sequence, and compressed bytes change
 * with compress()'s settings, so the suffix names the settings too: "gz2" and "br2" for those below; "gz" and
 * "br" tagged the answers of the settings before them (gzip level 6, brotli quality 5). A change of settings
 * takes the next number.
 */
export const CODING_TAGS = { gzip: 'gz2', br: 'br2' } as const;
/** The coding suffixes a tag of this service may carry, earlier settings' included. */
const KNOWN_CODING_TAGS: ReadonlySet<string> = new Set(['gz', 'br', CODING_TAGS.gzip, CODING_TAGS.br]);

/** The entity tag of a representation: the base, marked per content coding. */
export function entityTag(base: string, coding: Coding): string {
  return coding === 'identity' ? `"${base}"` : `"${base}-${CODING_TAGS[coding]}"`;
}

/**
 * Whether If-None-Match names this resource's current representation in any
 * coding (the comparison for If-None-Match is weak, so W/ and the coding suffix
 * are ignored, that of earlier compression settings included: the content is
 * the same).
 */
export function matchesIfNoneMatch(header: string, base: string): boolean {
  for (const raw of header.split(',')) {
    const t = raw.trim();
    if (t === '*') return true;
    const tag = (t.startsWith('W/') ? t.slice(2) : t).replace(/^"|"$/g, '');
    if (tag === base) return true;
    if (tag.startsWith(base) && tag.charCodeAt(base.length) === 45 /* - */ && KNOWN_CODING_TAGS.has(tag.slice(base.length + 1))) return true;
  }
  return false;
}

/**
 * Whether If-Modified-Since holds for something last changed at `modifiedAt` (ms): HTTP dates are whole
 * seconds, so the second it changed in counts as not after.
 */
function unmodifiedSince(header: string, modifiedAt: number): boolean {
  const since = Date.parse(header);
  return Number.isFinite(since) && Math.floor(modifiedAt / 1000) * 1000 <= since;
}

/**
 * Whether a request's validators name what would be sent (304): If-None-Match against `tag` when given,
 * else If-Modified-Since against `modifiedAt` (RFC 9110, section 13.2.2). A forecast answer and an archive alike.
 */
export function notModified(headers: { readonly 'if-none-match'?: string; readonly 'if-modified-since'?: string }, tag: string, modifiedAt: number): boolean {
  const inm = headers['if-none-match'];
  if (inm !== undefined) return matchesIfNoneMatch(inm, tag);
  const ims = headers['if-modified-since'];
  return ims !== undefined && unmodifiedSince(ims, modifiedAt);
}

/** Clients send a handful of distinct Accept-Encoding values, on every request: each is read once. */
const codingOf = keepRecent(64, (acceptEncoding: string) => parseCoding(acceptEncoding));

/** The coding to use for a client's Accept-Encoding: br, then gzip, else identity. */
export function chooseCoding(acceptEncoding: string | undefined): Coding {
  return acceptEncoding ? codingOf(acceptEncoding) : 'identity';
}

function parseCoding(acceptEncoding: string): Coding {
  let br = 0;
  let gzip = 0;
  let star = -1;
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qp === undefined ? 1 : Number(qp.slice(2));
    if (!Number.isFinite(q)) continue;
    if (name === 'br') br = q;
    else if (name === 'gzip' || name === 'x-gzip') gzip = q;
    else if (name === '*') star = q;
  }
  if (star > 0) {
    if (br === 0 && !/\bbr\b/i.test(acceptEncoding)) br = star;
    if (gzip === 0 && !/gzip/i.test(acceptEncoding)) gzip = star;
  }
  if (br > 0 && br >= gzip) return 'br';
  if (gzip > 0) return 'gzip';
  return 'identity';
}

/**
 * Compression settings, for speed: a body that is not kept (a one-off page, a whole-run file) is compressed for
 * each answer. The settings depend only on the body's size, so that a strong tag still names one byte sequence
 * per coding; changing them means a new CODING_TAGS suffix. Measured on a 21 KB page, a 5.7 KB page and a
 * 141 KB whole-run file (docs/performance.md, "Compressed answers"): for pages, brotli at quality 2 took a
 * quarter to a third of the CPU of quality 5 for 2-11 % more bytes, gzip at level 2 a third to a fifth of
 * level 6's for 11-23 % more; for a whole-run file, brotli at quality 1 took half of quality 2's CPU for 7 %
 * more bytes, gzip at level 1 a seventh less than level 2 for 3 % more.
 */
const GZIP_LEVEL = 2;
const BROTLI_QUALITY = 2;
/** Bodies from this size on (whole-run files; pages are at most about 21 KB) get the fastest settings. */
export const LARGE_BODY_BYTES = 64 * 1024;
const LARGE_GZIP_LEVEL = 1;
const LARGE_BROTLI_QUALITY = 1;

export function compress(body: Buffer, coding: 'gzip' | 'br'): Buffer {
  const large = body.length >= LARGE_BODY_BYTES;
  return coding === 'gzip'
    ? gzipSync(body, { level: large ? LARGE_GZIP_LEVEL : GZIP_LEVEL })
    : brotliCompressSync(body, {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: large ? LARGE_BROTLI_QUALITY : BROTLI_QUALITY,
          [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
          [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
        },
      });
}
