/**
 * What happens to each answer the server writes (observedResponse.ts): it is
 * counted by route template and status (HttpStats), and, with --access-log,
 * logged as one JSON line naming the request id, method, route, status,
 * duration and the key's name (never the key, never the URL: a query names
 * sites).
 */
import type { IncomingMessage } from 'node:http';
import { principalOf } from '../access/principal.js';
import type { HttpStats } from './httpStats.js';
import type { AnswerObserver } from './observedResponse.js';
import { RequestIds, requestIdOf } from './requestId.js';

/** The part of a pino logger the access log uses. */
export interface AccessLogger {
  info(fields: object, message: string): void;
}

export class AnswerLog implements AnswerObserver {
  readonly ids = new RequestIds();
  /** Set to log a line per answer; undefined: off. */
  accessLog: AccessLogger | undefined;

  constructor(private readonly stats: HttpStats) {}

  answered(req: IncomingMessage, status: number, ms: number): void {
    const route = this.stats.routeOf(req.url ?? '');
    route.record(status, ms);
    if (this.accessLog !== undefined) {
      this.accessLog.info(
        {
          reqId: requestIdOf(req),
          method: req.method,
          route: route.route,
          status,
          ms: Math.round(ms * 1000) / 1000,
          keyName: principalOf(req)?.keyName,
        },
        'request',
      );
    }
  }
}
