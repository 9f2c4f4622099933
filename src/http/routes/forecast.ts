/**
 * GET /api/v1/forecast
 *
 * Slow path (handler): validated query -> plan -> normalised key -> cached or
 * freshly rendered body -> validators and caching headers. The prepared answer
 * is remembered per raw URL (and Accept's CSV preference) together with the read
 * model's revision; while that revision stands, nothing the answer depends on
 * has changed, so the fast path (route onRequest hook) replays it without
 * validating or planning again. Any commit moves the revision.
 */
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { csvFileName, writeCsv } from '../../domain/csvFormat.js';
import { FORECAST_PAGE } from '../../domain/limits.js';
import { planForecast, type ForecastPlan } from '../../query/forecastQuery.js';
import { ReadModel } from '../../query/readModel.js';
import { Doorkeeper } from '../../cache/doorkeeper.js';
import { SizedLru } from '../../cache/lru.js';
import { prefersCsv } from '../accept.js';
import { BodyCache, type CachedBody } from '../bodyCache.js';
import { chooseCoding, entityTag, matchesIfNoneMatch, tagBase } from '../conditional.js';
import { DEFAULT_CACHE, type AppContext } from '../context.js';
import { JSON_TYPE } from '../envelope.js';
import { writeForecastJson } from '../forecastBody.js';
import { ForecastQuery, responses } from '../schemas.js';

const MB = 1024 * 1024;
const IMMUTABLE = 'public, max-age=31536000, immutable';
const CSV_TYPE = 'text/csv; charset=utf-8';
const VARY = 'Accept, Accept-Encoding';
/** Remembered answers; each is a few hundred bytes (the body lives in the body cache). */
const MEMO_BYTES = 4 * MB;

/** Everything about an answer except its body bytes. */
interface Prepared {
  /** Key of the body in the body cache: everything that decides its bytes. */
  readonly key: string;
  readonly tag: string;
  readonly lastModified: string;
  readonly publishedAt: number;
  readonly cacheControl: string;
  readonly contentType: string;
  readonly disposition: string | undefined;
  /** Read model revision the answer was prepared at. */
  readonly revision: number;
}

function normalisedKey(plan: ForecastPlan, csv: boolean, page: number, size: number): string {
  const { farm, run } = plan;
  const shape = csv ? 'csv' : `json|${page}|${size}`;
  return `${shape}|${farm.farmId}|${farm.lat}|${farm.lon}|${run.issue}|${run.revision}|${plan.from}|${plan.to}|${plan.elements.join('.')}`;
}

function notModified(req: FastifyRequest, p: Prepared): boolean {
  const inm = req.headers['if-none-match'];
  if (inm !== undefined) return matchesIfNoneMatch(inm, p.tag);
  const ims = req.headers['if-modified-since'];
  if (ims === undefined) return false;
  const since = Date.parse(ims);
  return Number.isFinite(since) && Math.floor(p.publishedAt / 1000) * 1000 <= since;
}

const memoKey = (req: FastifyRequest): string => (prefersCsv(req.headers.accept) ? 'c' : 'j') + req.url;

export function forecastRoute(app: FastifyInstance, ctx: AppContext): void {
  const settings = ctx.cache ?? DEFAULT_CACHE;
  const reads = new ReadModel(ctx.store, settings.seriesMb * MB);
  const bodies = new BodyCache(settings.bodyMb * MB);
  const memo = new SizedLru<string, Prepared>(settings.bodyMb > 0 ? MEMO_BYTES : 0, (p) => 300 + p.key.length);
  const memoDoor = new Doorkeeper();
  const latestCacheControl = `public, max-age=${settings.latestMaxAgeS}`;

  /**
   * Writes the answer straight to the socket (the framework's reply is
   * hijacked): the headers and body are known whole, and this is the hot path.
   */
  function respond(req: FastifyRequest, reply: FastifyReply, p: Prepared, entry: CachedBody): void {
    const { bytes, coding } = bodies.encoded(p.key, entry, chooseCoding(req.headers['accept-encoding']));
    const res = reply.raw;
    if (entry.release) res.once('close', entry.release);
    const headers = ['etag', entityTag(p.tag, coding), 'last-modified', p.lastModified, 'cache-control', p.cacheControl, 'vary', VARY];
    reply.hijack();
    if (notModified(req, p)) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    headers.push('content-type', p.contentType, 'content-length', String(bytes.length));
    if (coding !== 'identity') headers.push('content-encoding', coding);
    if (p.disposition !== undefined) headers.push('content-disposition', p.disposition);
    res.writeHead(200, headers);
    res.end(bytes);
  }

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
        response: {
          ...responses.forecast,
          304: { description: 'Not modified: the ETag still names the current representation.', type: 'null' },
        },
        produces: ['application/json', 'text/csv'],
      },
      onRequest: (req, reply, done) => {
        reads.sync().then(() => {
          const p = memo.get(memoKey(req));
          const entry = p !== undefined && p.revision === reads.revision ? bodies.body(p.key, undefined) : undefined;
          if (entry === undefined) {
            done();
            return;
          }
          respond(req, reply, p!, entry);
        }, done);
      },
    },
    async (req, reply) => {
      const q = req.query;
      const revision = reads.revision;
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
      const prepared: Prepared = {
        key,
        tag: tagBase(run.revision, key),
        lastModified: new Date(run.publishedAt).toUTCString(),
        publishedAt: run.publishedAt,
        cacheControl: q.issue === undefined ? latestCacheControl : IMMUTABLE,
        contentType: csv ? CSV_TYPE : JSON_TYPE,
        disposition: csv ? `attachment; filename="${csvFileName(plan.farm.farmId, run.issue)}"` : undefined,
        revision,
      };
      // Remember it only if no commit was applied while planning.
      if (reads.revision === revision) {
        const mk = memoKey(req);
        if (memoDoor.admit(mk)) memo.set(mk, prepared);
      }
      const entry = bodies.body(key, (sink) => {
        if (csv) writeCsv(sink, run.view, plan.issueMs, plan.elements, plan.from, plan.to);
        else writeForecastJson(sink, plan, page, size);
      })!;
      respond(req, reply, prepared, entry);
    },
  );
}
