/**
 * Answering a forecast query: validated query -> plan -> normalised key ->
 * cached or freshly rendered body -> validators and caching headers, written
 * straight to the Node response. Shared by the framework route and the direct
 * path (directForecast.ts), so that both answer with the same bytes.
 *
 * The prepared answer is remembered per raw URL (and Accept's CSV preference)
 * together with the read model's stamp of what it depends on: the site's, for
 * a site named by farm_id (it moves when that site's record or one of its runs
 * changes), the revision of the whole store for a nearest-site query (any
 * site may become the nearest). While the stamp stands, nothing the answer
 * depends on has changed, so replay() sends it again without validating or
 * planning. So a delivery of new runs, committed one site at a time, leaves
 * the remembered answers of the other sites standing.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Static } from '@sinclair/typebox';
import { answerHeadersOf, principalOf, scopeOfRequest } from '../access/principal.js';
import { csvFileName, writeCsv } from '../domain/csvFormat.js';
import { FORECAST_PAGE } from '../domain/limits.js';
import { planForecast, type ForecastPlan } from '../query/forecastQuery.js';
import { then, type Maybe } from '../query/maybe.js';
import { DiskRing } from '../cache/diskRing.js';
import { ReadModel, type RunMeta } from '../query/readModel.js';
import { keepRecent } from '../cache/keepRecent.js';
import { SizedLru, usedSincePassed } from '../cache/lru.js';
import type { CacheMemory } from '../ops/metrics.js';
import { prefersCsv } from './accept.js';
import type { EntryCopies } from './archiveBody.js';
import { BodyCache, codingOf, type BodyCacheKey, type BodyCopyMeta, type CachedBody } from './bodyCache.js';
import { BodyKey } from './bodyKey.js';
import { chooseCoding, entityTag, notModified, tagBase, type Coding } from './conditional.js';
import { DEFAULT_CACHE, DEFAULT_RUN_MAX_AGE_S, type AppContext, type CacheSettings } from './context.js';
import { JSON_TYPE } from './envelope.js';
import { decimalHeader } from './headerNumber.js';
import { writeForecastJson } from './forecastBody.js';
import type { ForecastQuery } from './schemas.js';
import { sendAtTurnEnd } from './turnBatch.js';

export type ForecastQueryValues = Static<typeof ForecastQuery>;

const MB = 1024 * 1024;
const CSV_TYPE = 'text/csv; charset=utf-8';
const VARY = 'Accept, Accept-Encoding';
/**
 * With a CORS answer: the door sets Access-Control-Allow-Origin and Vary: Origin on the response, and the
 * answer's own Vary, given with its headers, replaces the one set before.
 */
const VARY_ORIGIN = 'Accept, Accept-Encoding, Origin';
/**
 * The memo's share of the body cache's memory: a body is only replayed through its remembered answer, so a
 * body cache that holds every hot page needs a memo that holds every hot URL (24 KB of bodies per KB of memo;
 * a hot page is about 21 KB, its remembered answer under 1 KB).
 */
const memoBytes = (bodyMb: number): number => Math.floor((bodyMb * MB) / 24);
/**
 * What a remembered answer costs in memory besides its two key texts (the URL, and the body key's text, which
 * the body cache shares): the object, its header array (made when first sent), the entity tag and length
 * texts, the body key and the memo's own node. Measured with heap snapshots at 10,000 sites
 * (docs/performance.md, "Memory").
 */
const MEMO_ENTRY_BYTES = 700;
const memoEntryBytes = (p: Prepared, memoKey: string): number => MEMO_ENTRY_BYTES + memoKey.length + p.key.text.length;

/** Everything about an answer except its body bytes. */
interface Prepared {
  /** Key of the body in the body cache: everything that decides its bytes. */
  readonly key: BodyCacheKey;
  readonly tag: string;
  readonly lastModified: string;
  /** When what the answer shows last changed (Last-Modified, to the second): see answerPlan. */
  readonly modifiedAt: number;
  /** Cache-Control of its kind (latest run or named run), for anyone and for a key. */
  readonly caching: Caching;
  readonly contentType: string;
  readonly disposition: string | undefined;
  /** The run served: its issue, for Forecast-Issue. */
  readonly issue: string;
  /** The site the URL names by farm_id; undefined for a nearest-site query. */
  readonly farmId: string | undefined;
  /** The read model's stamp of what the answer depends on when it was prepared (ReadModel.stampOf). */
  readonly stamp: number;
  /** Headers of the 200 answer with the identity body, made when first sent: a remembered answer is sent again and again. */
  identityHeaders?: string[];
  /** The same for an answer to a key (Cache-Control private). */
  identityHeadersPrivate?: string[];
  /** A remembered answer's body, held so that a replay needs no second lookup (see BodyCache.sentAgain). */
  readonly body?: CachedBody;
  /** Replayed since the memo last passed it (the memo is read with peek: no relinking per replay). */
  used?: boolean;
}

