/** GET /api/v1/events: the Server-Sent Events stream of runs and their states (src/events/). */
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ServerResponse } from 'node:http';
import { principalOfRequest } from '../../access/principal.js';
import { CODES } from '../../domain/errors.js';
import { parseLastEventId } from '../../events/feed.js';
import { STREAM_HEADERS, type EventStreams } from '../../events/sse.js';
import { sendError } from '../envelope.js';
import { headerList } from '../headerList.js';
import { EventsHeaders, EventsQuery, responses } from '../schemas.js';

/** Seconds a refused client is told to wait: streams free up as clients leave, not by the second. */
const RETRY_AFTER_S = '5';

/** The id to resume after: the header wins (an EventSource keeps its URL and sends the newest id), then the query. */
function lastEventIdOf(header: string | undefined, query: string | undefined): number | undefined | 'invalid' {
  const text = header !== undefined && header.trim() !== '' ? header : query;
  if (text === undefined) return undefined;
  return parseLastEventId(text) ?? 'invalid';
}

/** The stream's own headers come from STREAM_HEADERS. */
const OWN = new Set(STREAM_HEADERS.filter((_, i) => i % 2 === 0));

export function eventsRoute(app: FastifyInstance, streams: EventStreams, leaveInFlight: (res: ServerResponse) => void): void {
  app.get<{ Querystring: Static<typeof EventsQuery>; Headers: Static<typeof EventsHeaders> }>(
    '/api/v1/events',
    {
      schema: {
        operationId: 'streamEvents',
        summary: 'Server-Sent Events: runs published and their states',
        description:
          'A text/event-stream that stays open. `run` when a site the key may see publishes (or replaces) its data of a run; ' +
          '`issue` when a run\'s state (as in /api/v1/forecast/issues, counted over the sites the key may see) changes. ' +
          'Each event has an id; a client that reconnects with Last-Event-ID (or last_event_id) first gets every event after ' +
          'it, in order (events are kept for --events-keep, 24 h by default; an older id gets `event: reset`). Opening a stream ' +
          'costs one request of the key\'s rate; streams are limited per process (--sse-max-clients, 503) and per key ' +
          '(--sse-max-clients-per-key, 429).',
        tags: ['forecast'],
        querystring: EventsQuery,
        headers: EventsHeaders,
        response: responses.events,
      },
    },
    async (req, reply) => {
      const principal = principalOfRequest(req.raw);
      if (req.method === 'HEAD') {
        for (let i = 0; i < STREAM_HEADERS.length; i += 2) reply.header(STREAM_HEADERS[i]!, STREAM_HEADERS[i + 1]!);
        return reply.code(200).send();
      }
      const admission = streams.admit(principal.keyName);
      if (!admission.ok) {
        reply.header('retry-after', RETRY_AFTER_S);
        return admission.why === 'process'
          ? sendError(reply, CODES.UNAVAILABLE, 'The server has its limit of event streams open; retry shortly or on another instance.')
          : sendError(reply, CODES.RATE_LIMITED, 'This key has its limit of event streams open here; close one before opening another.');
      }
      try {
        // What was committed before the client came is read before its catch-up is taken.
        await streams.hub.sync();
      } catch (err) {
        admission.release();
        throw err;
      }
      const lastEventId = lastEventIdOf(req.headers['last-event-id'], req.query.last_event_id);
      reply.hijack();
      leaveInFlight(reply.raw);
      streams.stream(req.raw, reply.raw, principal, lastEventId, headerList(reply.getHeaders(), OWN), admission.release);
    },
  );
}
