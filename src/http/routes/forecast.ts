/**
 * GET /api/v1/forecast: the framework route. The answer itself is the forecast
 * service's (forecastService.ts); the route adds validation and the error
 * envelope. Well-formed requests usually never reach it: the direct path
 * (directForecast.ts) answers them first, with the same bytes.
 */
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ForecastService } from '../forecastService.js';
import { ForecastQuery, responses } from '../schemas.js';

export function forecastRoute(app: FastifyInstance, service: ForecastService): void {
  app.get<{ Querystring: Static<typeof ForecastQuery> }>(
    '/api/v1/forecast',
    {
      schema: {
        operationId: 'getForecast',
        summary: 'Query forecast data',
        description:
          'The forecast of one site (by farm_id, or the nearest registered site to lon/lat within the match radius) ' +
          'for one run (default: the latest holding data for the site), within an inclusive time window, paged. ' +
          'format=csv (or Accept: text/csv without format) returns the whole window as a CSV download. ' +
          'Responses carry a strong ETag (from the run revision and the normalised query), Last-Modified (when the ' +
          'run was published) and Cache-Control (an hour when issue is given, a minute when the latest run is implied); ' +
          'If-None-Match and If-Modified-Since are answered with 304. Bodies over 1 KB are sent gzip or br encoded ' +
          'when the client accepts it.',
        tags: ['forecast'],
        querystring: ForecastQuery,
        response: responses.forecast,
      },
      onRequest: (req, reply, done) => {
        service.reads.sync().then(() => {
          if (!service.replay(req.raw, reply.raw, () => reply.hijack())) done();
        }, done);
      },
    },
    async (req, reply) => {
      await service.answer(req.query, req.raw, reply.raw, () => reply.hijack());
    },
  );
}
