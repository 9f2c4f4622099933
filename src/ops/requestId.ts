/**
 * Request ids (INTERFACE.md section 13): every answer carries `X-Request-Id`,
 * the request's own when it sent an acceptable one, else a new one. A new id
 * is this process's random prefix and a counter (`k3f9x2qa-1b7`): unique
 * enough to find a request in the logs of every process of an instance, and
 * a string concatenation per request rather than a UUID (docs/operations.md
 * has the figures).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { checkKeyForm } from '../access/keyFormat.js';

export const REQUEST_ID_HEADER = 'x-request-id';

/** 1–64 characters of A–Z a–z 0–9 . _ - */
const ACCEPTED = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Whether a client's id is taken as it is. Not an API key's text, which is made of the same characters: an id
 * is echoed and written to the access log, and a client that put its key there would find it in both.
 */
export const acceptableRequestId = (text: string): boolean => ACCEPTED.test(text) && !checkKeyForm(text);

/** Hands out new ids: a random prefix per process, then a base-36 counter. */
export class RequestIds {
  private n = 0;

  constructor(private readonly prefix: string = RequestIds.randomPrefix()) {}

  /** 8 base-36 characters from 40 random bits, and a dash. */
  static randomPrefix(): string {
    return randomBytes(5).readUIntBE(0, 5).toString(36).padStart(8, '0') + '-';
  }

  next(): string {
    return this.prefix + (++this.n).toString(36);
  }
}

const REQUEST_ID = Symbol('forecastd.requestId');

type Tagged = IncomingMessage & { [REQUEST_ID]?: string };

/** The request's id, once assigned. */
export function requestIdOf(req: IncomingMessage): string | undefined {
  return (req as Tagged)[REQUEST_ID];
}

/** The request's id: the one it sent when acceptable, else a new one; assigned once and kept on the request. */
export function assignRequestId(req: IncomingMessage, ids: RequestIds): string {
  const tagged = req as Tagged;
  let id = tagged[REQUEST_ID];
  if (id === undefined) {
    const sent = req.headers[REQUEST_ID_HEADER];
    id = typeof sent === 'string' && acceptableRequestId(sent) ? sent : ids.next();
    tagged[REQUEST_ID] = id;
  }
  return id;
}
