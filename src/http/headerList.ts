/**
 * The headers a route set on its reply so far (the door's rate-limit headers, nosniff, its own), as name,
 * value, … for an answer it writes to the raw response itself (an event stream, a bulk download): without
 * the request id, which the response adds (ops/observedResponse.ts), a length, or any named in `own`.
 */
const NONE: ReadonlySet<string> = new Set();

export function headerList(headers: Record<string, unknown>, own: ReadonlySet<string> = NONE): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || own.has(name) || name === 'content-length' || name === 'x-request-id') continue;
    if (Array.isArray(value)) for (const v of value) out.push(name, String(v));
    else out.push(name, String(value));
  }
  return out;
}
