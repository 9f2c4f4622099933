/**
 * Request and response schemas (TypeBox). These validate requests and are the
 * source of the OpenAPI document: one definition of each parameter.
 */
import { Type, type TInteger, type TSchema } from '@sinclair/typebox';
import { ELEMENTS, ELEMENT_NAMES } from '../domain/elements.js';
import { CODES } from '../domain/errors.js';
import { RUN_STATUSES } from '../domain/runState.js';
import { FARMS_PAGE, FORECAST_PAGE, ISSUES_PAGE, MAX_PAGE } from '../domain/limits.js';

const TIME_FORMS =
  'ISO 8601 date-time yyyy-MM-ddTHH:mm[:ss[.fff]] (a space may stand for T) with Z, ±HH:mm or ±HHmm; ' +
  'without an offset it is Beijing time (UTC+8); a bare date yyyy-MM-dd means 00:00 Beijing time.';

export const pageParam = Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1, description: 'Page number, 1-based.' });

const sizeParam = (limits: { defaultSize: number; maxSize: number }, what: string): TInteger =>
  Type.Integer({
    minimum: 1,
    maximum: limits.maxSize,
    default: limits.defaultSize,
    description: `Page size (${what}), 1 to ${limits.maxSize}.`,
  });

export const farmIdParam = Type.String({ minLength: 1, description: 'Site ID.' });
export const issueParam = Type.String({
  pattern: '^[0-9]{10}$',
  description: 'Issue (model run) time, UTC, yyyyMMddHH; default is the latest run holding data for the site.',
  examples: ['2026112000'],
});

export const ForecastQuery = Type.Object({
  farm_id: Type.Optional(farmIdParam),
  lon: Type.Optional(
    Type.Number({ minimum: -180, maximum: 180, description: 'Longitude in degrees; must come with lat, not with farm_id.' }),
  ),
  lat: Type.Optional(
    Type.Number({ minimum: -90, maximum: 90, description: 'Latitude in degrees; must come with lon, not with farm_id.' }),
  ),
  issue: Type.Optional(issueParam),
  start: Type.Optional(Type.String({ description: `First valid time (inclusive); default +0h of the run. ${TIME_FORMS}` })),
  end: Type.Optional(Type.String({ description: `Last valid time (inclusive); default +360h of the run. ${TIME_FORMS}` })),
  elements: Type.Optional(
    Type.Array(Type.String(), {
      description:
        'Data fields to return: names separated by commas, and/or the parameter repeated. Default: all fifteen. ' +
        `Names: ${ELEMENT_NAMES.join(', ')}.`,
    }),
  ),
  page: Type.Optional(pageParam),
  size: Type.Optional(sizeParam(FORECAST_PAGE, 'records')),
  format: Type.Optional(
    Type.Union([Type.Literal('json'), Type.Literal('csv')], {
      description: 'json (default) or csv: the whole window as a CSV download, without paging.',
    }),
  ),
});

export const ArchiveQuery = Type.Object({
  issue: Type.Optional(
    Type.String({
      pattern: '^[0-9]{10}$',
      description: 'Issue (model run) time, UTC, yyyyMMddHH; default is the newest run holding data of a site the key may see.',
      examples: ['2026112000'],
    }),
  ),
  start: ForecastQuery.properties.start,
  end: ForecastQuery.properties.end,
  elements: ForecastQuery.properties.elements,
});

export const FarmsQuery = Type.Object({
  page: Type.Optional(pageParam),
  size: Type.Optional(sizeParam(FARMS_PAGE, 'sites')),
});

export const IssuesQuery = Type.Object({
  farm_id: Type.Optional(Type.String({ minLength: 1, description: 'Only runs holding data for this site.' })),
  status: Type.Optional(
    Type.String({
      minLength: 1,
      description: 'Only runs in these states, comma-separated: receiving, complete, partial, superseded.',
      examples: ['complete,partial'],
    }),
  ),
  page: Type.Optional(pageParam),
  size: Type.Optional(sizeParam(ISSUES_PAGE, 'runs')),
});

const envelope = (data: TSchema, description: string): TSchema =>
  Type.Object(
    {
      code: Type.Literal(0),
      message: Type.Literal('success'),
      data,
    },
    { description },
  );

