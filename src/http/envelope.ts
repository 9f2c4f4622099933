/**
 * The one envelope `{ code, message, data }` and the mapping of every error,
 * ours or the framework's, onto it. No stack, SQL or path reaches a client.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, clip, CODES, type CodeDef } from '../domain/errors.js';
import { StoreUnavailableError } from '../store/store.js';
import { REQUEST_ID_HEADER } from '../ops/requestId.js';
import { decimalHeader } from './headerNumber.js';

export const JSON_TYPE = 'application/json; charset=utf-8';

export const ok = <T>(data: T): { code: 0; message: 'success'; data: T } => ({ code: 0, message: 'success', data });

/** The envelope of an error: `def` is one of CODES, or an ApiError (which carries its code). */
export function errorBody(def: { readonly code: number }, message: string): string {
  return JSON.stringify({ code: def.code, message, data: null });
}

export function sendError(reply: FastifyReply, def: CodeDef, message: string): FastifyReply {
  return reply.code(def.status).type(JSON_TYPE).send(errorBody(def, message));
}

/** A client-facing excerpt of a path: short, and without control characters. */
export const shortPath = (url: string): string => {
  const path = url.split('?')[0] ?? '';
  const clean = path.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 80 ? clean.slice(0, 80) + '…' : clean;
};

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

/**
 * One sentence naming the query parameter and what is wrong with it. `values` are the request's parsed
 * parameters: one given twice arrives as a list, which the schema refuses by its type, and the fault to name
 * is the repetition, not the type.
 */
