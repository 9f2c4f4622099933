/** Assertions shared by the HTTP tests: the envelope, its content type and its error form. */
import assert from 'node:assert/strict';

export const JSON_CT = 'application/json; charset=utf-8';
export const CSV_CT = 'text/csv; charset=utf-8';

export interface InjectResult {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

interface Envelope<T> {
  code: number;
  message: string;
  data: T;
}

/** Nothing that looks like a stack frame, a source file or a server path. */
export function assertNoLeak(body: string): void {
  assert.doesNotMatch(body, /\n\s+at /, 'stack frame in response');
  assert.doesNotMatch(body, /\bat [\w.<>]+ \(/, 'stack frame in response');
  assert.doesNotMatch(body, /\.(?:ts|js|mjs|cjs):\d+/, 'source location in response');
  assert.doesNotMatch(body, /node_modules|\/work\/|\/tmp\/|\/var\/|\/home\/|[A-Z]:\\/, 'file path in response');
  assert.doesNotMatch(body, /SQLITE|SELECT |INSERT INTO|UPDATE \w+ SET/, 'SQL in response');
}

/** A 200 envelope: JSON content type, code 0, message "success"; returns data. */
export function okData<T = any>(res: InjectResult): T {
  assert.equal(res.statusCode, 200, `expected 200, got ${res.statusCode}: ${res.body.slice(0, 300)}`);
  assert.equal(res.headers['content-type'], JSON_CT);
  const body = JSON.parse(res.body) as Envelope<T>;
  assert.deepEqual(Object.keys(body), ['code', 'message', 'data']);
  assert.equal(body.code, 0);
  assert.equal(body.message, 'success');
  return body.data;
}

/**
 * An error envelope: the status, JSON content type, the code, data null, and a
 * message that is one sentence; when `names` is given the message mentions each.
 */
export function assertError(
  res: InjectResult,
  status: number,
  code: number,
  names: readonly (string | RegExp)[] = [],
): string {
  assert.equal(res.statusCode, status, `expected ${status}, got ${res.statusCode}: ${res.body.slice(0, 300)}`);
  assert.equal(res.headers['content-type'], JSON_CT);
  const body = JSON.parse(res.body) as Envelope<null>;
  assert.deepEqual(Object.keys(body), ['code', 'message', 'data']);
  assert.equal(body.code, code);
  assert.equal(body.data, null);
  assert.equal(typeof body.message, 'string');
  assert.ok(body.message.length > 0);
  assert.doesNotMatch(body.message, /[\r\n]/, 'message is one line');
  assert.match(body.message, /^[A-Za-z"]/, `message starts a sentence: ${body.message}`);
  assert.match(body.message, /[.]$/, `message ends a sentence: ${body.message}`);
  assert.notEqual(body.message, 'success');
  for (const n of names) {
    if (typeof n === 'string') assert.ok(body.message.includes(n), `message "${body.message}" names ${n}`);
    else assert.match(body.message, n);
  }
  assertNoLeak(res.body);
  return body.message;
}