export const ErrorEnvelope = Type.Object(
  {
    code: Type.Union(Object.values(CODES).map((c) => Type.Literal(c.code))),
    message: Type.String({ description: 'One English sentence naming the parameter and the fault.' }),
    data: Type.Null(),
  },
  {
    $id: 'ErrorEnvelope',
    description:
      'Error. Codes: ' + Object.values(CODES).map((c) => `${c.code} (HTTP ${c.status}) ${c.summary}`).join('; ') + '.',
  },
);


const pageFields = {
  total: Type.Integer({ description: 'Number of items over all pages.' }),
  page: Type.Integer(),
  size: Type.Integer(),
};

const nullableNumber = (description: string): TSchema =>
  Type.Union([Type.Number(), Type.Null()], { description: `${description}; null when missing.` });

export const ForecastItem = Type.Object(
  {
    date_time: Type.String({ description: 'Valid time, Beijing time: yyyy-MM-ddTHH:mm:ss+08:00.' }),
    ...Object.fromEntries(
      ELEMENTS.map((e) => [e.name, Type.Optional(nullableNumber(`${e.description} [${e.unit}], ${e.kind}`))]),
    ),
  },
  { description: 'One record: date_time, then the requested fields in catalogue order.' },
);

export const ForecastData = Type.Object({
  farm_id: Type.String(),
  lat: Type.Number(),
  lon: Type.Number(),
  issue_time_utc: Type.String({ description: 'Run start, yyyy-MM-ddTHH:mm:ssZ.' }),
  timezone: Type.Literal('+08:00'),
  resolution_minutes: Type.Literal(15),
  ...pageFields,
  items: Type.Array(ForecastItem),
});

export const FarmItem = Type.Object(
  {
    farm_id: Type.String(),
    lat: Type.Number(),
    lon: Type.Number(),
    name: Type.String(),
  },
  { additionalProperties: Type.String(), description: 'A site; further registry columns follow as strings.' },
);

const beijingTime = (what: string): TSchema => Type.String({ description: `${what}, Beijing time: yyyy-MM-ddTHH:mm:ss+08:00.` });

export const IssueItem = Type.Object({
  issue: Type.String({ description: 'yyyyMMddHH, UTC.' }),
  issue_time_utc: Type.String({ description: 'yyyy-MM-ddTHH:mm:ssZ.' }),
  status: Type.Union(RUN_STATUSES.map((s) => Type.Literal(s)), {
    description:
      'receiving: some expected sites hold data, not all, before the deadline; complete: every expected site holds data; ' +
      'partial: the deadline passed first; superseded: a newer run is complete or partial.',
  }),
  farms: Type.Integer({ description: 'Number of sites (that the key may see) holding data in this run.' }),
  farms_expected: Type.Integer({ description: 'Registered sites the key may see, at the time of the answer.' }),
  available_at: beijingTime('The first publication in the run'),
  completed_at: Type.Union([beijingTime('When the run became complete or partial'), Type.Null()], {
    description: 'When the run became complete or partial; null while receiving.',
  }),
  updated_at: beijingTime('The last publication in the run'),
});

export const ElementItem = Type.Object({
  name: Type.String(),
  description: Type.String(),
  unit: Type.String(),
  kind: Type.Union([Type.Literal('instant'), Type.Literal('accumulated')]),
});

/** Headers of a forecast answer (200 and 304 alike), as a validating proxy reads them. */
const forecastHeaders = {
  ETag: {
    type: 'string',
    description:
      'Strong validator of this representation: the run revision, the normalised query and the content coding.',
  },
  'Last-Modified': {
    type: 'string',
    description: "When this version of the run was published (HTTP date); for JSON, the site's record when it was imported later.",
  },
  'Cache-Control': {
    type: 'string',
    description:
      '`public, max-age=3600` (`--run-max-age`) when issue is given; `public, max-age=60` (`--latest-max-age`) when the latest ' +
      'run is implied; `private` instead of `public` for an answer to an API key, which a shared cache must not hand to another caller.',
  },
  Vary: { type: 'string', description: '`Accept, Accept-Encoding`, and `Origin` when the answer carries CORS headers.' },
  'Forecast-Issue': { type: 'string', description: 'The run the answer was served from, yyyyMMddHH (UTC).' },
} as const;

