/**
 * The direct path for GET /api/v1/forecast: requests whose query is certainly
 * valid are answered by the forecast service from the server's request
 * listener, without the framework's routing, hooks and schema validation
 * (measured at 15-20 % of the CPU of an uncached page). Everything else —
 * another path or method, a body, any parameter the framework would coerce,
 * reject or ignore, and every planning error — goes to the framework, which
 * answers it as if the direct path did not exist. Only an unreachable store is
 * answered here, with the framework's 503 envelope, so as not to wait for it
 * twice. The acceptor is deliberately narrower than the schema: it may send a
 * valid request on to the framework, never take one the framework would
 * answer differently.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerHeadersOf } from '../access/principal.js';
import { ApiError } from '../domain/errors.js';
import { requestIdOf } from '../ops/requestId.js';
import { StoreUnavailableError } from '../store/store.js';
import { routeErrorAnswer, writeStoreUnavailable } from './envelope.js';
import type { WireResponse } from './wireExchange.js';
import type { ForecastQueryValues, ForecastService } from './forecastService.js';
import { eachPair, PLAIN_DECIMAL } from './querystring.js';
import { farmIdParam, ForecastQuery, issueParam } from './schemas.js';

const PATH = '/api/v1/forecast';
const ISSUE = new RegExp(issueParam.pattern!);
/** Integers without sign, leading zeros or exponent, small enough to stay exact. */
const PLAIN_INTEGER = /^[1-9][0-9]{0,8}$/;
/**
 * The bit of a name taken here (one each, to notice repeats), 0 for any other name: the framework decides
 * those. A switch, not a lookup in an object: the names are fresh strings cut from the URL, and an object
 * lookup hashes each one (about 1 % of a mixed answer's CPU in a profile).
 */
function paramBit(name: string): number {
  switch (name) {
    case 'farm_id':
      return 1;
    case 'issue':
      return 2;
    case 'start':
      return 4;
    case 'end':
      return 8;
    case 'elements':
      return 16;
    case 'page':
      return 32;
    case 'size':
      return 64;
    case 'format':
      return 128;
    case 'lat':
      return 256;
    case 'lon':
      return 512;
    default:
      return 0;
  }
}
const { lat: LAT, lon: LON, page: PAGE, size: SIZE } = ForecastQuery.properties;

/**
 * The query as the framework's validator would produce it, or undefined when
 * unsure. No intermediate object (this runs for every uncached forecast
 * request); the pairs are read as the framework's parser reads them.
 */
export function directQuery(qs: string): ForecastQueryValues | undefined {
  // Every field present from the start: one object shape whatever the order of the pairs, so the readers
  // of the query stay monomorphic.
  const q: { -readonly [K in keyof ForecastQueryValues]: ForecastQueryValues[K] } = {
    farm_id: undefined,
    issue: undefined,
    start: undefined,
    end: undefined,
    elements: undefined,
    format: undefined,
    lat: undefined,
    lon: undefined,
    page: undefined,
    size: undefined,
  };
  let seen = 0;
  let sure = true;
  eachPair(qs, (name, v) => {
    // A malformed or missing value, an empty one, an unknown name or a repeated one (the framework
    // would see an array): the framework's to answer.
    if (name === null || v === null || v === undefined || v === '') return (sure = false);
    const bit = paramBit(name);
    if (bit === 0 || (seen & bit) !== 0) return (sure = false);
    seen |= bit;
    switch (name) {
      case 'farm_id':
        if (v.length < (farmIdParam.minLength ?? 1)) return (sure = false);
        q.farm_id = v;
        break;
      case 'issue':
        if (!ISSUE.test(v)) return (sure = false);
        q.issue = v;
        break;
      case 'start':
        q.start = v;
        break;
      case 'end':
        q.end = v;
        break;
      case 'elements':
        q.elements = [v];
        break;
      case 'format':
        if (v !== 'json' && v !== 'csv') return (sure = false);
        q.format = v;
        break;
      case 'lat':
      case 'lon': {
        // As the validator coerces a plain decimal (+text), within the schema's bounds.
        const bounds = name === 'lat' ? LAT : LON;
        const n = Number(v);
        if (!PLAIN_DECIMAL.test(v) || !Number.isFinite(n) || n < bounds.minimum! || n > bounds.maximum!) return (sure = false);
        q[name] = n;
        break;
      }
      default: {
        // page or size, within the schema's bounds
        const n = Number(v);
        const bounds = name === 'size' ? SIZE : PAGE;
        if (!PLAIN_INTEGER.test(v) || n < bounds.minimum! || n > (bounds.maximum ?? Infinity)) return (sure = false);
        if (name === 'size') q.size = n;
        else q.page = n;
      }
    }
    return true;
  });
  if (!sure) return undefined;
  // The site by farm_id or by both coordinates; any other combination is the framework's to reject.
  const byId = q.farm_id !== undefined && q.lat === undefined && q.lon === undefined;
  const byPoint = q.farm_id === undefined && q.lat !== undefined && q.lon !== undefined;
  return byId || byPoint ? q : undefined;
}

