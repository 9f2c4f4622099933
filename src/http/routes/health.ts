/** GET /healthz (the process answers) and GET /readyz (it can serve: the store answers, not shutting down). */
import type { FastifyInstance } from 'fastify';
import { CODES } from '../../domain/errors.js';
import type { AppContext } from '../context.js';
import { ok, sendError } from '../envelope.js';

export function healthRoutes(app: FastifyInstance, ctx: AppContext, isClosing: () => boolean): void {
  const hide = { schema: { hide: true } };
  app.get('/healthz', hide, async () => ok({ status: 'ok' }));
  app.get('/readyz', hide, async (req, reply) => {
    if (isClosing()) return sendError(reply, CODES.UNAVAILABLE, 'The server is shutting down.');
    try {
      await ctx.store.ping();
    } catch (err) {
      req.log.warn({ err }, 'store not reachable');
      return sendError(reply, CODES.UNAVAILABLE, 'The store is not reachable.');
    }
    return ok({ status: 'ready' });
  });
}