/**
 * Cache-Control for a max-age. An answer given for a key is private: a shared cache (a proxy, a CDN) would hand
 * it to callers with another key or none, while each key sees only its own sites (INTERFACE.md section 10).
 */
interface Caching {
  readonly forAnyone: string;
  readonly forKey: string;
}
const caching = (maxAgeS: number): Caching => ({ forAnyone: `public, max-age=${maxAgeS}`, forKey: `private, max-age=${maxAgeS}` });

/** HTTP dates (whole seconds) of recent publication seconds: the runs of one delivery share a few hundred. */
const httpDateOfSecond = keepRecent(512, (second: number) => new Date(second * 1000).toUTCString());

/**
 * The copy of an answer that the memo keeps. Its own allocation site: V8 decides
 * per site whether to allocate straight into the old generation, and switches a
 * site whose objects mostly survive (as the remembered answers of hot pages do)
 * to that. Were the memo to keep the object every answer builds, each answer of
 * a later mixed load would then be old-generation garbage: at 2,000 sites the
 * old space grew by about 10 MB/s, to four times its live size between
 * mark-compacts (peak RSS 400 MB instead of 305) in one run out of two or three.
 */
function remembered(p: Prepared, body: CachedBody): Prepared {
  return {
    body,
    key: p.key,
    tag: p.tag,
    lastModified: p.lastModified,
    modifiedAt: p.modifiedAt,
    caching: p.caching,
    contentType: p.contentType,
    disposition: p.disposition,
    issue: p.issue,
    farmId: p.farmId,
    stamp: p.stamp,
    used: false,
  };
}

export class ForecastService {
  readonly reads: ReadModel;
  readonly bodies: BodyCache;
  /** Remembered answers by raw URL (with the caller's scope and Accept's CSV preference, see memoKey). */
  private readonly memo: SizedLru<string, Prepared>;
  /** Cache-Control of an answer about the latest run, and of one that names its run. */
  private readonly latestCaching: Caching;
  private readonly runCaching: Caching;
  /** Forecast requests answered by a remembered answer (hits) and planned (misses); read by the metrics. */
  readonly replays = { hits: 0, misses: 0 };
  /** A bulk download's entries, found and kept as the rendered answers of the single downloads they equal. */
  readonly entryCopies: EntryCopies;
  /** Why copies on local disk could not be made (the server runs without them), if so. */
  readonly diskProblems: string[] = [];

  constructor(private readonly ctx: AppContext) {
    const settings = ctx.cache ?? DEFAULT_CACHE;
    this.reads = new ReadModel(ctx.store, settings.seriesMb * MB, this.diskRing<RunMeta>(settings, settings.runDiskMb, 'runs', 'run-disk-mb', { rewarm: true, prefill: true }));
    // The memo's bytes are part of the body cache's share of --cache-mb.
    const memo = memoBytes(settings.bodyMb);
    this.bodies = new BodyCache(settings.bodyMb * MB - memo, this.diskRing<BodyCopyMeta>(settings, settings.bodyDiskMb, 'rendered answers', 'body-disk-mb'));
    this.memo = new SizedLru<string, Prepared>(memo, memoEntryBytes, { secondChance: usedSincePassed });
    const bodies = this.bodies;
    this.entryCopies = {
      entry: (key) => bodies.entry(key),
      keepEntry: (key, bytes, crc32) => bodies.keepEntry(key, bytes, crc32),
      farm: (farmId) => this.reads.getFarm(farmId),
      run: (farmId, issue, revision, into) => this.reads.heldRun(farmId, issue, revision, into),
      pool: bodies.pool,
    };
    this.latestCaching = caching(settings.latestMaxAgeS);
    this.runCaching = caching(settings.runMaxAgeS ?? DEFAULT_RUN_MAX_AGE_S);
  }

