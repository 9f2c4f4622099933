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

/** A key or value as sent -> its text ('+' is a space), or null when its percent-encoding is malformed. */
function decodeParam(s: string): string | null {
  const plus = s.includes('+') ? s.replace(/\+/g, ' ') : s;
  if (!plus.includes('%')) return plus;
  try {
    return decodeURIComponent(plus);
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
  for (let at = 0; at < qs.length; ) {
    let amp = qs.indexOf('&', at);
    if (amp < 0) amp = qs.length;
    if (amp > at) {
      let eq = qs.indexOf('=', at);
      if (eq > amp) eq = -1;
      const rawKey = qs.slice(at, eq < 0 ? amp : eq);
      const value = eq < 0 ? undefined : decodeParam(qs.slice(eq + 1, amp));
      if (visit(decodeParam(rawKey), value, rawKey) === false) return;
    }
    at = amp + 1;
  }
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
