/** GET /api/v1/forecast */
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { renderCsv, csvFileName } from '../../domain/csvFormat.js';
import { FORECAST_PAGE } from '../../domain/limits.js';
import { planForecast } from '../../query/forecastQuery.js';
import { prefersCsv } from '../accept.js';
import type { AppContext } from '../context.js';
import { JSON_TYPE } from '../envelope.js';
import { forecastJson } from '../forecastBody.js';
import { ForecastQuery, responses } from '../schemas.js';

export function forecastRoute(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: Static<typeof ForecastQuery> }>(
    '/api/v1/forecast',
    {
      schema: {
        summary: 'Query forecast data',
        description:
          'The forecast of one site (by farm_id, or the nearest registered site to lon/lat within the match radius) ' +
          'for one run (default: the latest holding data for the site), within an inclusive time window, paged. ' +
          'format=csv (or Accept: text/csv without format) returns the whole window as a CSV download.',
        tags: ['forecast'],
        querystring: ForecastQuery,
        response: responses.forecast,
        produces: ['application/json', 'text/csv'],
      },
    },
    async (req, reply) => {
      const q = req.query;
      const plan = await planForecast(ctx.store, ctx.rules, {
        farmId: q.farm_id,
        lat: q.lat,
        lon: q.lon,
        issue: q.issue,
        start: q.start,
        end: q.end,
        elements: q.elements,
      });
      const csv = q.format === 'csv' || (q.format === undefined && prefersCsv(req.headers.accept));
      if (csv) {
        return reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${csvFileName(plan.farm.farmId, plan.run.issue)}"`)
          .send(renderCsv(plan.run.view, plan.issueMs, plan.elements, plan.from, plan.to));
      }
      return reply.type(JSON_TYPE).send(forecastJson(plan, q.page ?? 1, q.size ?? FORECAST_PAGE.defaultSize));
    },
  );
}
