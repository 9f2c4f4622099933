/**
 * The one envelope `{ code, message, data }` and the mapping of every error,
 * ours or the framework's, onto it. No stack, SQL or path reaches a client.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, CODES, type CodeDef } from '../domain/errors.js';
import { StoreUnavailableError } from '../store/store.js';

export const JSON_TYPE = 'application/json; charset=utf-8';

export const ok = <T>(data: T): { code: 0; message: 'success'; data: T } => ({ code: 0, message: 'success', data });

export function errorBody(def: CodeDef, message: string): string {
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

/** One sentence naming the query parameter and what is wrong with it. */
export function validationMessage(errors: readonly AjvError[], context: string): string {
  const e = errors[0];
  if (!e) return 'The request is malformed.';
  const name = e.instancePath.replace(/^\//, '').split('/')[0] || String(e.params.missingProperty ?? '');
  const where = context === 'querystring' ? `Query parameter ${name}` : `Request ${context} ${name}`;
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
      return `${where} is malformed.`;
    case 'anyOf':
    case 'const':
    case 'enum':
      return `${where} has a value that is not allowed.`;
    default:
      return `${where} is malformed (${e.message ?? e.keyword}).`;
  }
}

const STORE_UNAVAILABLE = 'The forecast store is not reachable at the moment; retry shortly.';
const STORE_UNAVAILABLE_RETRY_S = '1';

/** The store-unavailable answer written to a bare Node response (the direct forecast path), as the handler below sends it. */
export function writeStoreUnavailable(res: ServerResponse): void {
  const body = errorBody(CODES.UNAVAILABLE, STORE_UNAVAILABLE);
  res.writeHead(CODES.UNAVAILABLE.status, [
    'retry-after',
    STORE_UNAVAILABLE_RETRY_S,
    'content-type',
    JSON_TYPE,
    'content-length',
    String(Buffer.byteLength(body)),
  ]);
  res.end(body);
}

/** Maps any thrown error to the envelope: ours as they are, framework 4xx as 40001, the rest as 50000. */
function handleError(this: FastifyInstance, err: FastifyError | ApiError, req: FastifyRequest, reply: FastifyReply): void {
  if (err instanceof ApiError) {
    reply.code(err.status).type(JSON_TYPE).send(JSON.stringify({ code: err.code, message: err.message, data: null }));
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
    sendError(reply, CODES.BAD_PARAMETER, validationMessage(fe.validation as AjvError[], fe.validationContext ?? 'querystring'));
    return;
  }
  const status = fe.statusCode ?? 500;
  if (status === 404) {
    sendError(reply, CODES.NO_ENDPOINT, `No endpoint ${req.method} ${shortPath(req.url)}.`);
  } else if (status === 503) {
    sendError(reply, CODES.UNAVAILABLE, 'The service is not ready or overloaded; retry shortly.');
  } else if (status >= 400 && status < 500) {
    sendError(reply, CODES.BAD_PARAMETER, `The request is malformed (${fe.code ?? `HTTP ${status}`}).`);
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
  const body = errorBody(CODES.BAD_PARAMETER, message);
  return [
    `HTTP/1.1 ${CODES.BAD_PARAMETER.status} Bad Request`,
    `Content-Type: ${JSON_TYPE}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/** Registers the error handler, and 404 / 405 answers that know the app's routes. */
export function registerErrorHandling(app: FastifyInstance): void {
  const getPaths = new Set<string>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.includes('GET')) getPaths.add(route.url.replace(/\/$/, '') || '/');
  });
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((req, reply) => {
    const path = (req.url.split('?')[0] ?? '').replace(/\/$/, '') || '/';
    if (getPaths.has(path) && !SAFE_METHODS.has(req.method)) {
      reply.header('allow', 'GET, HEAD');
      return sendError(reply, CODES.METHOD_NOT_ALLOWED, `Method ${req.method} is not allowed on ${shortPath(req.url)}; use GET.`);
    }
    return sendError(reply, CODES.NO_ENDPOINT, `No endpoint ${req.method} ${shortPath(req.url)}.`);
  });
}