  /**
   * rewarm and prefill: for the runs' copies, which every mixed answer reads, and not the rendered answers'
   * (up to GBs, mostly read once, written a whole run's archive at a time).
   */
  private diskRing<M>(
    settings: CacheSettings,
    mb: number | undefined,
    what: string,
    setting: string,
    o: { rewarm?: boolean; prefill?: boolean } = {},
  ): DiskRing<M> | undefined {
    if (mb === undefined || mb === 0 || settings.diskDir === undefined) return undefined;
    try {
      return new DiskRing<M>({ dir: settings.diskDir, capacityBytes: mb * MB, ...o });
    } catch (err) {
      this.diskProblems.push(`cannot keep copies of ${what} in ${settings.diskDir} (--${setting}): ${(err as Error).message}`);
      return undefined;
    }
  }

  /** What each cache of answers and runs holds, in the bytes it counts, against its bound (for /metrics). */
  memory(): CacheMemory[] {
    const runs = this.reads.stats();
    return [
      { cache: 'body', bytes: this.bodies.bytes, capacity: this.bodies.capacity },
      { cache: 'memo', bytes: this.memo.bytes, capacity: this.memo.capacity },
      { cache: 'run', bytes: runs.runBytes, capacity: runs.runCapacity },
    ];
  }

  /**
   * A remembered answer is found by the raw URL within the caller's scope: the same URL may name another site
   * (a point's nearest visible site) or none at all for another scope, so answers never cross scopes. A client
   * preferring CSV (Accept) gets its own entries.
   */
  private static memoKey(req: IncomingMessage): string {
    const id = scopeOfRequest(req).id;
    const url = id === '' ? req.url! : `${id}\u0000${req.url!}`;
    return prefersCsv(req.headers.accept) ? `\u0001${url}` : url;
  }

  /**
   * Sends the remembered answer for this request's URL if the read model has not
   * moved since it was prepared and its body is still cached; call after
   * reads.sync(). Returns whether it answered.
   */
  replay(req: IncomingMessage, res: ServerResponse, beforeWrite?: () => void): boolean {
    const p = this.memo.peek(ForecastService.memoKey(req));
    if (p === undefined || p.stamp !== this.reads.stampOf(p.farmId) || p.body === undefined) return false;
    const entry = this.bodies.sentAgain(p.key, p.body);
    if (entry === undefined) return false;
    this.replays.hits++;
    p.used = true;
    beforeWrite?.();
    this.respond(req, res, p, entry);
    return true;
  }

  /**
   * Plans and answers a validated query: in this turn when the read model holds
   * what the plan needs (nearly always), else once it has been read (then a
   * promise). Planning errors (ApiError, store unavailability) are thrown or
   * rejected before anything is written.
   */
  answer(q: ForecastQueryValues, req: IncomingMessage, res: ServerResponse, beforeWrite?: () => void): Maybe<void> {
    // Counted here, once per request planned: a request the direct path hands to the framework was offered to
    // replay() twice.
    this.replays.misses++;
    const stamp = this.reads.stampOf(q.farm_id);
    const plan = planForecast(this.reads, this.ctx.rules, {
      farmId: q.farm_id,
      lat: q.lat,
      lon: q.lon,
      issue: q.issue,
      start: q.start,
      end: q.end,
      elements: q.elements,
    }, scopeOfRequest(req));
    return then(plan, (plan) => this.answerPlan(q, plan, stamp, req, res, beforeWrite));
  }

