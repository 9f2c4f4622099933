/** GET /api/v1/forecast/archive: one run for every site the caller may see, as one streamed zip of CSV files. */
import { createHash } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { scopeOfRequest } from '../../access/principal.js';
import { planArchive, type ArchivePlan } from '../../query/archivePlan.js';
import type { Scope } from '../../query/scope.js';
import { archiveParts, sendArchive, startingWith } from '../archiveBody.js';
import { notModified } from '../conditional.js';
import type { AppContext } from '../context.js';
import type { ForecastService } from '../forecastService.js';
import { headerList } from '../headerList.js';
import { ArchiveQuery, responses } from '../schemas.js';

/**
 * The archive's validator: its bytes follow from the run, the query's fields and window, and each entry's
 * version, so the same plan always streams the same bytes.
 */
function archiveTag(plan: ArchivePlan, scope: Scope): string {
  const h = createHash('sha256');
  h.update(`zip1|${scope.id}|${plan.issue}|${plan.elements.join(',')}|${plan.startMs ?? ''}|${plan.endMs ?? ''}`);
  for (const r of plan.runs) h.update(`|${r.farmId}:${r.revision}`);
  return 'z' + h.digest('base64url').slice(0, 22);
}

export function archiveRoute(app: FastifyInstance, ctx: AppContext, forecasts: ForecastService): void {
  app.get<{ Querystring: Static<typeof ArchiveQuery> }>(
    '/api/v1/forecast/archive',
    {
      schema: {
        operationId: 'downloadRunArchive',
        summary: 'Bulk download: one run for every site, as a zip of CSV files',
        description:
          'A zip (streamed, entries stored uncompressed) with one entry per site of the run that the key may see, named ' +
          '`<farm_id>_<issue>.csv`, sorted by farm_id, each byte-identical to that site\'s `format=csv` download with the same ' +
          '`elements`, `start` and `end`. Without `issue`, the newest run holding data of a visible site. Costs one request ' +
          'of the key\'s rate.',
        tags: ['forecast'],
        querystring: ArchiveQuery,
        response: responses.archive,
      },
    },
    async (req, reply) => {
      const scope = scopeOfRequest(req.raw);
      const plan = await planArchive(ctx.store, { issue: req.query.issue, start: req.query.start, end: req.query.end, elements: req.query.elements }, scope);
      const tag = archiveTag(plan, scope);
      reply
        .header('etag', `"${tag}"`)
        .header('last-modified', new Date(plan.publishedAt).toUTCString())
        .header('forecast-issue', plan.issue)
        // A late site or a replaced run changes the archive of the same run: clients revalidate, cheaply.
        .header('cache-control', 'private, no-cache');
      if (notModified(req.headers, tag, plan.publishedAt)) return reply.code(304).send();
      reply.type('application/zip').header('content-disposition', `attachment; filename="forecast_${plan.issue}.zip"`);
      if (req.method === 'HEAD') {
        // The head a GET would send, streamed (no length known ahead), not a Content-Length of 0.
        reply.hijack();
        reply.raw.writeHead(200, headerList(reply.getHeaders()));
        reply.raw.end();
        return;
      }
      // The site records the entries' keys are made from (a server's first request may be an archive).
      await forecasts.reads.sync();
      const parts = archiveParts(ctx.store, plan, forecasts.entryCopies);
      // The first entry is made before anything is sent: a store that fails at once is answered as on any route.
      const first = await parts.next();
      // Written here rather than handed to the framework as a stream, so that each entry's buffer is reused
      // once the socket has taken it (archiveBody.ts).
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, headerList(reply.getHeaders()));
      sendArchive(startingWith(first, parts), res).catch((err: unknown) => {
        reply.log.error({ err }, 'bulk download cut short');
        // After what was written has gone out: the client then sees a chunked body without its end.
        setImmediate(() => res.destroy());
      });
    },
  );
}