/** The query of a forecast request target the direct path takes as it is; undefined for any other target. */
export function directTarget(url: string): ForecastQueryValues | undefined {
  if (!url.startsWith(PATH) || url.charCodeAt(PATH.length) !== 63 /* ? */) return undefined;
  return directQuery(url.slice(PATH.length + 1));
}

/**
 * Answers a query the direct path took: a remembered answer when there is one, else planned (in this turn
 * unless the plan needs a store read). What fails before anything is written goes to `otherwise`, but an
 * unreachable store, answered here with the framework's 503 envelope: handing on would make the client wait
 * for a second failed store call.
 */
function answerQuery(
  service: ForecastService,
  q: ForecastQueryValues,
  req: IncomingMessage,
  res: ServerResponse,
  onUnavailable: (err: StoreUnavailableError) => void,
  otherwise: (err: unknown) => void,
): void {
  const failed = (err: unknown): void => {
    if (res.headersSent) {
      res.destroy();
    } else if (err instanceof StoreUnavailableError) {
      onUnavailable(err);
      writeStoreUnavailable(res);
    } else {
      otherwise(err);
    }
  };
  const answer = (): void => {
    if (!service.replay(req, res)) service.answer(q, req, res)?.catch(failed);
  };
  if (!service.reads.current) {
    service.reads.sync().then(answer).catch(failed);
    return;
  }
  try {
    answer();
  } catch (err) {
    failed(err);
  }
}

/**
 * Answers a query directTarget took, for a request of the wire front (wireFront.ts), with no framework
 * behind it: a planning error is answered here as the framework's error handler answers it
 * (routeErrorAnswer; the differential tests hold the two equal), anything else unexpected with 500.
 */
export function wireForecast(
  service: ForecastService,
  onUnavailable: (err: StoreUnavailableError) => void,
  onFault: (err: unknown) => void,
): (q: ForecastQueryValues, req: IncomingMessage, res: WireResponse) => void {
  return (q, req, res) =>
    answerQuery(service, q, req, res.asNode(), onUnavailable, (err) => {
      if (!(err instanceof ApiError)) onFault(err);
      const a = routeErrorAnswer(err, answerHeadersOf(req) ?? [], requestIdOf(req)!);
      res.writeHeadPlaced(a.status, a.headers).end(a.body);
    });
}

/**
 * A request listener in front of the framework's: answers what it can, hands
 * the rest (and any request whose planning fails) to `fallback`.
 */
export function directForecast(
  service: ForecastService,
  closing: () => boolean,
  fallback: (req: IncomingMessage, res: ServerResponse) => void,
  onUnavailable: (err: StoreUnavailableError) => void = () => undefined,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const url = req.url ?? '';
    if (
      req.method !== 'GET' ||
      !url.startsWith(PATH) ||
      url.charCodeAt(PATH.length) !== 63 /* ? */ ||
      closing() ||
      req.headers['content-length'] !== undefined ||
      req.headers['transfer-encoding'] !== undefined
    ) {
      fallback(req, res);
      return;
    }
    // A remembered answer needs neither the query read nor a turn of waiting.
    if (service.reads.current && service.replay(req, res)) return;
    const q = directQuery(url.slice(PATH.length + 1));
    if (q === undefined) {
      fallback(req, res);
      return;
    }
    // Nothing was written on a failure: the framework plans again and answers with its envelope.
    answerQuery(service, q, req, res, onUnavailable, () => fallback(req, res));
  };
}