  private answerPlan(
    q: ForecastQueryValues,
    plan: ForecastPlan,
    stamp: number,
    req: IncomingMessage,
    res: ServerResponse,
    beforeWrite: (() => void) | undefined,
  ): void {
    const csv = q.format === 'csv' || (q.format === undefined && prefersCsv(req.headers.accept));
    const page = q.page ?? 1;
    const size = q.size ?? FORECAST_PAGE.defaultSize;
    const { run } = plan;
    const key = new BodyKey(plan, csv, page, size);
    // A JSON answer shows the site's coordinates, so an import of the site's record after the run modifies it
    // too (If-Modified-Since must not answer 304 for its new body); a CSV file holds the run's values only.
    const modifiedAt = csv ? run.publishedAt : Math.max(run.publishedAt, plan.farm.updatedAt ?? 0);
    const prepared: Prepared = {
      key,
      tag: tagBase(run.revision, key.hash),
      lastModified: httpDateOfSecond(Math.floor(modifiedAt / 1000)),
      modifiedAt,
      caching: q.issue === undefined ? this.latestCaching : this.runCaching,
      contentType: csv ? CSV_TYPE : JSON_TYPE,
      disposition: csv ? `attachment; filename="${csvFileName(plan.farm.farmId, run.issue)}"` : undefined,
      issue: run.issue,
      farmId: q.farm_id,
      stamp,
    };
    // An answer about the latest run with its issue implied is what every customer polls after a delivery:
    // likely asked again, so kept from its first rendering while the cache has room (a fresh server's warm-up
    // at 10,000 sites, docs/performance.md). Queries naming their run are kept from their second sighting.
    const entry = this.bodies.body(
      key,
      (sink) => {
        if (csv) writeCsv(sink, run.view, plan.issueMs, plan.elements, plan.from, plan.to);
        else writeForecastJson(sink, plan, page, size);
      },
      q.issue === undefined,
    );
    // Remembered only while its body is kept (replay needs both), so the body cache's admission on a
    // second sighting decides for both; and only if nothing it depends on changed while planning.
    if (entry.release === undefined && this.reads.stampOf(q.farm_id) === stamp) this.memo.set(ForecastService.memoKey(req), remembered(prepared, entry));
    beforeWrite?.();
    this.respond(req, res, prepared, entry);
  }

  /** Sends the answer whole, with the others of this turn (turnBatch.ts): the headers and body are known, and this is the hot path. */
  private respond(req: IncomingMessage, res: ServerResponse, p: Prepared, entry: CachedBody): void {
    const wanted = chooseCoding(req.headers['accept-encoding']);
    const keyed = principalOf(req)!.keyName !== undefined;
    // What the door decided for CORS is on the response already.
    const vary = res.hasHeader('access-control-allow-origin') ? VARY_ORIGIN : VARY;
    // What the door adds for this caller (its rate limit) follows the answer's own headers.
    const more = answerHeadersOf(req);
    if (notModified(req.headers, p.tag, p.modifiedAt)) {
      // The tag names the coding; the compressed bytes themselves are not needed for a 304.
      sendAtTurnEnd(res, 304, this.validatorHeaders(p, codingOf(entry, wanted), vary, keyed), more, undefined, entry.release);
      return;
    }
    const sent = this.bodies.lease(entry);
    if (wanted === 'identity') {
      sendAtTurnEnd(res, 200, this.identityHeaders(p, entry.identity, vary, keyed), more, entry.identity, sent);
    } else {
      const { bytes, coding } = this.bodies.encoded(p.key, entry, wanted);
      sendAtTurnEnd(res, 200, this.headers200(p, bytes, coding, vary, keyed), more, bytes, sent);
    }
  }

  /** Headers of the 200 answer with the identity body: made once per remembered answer, and per kind of caller. */
  private identityHeaders(p: Prepared, body: Buffer, vary: string, keyed: boolean): string[] {
    if (vary !== VARY) return this.headers200(p, body, 'identity', vary, keyed);
    if (keyed) return (p.identityHeadersPrivate ??= this.headers200(p, body, 'identity', vary, true));
    return (p.identityHeaders ??= this.headers200(p, body, 'identity', vary, false));
  }

  private validatorHeaders(p: Prepared, coding: Coding, vary: string, keyed: boolean): string[] {
    return [
      'etag', entityTag(p.tag, coding),
      'last-modified', p.lastModified,
      'cache-control', keyed ? p.caching.forKey : p.caching.forAnyone,
      'vary', vary,
      'forecast-issue', p.issue,
      'x-content-type-options', 'nosniff',
    ];
  }

  private headers200(p: Prepared, bytes: Buffer, coding: Coding, vary: string, keyed: boolean): string[] {
    const headers = this.validatorHeaders(p, coding, vary, keyed);
    headers.push('content-type', p.contentType, 'content-length', decimalHeader(bytes.length));
    if (coding !== 'identity') headers.push('content-encoding', coding);
    if (p.disposition !== undefined) headers.push('content-disposition', p.disposition);
    return headers;
  }
}
