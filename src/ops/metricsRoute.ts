/**
 * GET /metrics: the Prometheus text of the whole instance (every worker,
 * added up) followed by the store's gauges. The door classes the path
 * `admin` (access/routeClass.ts): with keys required only an admin key gets
 * here. Not in the OpenAPI document: it is the operator's, not the API's.
 */
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { ApiError, CODES } from '../domain/errors.js';
import { METRICS_CONTENT_TYPE } from './metrics.js';

export const METRICS_PATH = '/metrics';

/**
 * `processes` gives the text of every process's registry added up (this
 * process's alone without a cluster); `store` holds the gauges read from the
 * store, read once per scrape.
 */
export function metricsRoute(app: FastifyInstance, processes: () => Promise<string>, store: Registry): void {
  app.get(METRICS_PATH, { schema: { hide: true } }, async (req, reply) => {
    let text: string;
    try {
      text = await processes();
    } catch (err) {
      req.log.warn({ err }, 'metrics of every worker could not be collected');
      throw new ApiError(CODES.UNAVAILABLE, 'The metrics of every worker could not be collected; retry shortly.');
    }
    return reply.type(METRICS_CONTENT_TYPE).send(text + (await store.metrics()));
  });
}
