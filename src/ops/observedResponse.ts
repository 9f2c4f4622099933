/**
 * The server's response class: every answer the server writes through a
 * response (a route's, the direct forecast path's, the door's refusals, 404
 * and 405) passes writeHead and end, so this is where the request id is added
 * and where the answer is counted and logged, once per request, with nothing
 * registered per request (an event listener would be a closure and a listener
 * array per answer). It is given to node:http as `ServerResponse`, so the
 * hot path pays an id, a copy of the header list, two clock reads, a route
 * lookup and a few additions (docs/operations.md has the figures).
 *
 * Answers written to the socket without a response object (the parser's 400,
 * CONNECT) are counted where they are written (http/app.ts). Not counted: a
 * request whose client left before its answer was ended.
 */
import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';
import { assignRequestId, REQUEST_ID_HEADER, requestIdOf, type RequestIds } from './requestId.js';

/** What is told of each answer. */
export interface AnswerObserver {
  readonly ids: RequestIds;
  /** The answer to `req` was ended with `status` after `ms` milliseconds. */
  answered(req: IncomingMessage, status: number, ms: number): void;
}

type Headers = OutgoingHttpHeaders | OutgoingHttpHeader[];

/** The header list with the request id added, as a new array (callers may keep and reuse theirs). */
export function withRequestId(headers: readonly unknown[], id: string): unknown[] {
  const n = headers.length;
  if (n > 0 && Array.isArray(headers[0])) return [...headers, [REQUEST_ID_HEADER, id]];
  const out = new Array<unknown>(n + 2);
  for (let i = 0; i < n; i++) out[i] = headers[i];
  out[n] = REQUEST_ID_HEADER;
  out[n + 1] = id;
  return out;
}

/** Node's class as it is constructed (its typings omit the options Node passes: the high-water mark among them). */
const Response = ServerResponse as unknown as new (req: IncomingMessage, options?: object) => ServerResponse;

/** A ServerResponse class that adds X-Request-Id to every answer and tells `observer` of each. */
export function observedResponse(observer: AnswerObserver): typeof ServerResponse {
  class ObservedResponse extends Response {
    private readonly startedAt = performance.now();

    constructor(req: IncomingMessage, options?: object) {
      super(req, options);
      assignRequestId(req, observer.ids);
    }

    override writeHead(status: number, reason?: string | Headers, headers?: Headers): this {
      const id = requestIdOf(this.req)!;
      if (typeof reason !== 'string') {
        headers = reason;
        reason = undefined;
      }
      if (Array.isArray(headers)) {
        headers = withRequestId(headers, id) as Headers;
      } else if (headers === undefined || headers[REQUEST_ID_HEADER] === undefined) {
        // An object of headers (the framework's) or none (headers set one by one): the id joins those set.
        if (!this.headersSent) this.setHeader(REQUEST_ID_HEADER, id);
      }
      return reason === undefined ? super.writeHead(status, headers) : super.writeHead(status, reason, headers);
    }

    override end(chunk?: unknown, encoding?: unknown, callback?: unknown): this {
      if (!this.writableEnded) observer.answered(this.req, this.statusCode, performance.now() - this.startedAt);
      return super.end(chunk as never, encoding as never, callback as never);
    }
  }
  return ObservedResponse as unknown as typeof ServerResponse;
}