export function validationMessage(errors: readonly AjvError[], context: string, values?: unknown): string {
  const e = errors[0];
  if (!e) return 'The request is malformed.';
  const name = e.instancePath.replace(/^\//, '').split('/')[0] || String(e.params.missingProperty ?? '');
  const where = context === 'querystring' ? `Query parameter ${name}` : `Request ${context} ${name}`;
  if (e.keyword === 'type' && typeof values === 'object' && values !== null && Array.isArray((values as Record<string, unknown>)[name])) {
    return `${where} is given more than once; give it once.`;
  }
  const given = typeof values === 'object' && values !== null ? (values as Record<string, unknown>)[name] : undefined;
  const quoted = typeof given === 'string' ? ` "${clip(given, 40)}"` : '';
  switch (e.keyword) {
    case 'type':
      return `${where} must be ${e.params.type === 'integer' ? 'an integer' : e.params.type === 'number' ? 'a number' : 'a single ' + String(e.params.type)}.`;
    case 'minimum':
      return `${where} must be at least ${String(e.params.limit)}.`;
    case 'maximum':
      return `${where} must be at most ${String(e.params.limit)}.`;
    case 'minLength':
      return `${where} must not be empty.`;
    case 'pattern':
      // The one pattern of the API: an issue time.
      if (e.params.pattern === '^[0-9]{10}$') return `${where}${quoted} is not an issue time yyyyMMddHH (10 digits, UTC), such as 2026112000.`;
      return `${where}${quoted} is malformed.`;
    case 'anyOf':
    case 'const':
    case 'enum': {
      // A choice among literals fails one const per literal, each naming its value, before its anyOf.
      const allowed = errors.filter((x) => x.instancePath === e.instancePath && x.keyword === 'const').map((x) => String(x.params.allowedValue));
      if (e.keyword === 'enum' && Array.isArray(e.params.allowedValues)) allowed.push(...(e.params.allowedValues as unknown[]).map(String));
      return allowed.length > 0 ? `${where}${quoted} is not allowed; use ${allowed.join(' or ')}.` : `${where}${quoted} has a value that is not allowed.`;
    }
    default:
      return `${where} is malformed (${e.message ?? e.keyword}).`;
  }
}

const STORE_UNAVAILABLE = 'The forecast store is not reachable at the moment; retry shortly.';
const STORE_UNAVAILABLE_RETRY_S = '1';

/** The store-unavailable answer written to a bare Node response (the direct forecast path), as the handler below sends it. */
export function writeStoreUnavailable(res: ServerResponse): void {
  writeErrorAnswer(res, CODES.UNAVAILABLE, STORE_UNAVAILABLE, ['retry-after', STORE_UNAVAILABLE_RETRY_S]);
}

/** An error envelope written whole to a bare Node response (paths outside the framework's routes). */
export function writeErrorAnswer(res: ServerResponse, def: CodeDef, message: string, headers: readonly string[] = []): void {
  const body = errorBody(def, message);
  res.writeHead(def.status, [
    ...headers,
    'content-type',
    JSON_TYPE,
    'content-length',
    decimalHeader(Buffer.byteLength(body)),
    'x-content-type-options',
    'nosniff',
  ]);
  res.end(body);
}

/**
 * What the framework's error handler answers for a route's error: ours as it is, anything else 500 / 50000.
 * The headers are in the order the framework's hooks and reply give them (nosniff, the door's headers, the
 * request id, then the body's), so that an answer written without the framework (the wire front) is the
 * framework's byte for byte.
 */
export function routeErrorAnswer(
  err: unknown,
  doorHeaders: readonly string[],
  requestId: string,
): { readonly status: number; readonly headers: string[]; readonly body: string } {
  const known = err instanceof ApiError;
  const status = known ? err.status : CODES.INTERNAL.status;
  const body = known ? errorBody(err, err.message) : errorBody(CODES.INTERNAL, 'Internal server error.');
  const headers = ['x-content-type-options', 'nosniff', ...doorHeaders, REQUEST_ID_HEADER, requestId, 'content-type', JSON_TYPE, 'content-length', decimalHeader(Buffer.byteLength(body))];
  return { status, headers, body };
}

/** 500 / 50000 written to a bare Node response, for a fault outside the framework's routes. */
export function writeInternalError(res: ServerResponse): void {
  writeErrorAnswer(res, CODES.INTERNAL, 'Internal server error.');
}

/** Maps any thrown error to the envelope: ours as they are, framework 4xx as 40001, the rest as 50000. */
function handleError(this: FastifyInstance, err: FastifyError | ApiError, req: FastifyRequest, reply: FastifyReply): void {
  if (err instanceof ApiError) {
    reply.code(err.status).type(JSON_TYPE).send(errorBody(err, err.message));
    return;
  }
  if (err instanceof StoreUnavailableError) {
    req.log.warn({ err: err.cause ?? err }, 'store unavailable');
    reply.header('retry-after', STORE_UNAVAILABLE_RETRY_S);
    sendError(reply, CODES.UNAVAILABLE, STORE_UNAVAILABLE);
    return;
  }
  const fe = err as FastifyError & { validationContext?: string };
  if (fe.validation) {
    const context = fe.validationContext ?? 'querystring';
    sendError(reply, CODES.BAD_PARAMETER, validationMessage(fe.validation as AjvError[], context, context === 'querystring' ? req.query : undefined));
    return;
  }
  const status = fe.statusCode ?? 500;
  if (status === 404) {
    sendError(reply, CODES.NO_ENDPOINT, `No endpoint ${req.method} ${shortPath(req.url)}.`);
  } else if (status === 503) {
    sendError(reply, CODES.UNAVAILABLE, 'The service is not ready or overloaded; retry shortly.');
  } else if (status >= 400 && status < 500) {
    // The framework's own identifiers (FST_...) are not for clients; every request that reaches a route is a GET
    // or HEAD without a body the framework would parse, so what is left is a malformed request.
    req.log.debug({ code: fe.code }, 'framework rejected the request');
    sendError(reply, CODES.BAD_PARAMETER, 'The request is malformed.');
  } else {
    req.log.error({ err }, 'internal error');
    sendError(reply, CODES.INTERNAL, 'Internal server error.');
  }
}

/** Envelope for errors the HTTP parser raises before a request exists (raw socket). */
export function clientErrorResponse(err: NodeJS.ErrnoException): string {
  const message =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? 'The request line or headers are too large.'
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'The request was not received in time.'
        : 'The HTTP request is malformed.';
  return rawErrorAnswer(CODES.BAD_PARAMETER, 'Bad Request', message);
}

/** An error envelope as the bytes of a whole answer, for a socket no response object exists for; closes it. */
function rawErrorAnswer(def: CodeDef, reason: string, message: string, headerLines: readonly string[] = []): string {
  const body = errorBody(def, message);
  return [
    `HTTP/1.1 ${def.status} ${reason}`,
    ...headerLines,
    `Content-Type: ${JSON_TYPE}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    'X-Content-Type-Options: nosniff',
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);
export const ALLOW = 'GET, HEAD';

/** The answer to a request no route takes: 405 on a known path (with Allow), else 404. */
export interface Unrouted {
  readonly def: CodeDef;
  readonly message: string;
  readonly allow: boolean;
}

/** Which paths the app serves, to tell a wrong method (405) from a wrong path (404) before anything is read. */
export class RoutePaths {
  private readonly getPaths = new Set<string>();
  /** Routes that end in a wildcard (the docs page's assets), by their prefix. */
  private readonly getPrefixes: string[] = [];

  add(url: string): void {
    if (url.endsWith('*')) this.getPrefixes.push(url.slice(0, -1));
    else this.getPaths.add(RoutePaths.normal(url));
  }

  /** Every path a GET route takes, wildcard routes ending in '*': for tests and the door that guards them. */
  list(): string[] {
    return [...this.getPaths, ...this.getPrefixes.map((p) => p + '*')].sort();
  }

  private served(url: string): boolean {
    const path = RoutePaths.normal(url);
    return this.getPaths.has(path) || this.getPrefixes.some((p) => path.startsWith(p));
  }

  answer(method: string, url: string): Unrouted {
    if (!SAFE_METHODS.has(method) && this.served(url)) {
      return {
        def: CODES.METHOD_NOT_ALLOWED,
        message: `Method ${shortToken(method)} is not allowed on ${shortPath(url)}; use GET.`,
        allow: true,
      };
    }
    return { def: CODES.NO_ENDPOINT, message: `No endpoint ${shortToken(method)} ${shortPath(url)}.`, allow: false };
  }

  private static normal(url: string): string {
    return (url.split('?')[0] ?? '').replace(/\/$/, '') || '/';
  }
}

/** A method name as a client may see it quoted back: short and printable (the parser admits only tokens anyway). */
const shortToken = (method: string): string => method.replace(/[^\x21-\x7e]/g, '?').slice(0, 24);

/** The same answer written to a bare socket, for requests Node hands over without a response (CONNECT). */
export function rawUnroutedResponse(u: Unrouted): string {
  return rawErrorAnswer(u.def, u.def.status === 405 ? 'Method Not Allowed' : 'Not Found', u.message, u.allow ? [`Allow: ${ALLOW}`] : []);
}

/**
 * Registers the error handler, and 404 / 405 answers that know the app's routes.
 * A request no route takes is answered in onRequest, before the framework reads
 * or parses a body: whatever it carries (a body of any type or size, malformed
 * or not), a wrong method is 405 and a wrong path is 404.
 */
export function registerErrorHandling(app: FastifyInstance, paths: RoutePaths): void {
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.includes('GET')) paths.add(route.url);
  });
  app.setErrorHandler(handleError);
  const unrouted = (req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const u = paths.answer(req.method, req.url);
    if (u.allow) reply.header('allow', ALLOW);
    return sendError(reply, u.def, u.message);
  };
  // The framework runs a not-found request through its whole lifecycle, body parsing included; answering here
  // means a body (malformed, oversized, of any type) is never read, so the answer depends on method and path only.
  app.addHook('onRequest', (req, reply, done) => {
    if (req.is404) unrouted(req, reply);
    else done();
  });
  app.setNotFoundHandler(unrouted);
}
