/**
 * A strict reader of HTTP/1.1 request heads, for the wire front (wireFront.ts).
 *
 * It recognises only the plainest request there is: `GET <origin-form target>
 * HTTP/1.1`, CRLF line ends, token header names each sent once, values of
 * visible ASCII, a Host, no body (neither Content-Length nor Transfer-Encoding),
 * no Upgrade or Expect, and Connection at most `keep-alive` or `close`. Anything
 * else, however valid, is OTHER: the front then hands the connection to Node's
 * own HTTP server, whose parser decides. So this reader never has to be right
 * about an unusual request, only never to take one Node would read differently:
 * where a request ends (the blank line, as there is no body), and what its
 * target and headers are.
 */

/** The head is not all there yet. */
export const INCOMPLETE = 0;
/** Not a request this reader takes: Node's server is to read it. */
export const OTHER = 1;

/** Heads longer than this are Node's to read (and to refuse past its own limit). */
export const MAX_HEAD_BYTES = 8192;
/** More header lines than this: Node's. */
const MAX_HEADERS = 64;

export interface RequestHead {
  /** The request target exactly as sent. */
  readonly url: string;
  /** Header values by lower-case name, surrounding whitespace trimmed, as Node's request presents them. */
  readonly headers: Record<string, string>;
  /** The client asked for the connection to be closed after the answer. */
  readonly close: boolean;
  /** Offset just past the blank line that ends the head. */
  readonly end: number;
}

const CR = 13;
const LF = 10;
const SP = 32;
const HTAB = 9;
const COLON = 58;

/** RFC 9110 tchar. */
const TOKEN = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~") TOKEN[c.charCodeAt(0)] = 1;
/** Bytes of an origin-form target taken here: RFC 3986 unreserved, sub-delims, ':', '@', '/', '?' and '%'. */
const TARGET = new Uint8Array(256);
for (const c of "-._~!$&'()*+,;=:@/?%") TARGET[c.charCodeAt(0)] = 1;
for (let c = 48; c <= 57; c++) TOKEN[c] = TARGET[c] = 1;
for (let c = 65; c <= 90; c++) TOKEN[c] = TARGET[c] = TOKEN[c + 32] = TARGET[c + 32] = 1;

const GET = [71, 69, 84, SP]; // 'GET '
const VERSION = [SP, 72, 84, 84, 80, 47, 49, 46, 49, CR, LF]; // ' HTTP/1.1\r\n'

/** Headers whose presence makes a request Node's: a body, a protocol switch, or an interim answer. */
const REFUSED = new Set(['content-length', 'transfer-encoding', 'upgrade', 'expect', 'http2-settings', '__proto__']);

function matches(buf: Uint8Array, at: number, bytes: readonly number[]): boolean {
  for (let i = 0; i < bytes.length; i++) if (buf[at + i] !== bytes[i]) return false;
  return true;
}

const latin1 = (buf: Buffer, from: number, to: number): string => buf.toString('latin1', from, to);

const BLANK_LINE = Buffer.from('\r\n\r\n', 'latin1');

/**
 * Header names clients commonly send, by length: a name read is compared with these byte by byte, ignoring
 * case, and one that matches is the constant string, with no text cut out of the buffer and lower-cased (two
 * strings a header: most of a head's reading for a client that sends a few headers).
 */
const KNOWN_NAMES = new Map<number, [string, Uint8Array][]>();
for (const name of [
  'host', 'user-agent', 'accept', 'accept-encoding', 'accept-language', 'connection', 'authorization',
  'if-none-match', 'if-modified-since', 'x-request-id', 'x-forwarded-for', 'x-forwarded-proto', 'x-real-ip',
  'cache-control', 'pragma', 'referer', 'origin', 'cookie', 'x-api-key', 'te', 'via', 'forwarded',
]) {
  if (!KNOWN_NAMES.has(name.length)) KNOWN_NAMES.set(name.length, []);
  KNOWN_NAMES.get(name.length)!.push([name, Buffer.from(name, 'latin1')]);
}

/** The lower-case name at buf[from, to). */
function headerName(buf: Buffer, from: number, to: number): string {
  const known = KNOWN_NAMES.get(to - from);
  if (known !== undefined) {
    for (const [name, bytes] of known) {
      let i = 0;
      for (; i < bytes.length; i++) {
        const c = buf[from + i]!;
        if ((c >= 65 && c <= 90 ? c + 32 : c) !== bytes[i]) break;
      }
      if (i === bytes.length) return name;
    }
  }
  return latin1(buf, from, to).toLowerCase();
}

/** Reads the head at the start of buf (what follows it, a pipelined request, is left alone). */
export function readRequestHead(buf: Buffer): RequestHead | typeof INCOMPLETE | typeof OTHER {
  // The blank line first, within the limit: a head that is not all there is not looked at.
  const blank = buf.indexOf(BLANK_LINE);
  if (blank < 0 || blank + BLANK_LINE.length > MAX_HEAD_BYTES) return buf.length >= MAX_HEAD_BYTES ? OTHER : INCOMPLETE;
  const end = blank + 4;
  if (!matches(buf, 0, GET)) return OTHER;
  let at = GET.length;
  if (buf[at] !== 47 /* / */) return OTHER;
  const targetFrom = at;
  while (TARGET[buf[at]!] === 1) at++;
  if (!matches(buf, at, VERSION)) return OTHER;
  const url = latin1(buf, targetFrom, at);
  at += VERSION.length;
  const headers: Record<string, string> = {};
  let count = 0;
  let close = false;
  let host = false;
  while (at < blank + 2) {
    if (++count > MAX_HEADERS) return OTHER;
    const nameFrom = at;
    while (TOKEN[buf[at]!] === 1) at++;
    if (at === nameFrom || buf[at] !== COLON) return OTHER;
    const name = headerName(buf, nameFrom, at);
    at++;
    while (buf[at] === SP || buf[at] === HTAB) at++;
    const valueFrom = at;
    let valueTo = at;
    for (;;) {
      const c = buf[at]!;
      if (c === CR) break;
      if (c > SP && c < 127) valueTo = at + 1;
      else if (c !== SP && c !== HTAB) return OTHER;
      at++;
    }
    if (buf[at + 1] !== LF) return OTHER;
    at += 2;
    if (REFUSED.has(name) || Object.hasOwn(headers, name)) return OTHER;
    const value = latin1(buf, valueFrom, valueTo);
    if (name === 'connection') {
      const v = value.toLowerCase();
      if (v === 'close') close = true;
      else if (v !== 'keep-alive') return OTHER;
    } else if (name === 'host') {
      host = true;
    }
    headers[name] = value;
  }
  // Node refuses an HTTP/1.1 request without Host (400): its answer, not ours.
  if (!host) return OTHER;
  return { url, headers, close, end };
}
