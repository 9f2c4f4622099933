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
import { FORECAST_PAGE } from '../domain/limits.js';
import { StoreUnavailableError } from '../store/store.js';
import { writeStoreUnavailable } from './envelope.js';
import type { ForecastQueryValues, ForecastService } from './forecastService.js';
import { decodeParam, PLAIN_DECIMAL } from './querystring.js';
import { farmIdParam, ForecastQuery, issueParam } from './schemas.js';

const PATH = '/api/v1/forecast';
const ISSUE = new RegExp(issueParam.pattern!);
/** Integers without sign, leading zeros or exponent, small enough to stay exact. */
const PLAIN_INTEGER = /^[1-9][0-9]{0,8}$/;
/** The names taken here (one bit each, to notice repeats); any other name means the framework decides. */
const PARAM_BITS = { farm_id: 1, issue: 2, start: 4, end: 8, elements: 16, page: 32, size: 64, format: 128, lat: 256, lon: 512 } as const;
const { lat: LAT, lon: LON } = ForecastQuery.properties;

/** As the framework's parser decodes a key or value (querystring.ts); null when malformed. */
function decodePart(qs: string, from: number, to: number): string | null {
  const s = qs.slice(from, to);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 37 /* % */ || c === 43 /* + */) return decodeParam(s);
  }
  return s;
}

/**
 * The query as the framework's validator would produce it, or undefined when
 * unsure. One pass over the text, no intermediate object (this runs for every
 * uncached forecast request); it reads pairs exactly as querystring.ts does.
 */
export function directQuery(qs: string): ForecastQueryValues | undefined {
  const q: { -readonly [K in keyof ForecastQueryValues]: ForecastQueryValues[K] } = {};
  let seen = 0;
  for (let at = 0; at <= qs.length; ) {
    let amp = qs.indexOf('&', at);
    if (amp < 0) amp = qs.length;
    if (amp === at) {
      at++;
      continue;
    }
    let eq = qs.indexOf('=', at);
    if (eq < 0 || eq > amp) eq = amp;
    const name = decodePart(qs, at, eq);
    // A missing "=" or an empty value is the framework's to reject.
    if (name === null || eq + 1 >= amp) return undefined;
    const v = decodePart(qs, eq + 1, amp);
    if (v === null || v === '') return undefined;
    at = amp + 1;
    const bit = PARAM_BITS[name as keyof typeof PARAM_BITS];
    // An unknown name, or a repeated one (the framework would see an array), is the framework's.
    if (bit === undefined || !Object.hasOwn(PARAM_BITS, name) || (seen & bit) !== 0) return undefined;
    seen |= bit;
    switch (name) {
      case 'farm_id':
        if (v.length < (farmIdParam.minLength ?? 1)) return undefined;
        q.farm_id = v;
        break;
      case 'issue':
        if (!ISSUE.test(v)) return undefined;
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
        if (v !== 'json' && v !== 'csv') return undefined;
        q.format = v;
        break;
      case 'lat':
      case 'lon': {
        // As the validator coerces a plain decimal (+text), within the schema's bounds.
        const bounds = name === 'lat' ? LAT : LON;
        const n = Number(v);
        if (!PLAIN_DECIMAL.test(v) || !Number.isFinite(n) || n < bounds.minimum! || n > bounds.maximum!) return undefined;
        q[name] = n;
        break;
      }
      default: {
        // page or size
        if (!PLAIN_INTEGER.test(v)) return undefined;
        const n = Number(v);
        if (name === 'size') {
          if (n > FORECAST_PAGE.maxSize) return undefined;
          q.size = n;
        } else {
          q.page = n;
        }
      }
    }
  }
  // The site by farm_id or by both coordinates; any other combination is the framework's to reject.
  const byId = q.farm_id !== undefined && q.lat === undefined && q.lon === undefined;
  const byPoint = q.farm_id === undefined && q.lat !== undefined && q.lon !== undefined;
  return byId || byPoint ? q : undefined;
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
    const q = directQuery(url.slice(PATH.length + 1));
    if (q === undefined) {
      fallback(req, res);
      return;
    }
    service.reads
      .sync()
      .then(() => (service.replay(req, res) ? undefined : service.answer(q, req, res)))
      .catch((err: unknown) => {
        if (res.headersSent) {
          res.destroy();
        } else if (err instanceof StoreUnavailableError) {
          // Answered here: handing on would make the client wait for a second failed store call.
          onUnavailable(err);
          writeStoreUnavailable(res);
        } else {
          // Nothing was written: the framework plans again and answers with its envelope.
          fallback(req, res);
        }
      });
  };
}