/** The validators and caching of a bulk download: no Vary (an archive is the same whatever Accept says, and is never compressed). */
const archiveHeaders = {
  ETag: { type: 'string', description: 'Strong validator: the run, the query and the version of every site in it.' },
  'Last-Modified': { type: 'string', description: 'The newest publication among the runs in the archive (HTTP date).' },
  'Cache-Control': { type: 'string', description: '`private, no-cache`: a late site or a replaced run changes the archive; revalidate with the ETag.' },
  'Forecast-Issue': forecastHeaders['Forecast-Issue'],
} as const;

/** The CSV delivery format: a header line (date_time, then the selected fields in catalogue order), one line per record. */
const CsvDownload = {
  type: 'string',
  description:
    'The whole window in the CSV delivery format (UTF-8, LF line ends): header `date_time` then the selected fields in ' +
    'catalogue order; date_time as yyyy-MM-ddTHH:mm:ss+08:00; a missing value is an empty cell.',
  pattern: `^date_time(,(${ELEMENT_NAMES.join('|')}))*\n`,
  examples: [`date_time,t2m,spd100\n2026-11-22T08:00:00+08:00,262.41,7.93\n`],
} as const;

/** On every answer to a caller whose rate is limited (a key, or an address with anon limits). */
const rateLimitHeaders = {
  'RateLimit-Policy': { type: 'string', description: 'The caller\'s bucket: `"default";q=B;w=W` (burst B, refilled over W seconds).' },
  RateLimit: { type: 'string', description: 'What is left: `"default";r=N;t=T` (N whole requests left, T seconds until the bucket is full).' },
} as const;

/** On every answer (INTERFACE.md section 13). */
const requestIdHeader = {
  'X-Request-Id': {
    type: 'string',
    description: 'The request\'s own X-Request-Id when it sent one of 1-64 characters of A-Z a-z 0-9 . _ -, else a new one; logs name it.',
  },
} as const;

const withHeaders = (description: string, headers: Record<string, { type: string; description: string }>): object => ({
  description,
  headers: { ...headers, ...requestIdHeader },
  content: { 'application/json': { schema: Type.Ref('ErrorEnvelope') } },
});

/** An error answer: the envelope, with the headers every answer carries. */
const errorAnswer = (description: string): object => withHeaders(description, {});

const retryAfter = { 'Retry-After': { type: 'string', description: 'Whole seconds after which a retry can pass (at least 1).' } } as const;

/** The answers every guarded operation may give besides its own: no key, too many requests, overloaded. */
const guarded = {
  401: withHeaders('40101: missing or invalid API key (the same answer for every reason).', {
    'WWW-Authenticate': { type: 'string', description: '`Bearer realm="forecastd"`.' },
  }),
  429: withHeaders('42901: rate limited; nothing was done.', { ...retryAfter, ...rateLimitHeaders }),
  500: errorAnswer('50000: internal error.'),
  503: withHeaders('50300: the store is not reachable, the server is shutting down, or it is at its limit of requests in flight.', retryAfter),
};

const okJson = (data: TSchema, description: string): object => ({
  description,
  headers: { ...rateLimitHeaders, ...requestIdHeader },
  content: { 'application/json': { schema: envelope(data, description) } },
});

