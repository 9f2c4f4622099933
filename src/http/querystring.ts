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
export function decodeParam(s: string): string | null {
  const plus = s.includes('+') ? s.replace(/\+/g, ' ') : s;
  if (!plus.includes('%')) return plus;
  try {
    return decodeURIComponent(plus);
  } catch {
    return null;
  }
}

export function parseQuery(qs: string): ParsedQuery {
  const out = Object.create(null) as ParsedQuery;
  if (qs.length === 0) return out;
  for (const pair of qs.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const key = decodeParam(eq < 0 ? pair : pair.slice(0, eq));
    const value = eq < 0 ? '' : decodeParam(pair.slice(eq + 1));
    if (key === null || value === null) {
      out[MALFORMED] ??= key ?? (decodeParam(pair.slice(0, eq)) || pair.slice(0, eq).slice(0, 40));
      continue;
    }
    const prev = out[key];
    if (prev === undefined) out[key] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else out[key] = [prev, value];
  }
  return out;
}
