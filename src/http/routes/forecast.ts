/** GET /api/v1/forecast */
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { csvFileName, writeCsv } from '../../domain/csvFormat.js';
import { FORECAST_PAGE } from '../../domain/limits.js';
import { planForecast, type ForecastPlan } from '../../query/forecastQuery.js';
import { ReadModel } from '../../query/readModel.js';
import { prefersCsv } from '../accept.js';
import { BodyCache } from '../bodyCache.js';
import { chooseCoding, entityTag, matchesIfNoneMatch } from '../conditional.js';
import { DEFAULT_CACHE, type AppContext } from '../context.js';
import { JSON_TYPE } from '../envelope.js';
import { writeForecastJson } from '../forecastBody.js';
import { ForecastQuery, responses } from '../schemas.js';

const MB = 1024 * 1024;
const IMMUTABLE = 'public, max-age=31536000, immutable';
const CSV_TYPE = 'text/csv; charset=utf-8';

/** Everything that decides the bytes of the body, and so its cache entry and entity tag. */
function normalisedKey(plan: ForecastPlan, csv: boolean, page: number, size: number): string {
  const { farm, run } = plan;
  const shape = csv ? 'csv' : `json|${page}|${size}`;
  return `${shape}|${farm.farmId}|${farm.lat}|${farm.lon}|${run.issue}|${run.revision}|${plan.from}|${plan.to}|${plan.elements.join('.')}`;
}

function notModified(req: FastifyRequest, revision: number, key: string, publishedAt: number): boolean {
  const inm = req.headers['if-none-match'];
  if (inm !== undefined) return matchesIfNoneMatch(inm, revision, key);
  const ims = req.headers['if-modified-since'];
  if (ims === undefined) return false;
  const since = Date.parse(ims);
  return Number.isFinite(since) && Math.floor(publishedAt / 1000) * 1000 <= since;
}

export function forecastRoute(app: FastifyInstance, ctx: AppContext): void {
  const settings = ctx.cache ?? DEFAULT_CACHE;
  const reads = new ReadModel(ctx.store, settings.seriesMb * MB);
  const bodies = new BodyCache(settings.bodyMb * MB);
  const latestCacheControl = `public, max-age=${settings.latestMaxAgeS}`;

  app.get<{ Querystring: Static<typeof ForecastQuery> }>(
    '/api/v1/forecast',
    {
      schema: {
        summary: 'Query forecast data',
        description:
          'The forecast of one site (by farm_id, or the nearest registered site to lon/lat within the match radius) ' +
          'for one run (default: the latest holding data for the site), within an inclusive time window, paged. ' +
          'format=csv (or Accept: text/csv without format) returns the whole window as a CSV download. ' +
          'Responses carry a strong ETag (from the run revision and the normalised query), Last-Modified (when the ' +
          'run was published) and Cache-Control (immutable when issue is given, short when the latest run is implied); ' +
          'If-None-Match and If-Modified-Since are answered with 304. Bodies over 1 KB are sent gzip or br encoded ' +
          'when the client accepts it.',
        tags: ['forecast'],
        querystring: ForecastQuery,
        response: { ...responses.forecast, 304: { description: 'Not modified: the ETag still names the current representation.', type: 'null' } },
        produces: ['application/json', 'text/csv'],
      },
    },
    async (req, reply: FastifyReply) => {
      const q = req.query;
      await reads.sync();
      const plan = await planForecast(reads, ctx.rules, {
        farmId: q.farm_id,
        lat: q.lat,
        lon: q.lon,
        issue: q.issue,
        start: q.start,
        end: q.end,
        elements: q.elements,
      });
      const csv = q.format === 'csv' || (q.format === undefined && prefersCsv(req.headers.accept));
      const page = q.page ?? 1;
      const size = q.size ?? FORECAST_PAGE.defaultSize;
      const { run } = plan;
      const key = normalisedKey(plan, csv, page, size);
      const entry = bodies.body(key, (sink) => {
        if (csv) writeCsv(sink, run.view, plan.issueMs, plan.elements, plan.from, plan.to);
        else writeForecastJson(sink, plan, page, size);
      });
      const { bytes, coding } = bodies.encoded(key, entry, chooseCoding(req.headers['accept-encoding']));
      reply
        .header('etag', entityTag(run.revision, key, coding))
        .header('last-modified', new Date(run.publishedAt).toUTCString())
        .header('cache-control', q.issue === undefined ? latestCacheControl : IMMUTABLE)
        .header('vary', 'Accept, Accept-Encoding');
      if (notModified(req, run.revision, key, run.publishedAt)) {
        return reply.code(304).send();
      }
      if (coding !== 'identity') reply.header('content-encoding', coding);
      if (csv) {
        reply.header('content-disposition', `attachment; filename="${csvFileName(plan.farm.farmId, run.issue)}"`);
      }
      return reply.type(csv ? CSV_TYPE : JSON_TYPE).send(bytes);
    },
  );
}