export const responses = {
  forecast: {
    200: {
      description:
        'The forecast page as JSON; with format=csv (or Accept: text/csv without format) a text/csv download of the whole window.',
      headers: {
        ...forecastHeaders,
        ...rateLimitHeaders,
        ...requestIdHeader,
        'Content-Disposition': {
          type: 'string',
          description: 'CSV downloads only: `attachment; filename="<farm_id>_<issue>.csv"`.',
        },
      },
      content: {
        'application/json': { schema: envelope(ForecastData, 'The forecast page.') },
        'text/csv': { schema: CsvDownload },
      },
    },
    304: {
      description: 'Not modified: the ETag still names the current representation.',
      type: 'null',
      headers: { ...forecastHeaders, ...rateLimitHeaders, ...requestIdHeader },
    },
    400: errorAnswer('40001: a parameter is missing or malformed.'),
    404: errorAnswer('40401: unknown farm_id (or one the key may not see), no such issue, no data, or no site within the match radius.'),
    422: errorAnswer('42201: coordinates outside the service range.'),
    ...guarded,
  },
  archive: {
    200: {
      description: 'The run as a zip of per-site CSV files (application/zip, streamed).',
      headers: {
        ...archiveHeaders,
        ...rateLimitHeaders,
        ...requestIdHeader,
        'Content-Disposition': { type: 'string', description: '`attachment; filename="forecast_<issue>.zip"`.' },
      },
      content: { 'application/zip': { schema: { type: 'string', format: 'binary', description: 'A zip archive, one stored entry per site.' } } },
    },
    304: {
      description: 'Not modified: the ETag still names the archive as it would be sent now.',
      type: 'null',
      headers: { ...archiveHeaders, ...rateLimitHeaders, ...requestIdHeader },
    },
    400: errorAnswer('40001: a parameter is missing or malformed.'),
    404: errorAnswer('40401: no such issue, or none of its sites may be seen by the key.'),
    ...guarded,
  },
  farms: {
    200: okJson(Type.Object({ ...pageFields, items: Type.Array(FarmItem) }), 'Sites sorted by farm_id (those the key may see).'),
    400: errorAnswer('40001: a parameter is malformed.'),
    ...guarded,
  },
  issues: {
    200: okJson(Type.Object({ ...pageFields, items: Type.Array(IssueItem) }), 'Runs, newest first.'),
    400: errorAnswer('40001: a parameter is malformed.'),
    404: errorAnswer('40401: unknown farm_id (or one the key may not see).'),
    ...guarded,
  },
  elements: {
    200: okJson(Type.Object({ total: Type.Integer(), items: Type.Array(ElementItem) }), 'The element catalogue in canonical order.'),
    400: errorAnswer('40001: the query has malformed percent-encoding (parameters are otherwise ignored).'),
    429: guarded[429],
  },
  events: {
    200: {
      description:
        'A text/event-stream that stays open: `retry:` once, then events (`id:`, `event:` run, issue or reset, `data:` one ' +
        'line of JSON) and a comment line at least every --sse-keepalive.',
      headers: {
        ...rateLimitHeaders,
        ...requestIdHeader,
        'Cache-Control': { type: 'string', description: '`no-cache`.' },
        'X-Accel-Buffering': { type: 'string', description: '`no`: a proxy must pass events on at once.' },
      },
      content: {
        'text/event-stream': {
          schema: {
            type: 'string',
            description:
              'event: run, data {"farm_id","issue","revision","published_at"}: a site of the key\'s scope published or replaced its ' +
              'data of a run. event: issue, data {"issue","status","farms","farms_expected"}: a run\'s state changed (counted over ' +
              'the sites the key may see). event: reset: the events after the given id are no longer kept. Ids increase and are ' +
              'the same in every process.',
            examples: [
              'retry: 3000\n\nid: 4210\nevent: run\ndata: {"farm_id":"WF_A","issue":"2026112000","revision":57,' +
                '"published_at":"2026-11-20T09:12:05+08:00"}\n\nid: 4211\nevent: issue\ndata: {"issue":"2026112000",' +
                '"status":"complete","farms":3,"farms_expected":3}\n\n',
            ],
          },
        },
      },
    },
    400: errorAnswer('40001: last_event_id is malformed.'),
    ...guarded,
    429: withHeaders('42901: rate limited, or the key has --sse-max-clients-per-key streams open here; nothing was done.', {
      ...retryAfter,
      ...rateLimitHeaders,
    }),
    503: withHeaders(
      '50300: the store is not reachable, the server is shutting down, or it is at its limit of requests in flight or of ' +
        'open streams (--sse-max-clients).',
      retryAfter,
    ),
  },
} as const;

/** The query of GET /api/v1/events. */
export const EventsQuery = Type.Object({
  last_event_id: Type.Optional(
    Type.String({
      pattern: '^[0-9]{1,16}$',
      description: 'Resume after this event id, as the Last-Event-ID header does (the header wins when both are sent).',
      examples: ['4211'],
    }),
  ),
});

/** The headers GET /api/v1/events reads. */
export const EventsHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      description:
        'Resume after this event id (an EventSource sends it when it reconnects): the events after it come first, in order. ' +
        'An id the server no longer keeps events after gets event: reset.',
    }),
  ),
});
