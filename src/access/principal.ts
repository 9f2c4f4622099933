/**
 * Who a request was admitted as: the door (door.ts) sets it before any route
 * or the direct forecast path runs, and they read the scope from it. A request
 * without one was never admitted: readers refuse it rather than assume a scope.
 */
import type { IncomingMessage } from 'node:http';
import { EVERY_SITE, type Scope } from '../query/scope.js';

export interface Principal {
  /** The key's name, for logs; undefined when no key was asked for. */
  readonly keyName: string | undefined;
  readonly scope: Scope;
  /** May read operator endpoints (/metrics). */
  readonly admin: boolean;
}

/** A caller of a server that asks for no key: every site, no operator rights. */
export const ANONYMOUS: Principal = Object.freeze({ keyName: undefined, scope: EVERY_SITE, admin: false });

const PRINCIPAL = Symbol('forecastd.principal');
const HEADERS = Symbol('forecastd.answerHeaders');

type Admitted = IncomingMessage & { [PRINCIPAL]?: Principal; [HEADERS]?: readonly string[] };

/**
 * Headers the door adds to the answer (the caller's rate limit), as name, value, … pairs. Handed to
 * whoever writes the answer rather than set on the response: headers set ahead make Node's writeHead take
 * its slow path for every other header of the answer.
 */
export function setAnswerHeaders(req: IncomingMessage, headers: readonly string[]): void {
  (req as Admitted)[HEADERS] = headers;
}

export function answerHeadersOf(req: IncomingMessage): readonly string[] | undefined {
  return (req as Admitted)[HEADERS];
}

export function admitAs(req: IncomingMessage, principal: Principal): void {
  (req as Admitted)[PRINCIPAL] = principal;
}

export function principalOf(req: IncomingMessage): Principal | undefined {
  return (req as Admitted)[PRINCIPAL];
}

/** Who an admitted request is; a request the door never saw is a programming error, not an open door. */
export function principalOfRequest(req: IncomingMessage): Principal {
  const p = (req as Admitted)[PRINCIPAL];
  if (p === undefined) throw new Error('request reached a route without passing the door');
  return p;
}

/** The scope of an admitted request (principalOfRequest). */
export const scopeOfRequest = (req: IncomingMessage): Scope => principalOfRequest(req).scope;
