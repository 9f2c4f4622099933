/**
 * Query string parsing that notices malformed percent-encoding (the framework's
 * default parser silently keeps such text). A repeated key yields an array.
 */
export const MALFORMED = Symbol('malformed query parameter');

/**
 * The only accepted spelling of a number parameter: a plain decimal. The
 * validator would also coerce hex, exponent, padded and Infinity texts.
 */
export const PLAIN_DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;

export type ParsedQuery = Record<string, string | string[]> & { [MALFORMED]?: string };

/** The value of hexadecimal digit c, or -1. */
function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  c |= 32;
  return c >= 97 && c <= 102 ? c - 87 : -1;
}

/**
 * qs[start, end), whose first '+' or '%' is at `first`, as sent -> its text ('+' is a space), or null when its
 * percent-encoding is malformed. Escapes of ASCII characters (the `%2B` of a date-time's offset) are decoded
 * here, anything else by decodeURIComponent, which also judges what is malformed: per forecast request the
 * engine's decoder cost about as much as the rest of the query's reading.
 */
function decodeParam(qs: string, start: number, end: number, first: number): string | null {
  let out = '';
  let last = start;
  for (let i = first; i < end; i++) {
    const c = qs.charCodeAt(i);
    if (c === 43 /* + */) {
      out += qs.slice(last, i) + ' ';
      last = i + 1;
    } else if (c === 37 /* % */) {
      const high = i + 2 < end ? hexDigit(qs.charCodeAt(i + 1)) : -1;
      const low = high < 0 ? -1 : hexDigit(qs.charCodeAt(i + 2));
      if (low < 0) return null;
      const code = (high << 4) | low;
      // A byte of a multi-byte UTF-8 sequence: the engine's decoder puts the sequence together, or refuses it.
      if (code >= 0x80) return decodeUtf8(qs.slice(start, end));
      out += qs.slice(last, i) + String.fromCharCode(code);
      i += 2;
      last = i + 1;
    }
  }
  return out + qs.slice(last, end);
}

function decodeUtf8(s: string): string | null {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/**
 * Calls visit(key, value, rawKey) for each non-empty `&`-separated pair, in
 * order: key and value decoded (null where the percent-encoding is malformed),
 * value undefined when the pair has no "=". Stops when visit returns false.
 * The one reading of pairs, for the framework's parser and the direct path.
 */
export function eachPair(
  qs: string,
  visit: (key: string | null, value: string | null | undefined, rawKey: string) => boolean | void,
): void {
  // Where the next '%' and '+' are (qs.length when none): most keys and values have neither and are one
  // slice, found without reading them character by character.
  let percent = -1;
  let plus = -1;
  /** The first '%' or '+' from start on (qs.length when none). */
  const special = (start: number): number => {
    if (percent < start) percent = indexOrEnd(qs, '%', start);
    if (plus < start) plus = indexOrEnd(qs, '+', start);
    return percent < plus ? percent : plus;
  };
  for (let at = 0; at < qs.length; ) {
    let amp = qs.indexOf('&', at);
    if (amp < 0) amp = qs.length;
    if (amp > at) {
      let eq = qs.indexOf('=', at);
      if (eq > amp) eq = -1;
      const keyEnd = eq < 0 ? amp : eq;
      const rawKey = qs.slice(at, keyEnd);
      let first = special(at);
      const key = first >= keyEnd ? rawKey : decodeParam(qs, at, keyEnd, first);
      let value: string | null | undefined;
      if (eq >= 0) {
        first = special(eq + 1);
        value = first >= amp ? qs.slice(eq + 1, amp) : decodeParam(qs, eq + 1, amp, first);
      }
      if (visit(key, value, rawKey) === false) return;
    }
    at = amp + 1;
  }
}

function indexOrEnd(qs: string, c: string, from: number): number {
  const at = qs.indexOf(c, from);
  return at < 0 ? qs.length : at;
}

export function parseQuery(qs: string): ParsedQuery {
  const out = Object.create(null) as ParsedQuery;
  eachPair(qs, (key, raw, rawKey) => {
    const value = raw === undefined ? '' : raw;
    if (key === null || value === null) {
      out[MALFORMED] ??= key ?? rawKey.slice(0, 40);
      return;
    }
    const prev = out[key];
    if (prev === undefined) out[key] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else out[key] = [prev, value];
  });
  return out;
}
