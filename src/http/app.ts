/**
 * Builds the HTTP application (never listens): the one place where routes,
 * schemas, the envelope and the OpenAPI document are put together.
 */
import { createServer, type IncomingMessage, type ServerOptions, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyLoggerOptions, type FastifyServerOptions } from 'fastify';
import { Door, doorSettings } from '../access/door.js';
import { Keyring } from '../access/keyring.js';
import { answerHeadersOf, principalOf } from '../access/principal.js';
import { localLimiter } from '../access/rateLimit/localLimiter.js';
import { ApiError, CODES } from '../domain/errors.js';
import { AnswerLog } from '../ops/answerLog.js';
import { countingStore } from '../ops/countingStore.js';
import { logErr } from '../ops/logErr.js';
import { Metrics } from '../ops/metrics.js';
import { metricsRoute } from '../ops/metricsRoute.js';
import { observedResponse } from '../ops/observedResponse.js';
import { assignRequestId, REQUEST_ID_HEADER } from '../ops/requestId.js';
import { storeGauges } from '../ops/storeGauges.js';
import { defaultOf, SETTINGS } from '../settings/definitions.js';
import type { AppContext } from './context.js';
import { directForecast, directTarget, wireForecast } from './directForecast.js';
import { installWireFront, type WireCounts } from './wireFront.js';
import { clientErrorResponse, rawUnroutedResponse, registerErrorHandling, RoutePaths, sendError, writeErrorAnswer, writeInternalError } from './envelope.js';
import { registerOpenApi } from './openapi.js';
import { MALFORMED, parseQuery, PLAIN_DECIMAL, type ParsedQuery } from './querystring.js';
import { elementsRoute } from './routes/elements.js';
import { farmsRoute } from './routes/farms.js';
import { ForecastService } from './forecastService.js';
import { forecastRoute } from './routes/forecast.js';
import { healthRoutes } from './routes/health.js';
import { issuesRoute } from './routes/issues.js';
import { eventsRoute } from './routes/events.js';
import { archiveRoute } from './routes/archive.js';
import { EventHub } from '../events/hub.js';
import { lazySerializers } from './lazySerializers.js';
import { consoleRoutes } from '../console/consoleRoutes.js';
import { DEFAULT_BUFFER_BYTES, EventStreams } from '../events/sse.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The paths the app's GET routes take, as registered. */
    readonly routePaths: RoutePaths;
    /** What the wire front has taken and handed on; undefined when it is not in use. */
    readonly wireCounts: WireCounts | undefined;
  }
}

/** How often Node checks request and header timeouts, ms: they are enforced within this much of their setting. */
const CONNECTIONS_CHECK_MS = 1000;

/** An HTTP/1.1 request must name its Host (RFC 9112, section 3.2): one without is refused, as Node would refuse it. */
const lacksHost = (req: IncomingMessage): boolean => req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1;
const NO_HOST_MESSAGE = 'The request has no Host header; HTTP/1.1 requires one.';

/**
 * Logger options with errors written as type, message and code (ops/logErr.ts) in every log line of the app.
 * The framework's type for this serializer asks for a stack, which is exactly what is left out; the logger
 * itself takes any object.
 */
function withPlainErrors(logger: AppOptions['logger']): FastifyServerOptions['logger'] {
  if (logger === undefined || typeof logger === 'boolean') return logger ?? false;
  const err = logErr as unknown as NonNullable<NonNullable<FastifyLoggerOptions['serializers']>['err']>;
  return { ...logger, serializers: { ...logger.serializers, err } };
}

export interface AppOptions {
  readonly logger?: FastifyServerOptions['logger'];
  /** This process's metrics (the command keeps them to count what it does besides HTTP); default: the app's own. */
  readonly metrics?: Metrics;
  /** The text of every process's metrics added up (a cluster worker asks the primary); default: this process's. */
  readonly scrapeProcesses?: () => Promise<string>;
}

/** A raw answer written to the socket (no response object exists) with the request id after its status line. */
const withRequestIdLine = (raw: string, id: string): string => raw.replace('\r\n', `\r\nX-Request-Id: ${id}\r\n`);

export async function buildApp(appCtx: AppContext, opts: AppOptions = {}): Promise<FastifyInstance> {
  let closing = false;
  const metrics = opts.metrics ?? new Metrics();
  // Every store call of the app is counted when it fails.
  const ctx: AppContext = { ...appCtx, store: countingStore(appCtx.store, () => metrics.storeErrors++) };
  const answers = new AnswerLog(metrics.http);
  const forecasts = new ForecastService(ctx);
  const paths = new RoutePaths();
  let wireCounts: WireCounts | undefined;
  const limits = {
    headersTimeoutMs: ctx.limits?.headersTimeoutMs ?? defaultOf(SETTINGS['headers-timeout'])!,
    requestTimeoutMs: ctx.limits?.requestTimeoutMs ?? defaultOf(SETTINGS['request-timeout'])!,
    keepAliveTimeoutMs: ctx.limits?.keepAliveTimeoutMs ?? defaultOf(SETTINGS['keep-alive-timeout'])!,
  };
  const keyring = new Keyring(ctx.store, { onError: (err) => app.log.warn({ err }, 'reading API keys failed') });
  await keyring.start();
  const limiter = ctx.limiter ?? localLimiter();
  const door = new Door(doorSettings(ctx.access, ctx.limits), keyring, limiter, writeErrorAnswer);
  // The limiter never rejects; should it, the request is answered rather than left hanging.
  const doorFailed = (err: unknown, res: ServerResponse): void => {
    app.log.error({ err }, 'admitting a request failed');
    if (!res.headersSent) writeInternalError(res);
    else res.destroy();
  };
  /** The door first, for every request of either listener: `go` runs once it has admitted the request. */
  const throughDoor = (req: IncomingMessage, res: ServerResponse, go: () => void): void => {
    let admitted: boolean | Promise<boolean>;
    try {
      admitted = door.admit(req, res);
    } catch (err) {
      doorFailed(err, res);
      return;
    }
    if (admitted === true) go();
    else if (admitted !== false) admitted.then((ok) => ok && go(), (err: unknown) => doorFailed(err, res));
  };
  metrics.watch({ memo: forecasts.replays, bodyCache: forecasts.bodies.lookups, runCache: forecasts.reads.runLookups, cacheMemory: () => forecasts.memory(), diskCaches: () => [
      { cache: 'run', stats: forecasts.reads.diskStats() },
      { cache: 'body', stats: forecasts.bodies.diskStats() },
    ], door, limiter });
  // The event log followed by this process, and its event streams (src/events/).
  const eventOptions = ctx.events ?? {};
  const hub = new EventHub({
    store: ctx.store,
    deadlineMs: ctx.runDeadlineMs ?? defaultOf(SETTINGS['run-deadline'])!,
    keepMs: eventOptions.keepMs ?? defaultOf(SETTINGS['events-keep'])!,
    pollMs: eventOptions.pollMs,
    tickMs: eventOptions.tickMs,
    onError: (err, what) => app.log.warn({ err }, what),
  });
  const streams = new EventStreams(
    hub,
    {
      maxClients: eventOptions.maxClients ?? defaultOf(SETTINGS['sse-max-clients'])!,
      maxClientsPerKey: eventOptions.maxClientsPerKey ?? defaultOf(SETTINGS['sse-max-clients-per-key'])!,
      keepaliveMs: eventOptions.keepaliveMs ?? defaultOf(SETTINGS['sse-keepalive'])!,
      bufferBytes: eventOptions.bufferBytes ?? DEFAULT_BUFFER_BYTES,
    },
    (n) => (metrics.sseClients = n),
    // A stream admitted with a key lasts while the key works; one admitted without, while no key is asked for.
    (p) => (p.keyName === undefined ? !door.keysRequired() : keyring.stillAdmits(p, Date.now())),
  );
  metrics.watch({
    events: {
      seen: hub.counts.seen,
      get ticksWritten() {
        return hub.counts.ticksWritten;
      },
      get sent() {
        return streams.counts.sent;
      },
      get dropped() {
        return streams.counts.dropped;
      },
    },
  });
  const app = Fastify({
    // The server's listener tries the direct forecast path first (directForecast.ts); the rest is the
    // framework's. The server is configured as the framework configures its own.
    serverFactory: (handler, options) => {
      // The framework hands its settled options (its defaults applied).
      const o = options as { http?: ServerOptions; keepAliveTimeout: number; requestTimeout: number; connectionTimeout: number; maxRequestsPerSocket: number };
      const direct = directForecast(forecasts, () => closing, handler, (err) => app.log.warn({ err: err.cause ?? err }, 'store unavailable'));
      const server = createServer(
        {
          ...o.http,
          headersTimeout: limits.headersTimeoutMs,
          requestTimeout: limits.requestTimeoutMs,
          keepAliveTimeout: limits.keepAliveTimeoutMs,
          // Node checks the two request timeouts on this interval (30 s by default): a slow client would
          // otherwise hold its connection up to 30 s past them.
          connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
          // Adds X-Request-Id to every answer, and counts and logs each (src/ops/observedResponse.ts).
          ServerResponse: observedResponse(answers),
          // Node's own refusal is a bare 400 without our envelope or headers: the listener answers it instead.
          requireHostHeader: false,
        },
        (req, res) => {
          if (lacksHost(req)) {
            writeErrorAnswer(res, CODES.BAD_PARAMETER, NO_HOST_MESSAGE, ['connection', 'close']);
            return;
          }
          // Whatever the door refuses reaches neither the direct path nor a route.
          throughDoor(req, res, () => direct(req, res));
        },
      );
      server.setTimeout(o.connectionTimeout);
      if (o.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = o.maxRequestsPerSocket;
      // Plain forecast GETs are read and answered by the wire front; the rest of each connection is Node's
      // (wireFront.ts). Not with limits it does not keep: a connection timeout or a cap on requests per socket.
      if (ctx.wireFront !== false && o.connectionTimeout === 0 && o.maxRequestsPerSocket === 0) {
        const wire = wireForecast(
          forecasts,
          (err) => app.log.warn({ err: err.cause ?? err }, 'store unavailable'),
          (err) => app.log.error({ err }, 'internal error'),
        );
        wireCounts = installWireFront(server, {
          closing: () => closing,
          headersTimeoutMs: limits.headersTimeoutMs,
          observer: answers,
          accept: directTarget,
          dispatch: (q, req, res) => throughDoor(req, res.asNode(), () => wire(q, req, res)),
        });
      }
      // Node hands a CONNECT over as a bare socket (and closes it unanswered when nobody listens): no route takes it.
      server.on('connect', (req: IncomingMessage, socket: Duplex) => {
        socket.on('error', () => undefined);
        const answer = paths.answer('CONNECT', req.url ?? '');
        const id = assignRequestId(req, answers.ids);
        answers.answered(req, answer.def.status, 0);
        socket.end(withRequestIdLine(rawUnroutedResponse(answer), id));
      });
      return server;
    },
    logger: withPlainErrors(opts.logger),
    schemaController: { compilersFactory: { buildSerializer: lazySerializers() } },
    // The framework's request id (in its log lines) is the X-Request-Id of the answer.
    genReqId: (req) => assignRequestId(req, answers.ids),
    // The framework's request logging stays off: --access-log writes one line per answer itself, direct path and
    // door refusals included (src/ops/answerLog.ts), and nothing when it is off.
    logController: new LogController({ disableRequestLogging: true }),
    // While draining, answer new requests with our own 503 envelope (hook below), not the framework's body.
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: true, querystringParser: parseQuery },
    frameworkErrors: (err, req, reply) => {
      if (err.code === 'FST_ERR_BAD_URL') {
        return sendError(reply, CODES.BAD_PARAMETER, 'The request path has malformed percent-encoding.');
      }
      return sendError(reply, CODES.BAD_PARAMETER, 'The request is malformed.');
    },
    clientErrorHandler(err, socket) {
      if ((err as NodeJS.ErrnoException).code === 'ECONNRESET' || !socket.writable) return;
      // No request exists: counted under the route `other`, with no duration.
      metrics.http.other.record(CODES.BAD_PARAMETER.status, 0);
      socket.end(withRequestIdLine(clientErrorResponse(err as NodeJS.ErrnoException), answers.ids.next()));
    },
  });
  app.decorate('routePaths', paths);
  for (const problem of forecasts.diskProblems) app.log.warn(problem);
  if (wireCounts !== undefined) metrics.watch({ wire: wireCounts });
  app.decorate('wireCounts', { getter: () => wireCounts });
  if (ctx.access?.accessLog === true) answers.accessLog = app.log.child({}, { level: 'info' });
  app.addHook('onRoute', (route) => metrics.http.addRoute(route.url));
  // Requests that did not come through the server's listener (inject) pass the same door here, first of all hooks.
  app.addHook('onRequest', (req, reply, done) => {
    const admitted = principalOf(req.raw) !== undefined;
    // The door writes its refusals to the raw response; through the listener, the response adds the id itself.
    if (!admitted) reply.raw.setHeader(REQUEST_ID_HEADER, req.id);
    const go = (): void => {
      // Every answer of the framework's routes; the direct path and the door write it in their own headers.
      reply.header('x-content-type-options', 'nosniff');
      const extra = answerHeadersOf(req.raw);
      if (extra !== undefined) for (let i = 0; i < extra.length; i += 2) reply.header(extra[i]!, extra[i + 1]!);
      reply.header(REQUEST_ID_HEADER, req.id);
      done();
    };
    const verdict = admitted || door.admit(req.raw, reply.raw);
    if (verdict === true) go();
    else if (verdict === false) reply.hijack();
    else {
      verdict.then(
        (ok) => (ok ? go() : reply.hijack()),
        (err: unknown) => (reply.hijack(), doorFailed(err, reply.raw)),
      );
    }
  });
  registerErrorHandling(app, paths);
  app.addHook('onClose', async () => {
    await hub.close();
    await keyring.close();
    if (ctx.limiter === undefined) await limiter.close();
    await forecasts.reads.close();
    await forecasts.bodies.close();
  });

  // Callback-style hooks: they run on every request, and async ones cost a promise each.
  app.addHook('onRequest', (req, reply, done) => {
    if (closing) {
      reply.header('connection', 'close');
      done(new ApiError(CODES.UNAVAILABLE, 'The server is shutting down; retry on another instance.'));
      return;
    }
    const bad = (req.query as ParsedQuery)[MALFORMED];
    done(bad === undefined ? undefined : new ApiError(CODES.BAD_PARAMETER, `Query parameter ${bad} has malformed percent-encoding.`));
  });
  // An empty value would be coerced by the validator (to 0 for numbers): treat it as malformed.
  // The validator also coerces hex, exponent, padded and Infinity texts to numbers, and skips its range
  // checks for an infinite result: numbers must be plain, finite decimals. The check is attached to each
  // route with its own parameter types, since reading req.routeOptions per request is costly.
  app.addHook('onRoute', (route) => {
    const props = (route.schema?.querystring as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties;
    if (!props) return;
    const numeric = new Set(Object.keys(props).filter((k) => props[k]!.type === 'number' || props[k]!.type === 'integer'));
    const check = (req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void => {
      const q = req.query as ParsedQuery;
      for (const name in q) {
        if (!Object.hasOwn(props, name)) continue;
        const v = q[name];
        if (v === '' || (Array.isArray(v) && v.includes(''))) {
          done(new ApiError(CODES.BAD_PARAMETER, `Query parameter ${name} is empty.`));
          return;
        }
        if (numeric.has(name) && typeof v === 'string' && !(PLAIN_DECIMAL.test(v) && Number.isFinite(Number(v)))) {
          const fault = PLAIN_DECIMAL.test(v) ? 'is too large' : 'must be a plain decimal number';
          done(new ApiError(CODES.BAD_PARAMETER, `Query parameter ${name} ${fault}.`));
          return;
        }
      }
      done();
    };
    const existing = route.preValidation;
    route.preValidation = existing === undefined ? [check] : [...(Array.isArray(existing) ? existing : [existing]), check];
  });
  app.addHook('preClose', async () => {
    closing = true;
    // Open streams would hold the server until the shutdown grace ends: they end now (clients reconnect elsewhere).
    streams.endAll();
  });

  await hub.start();
  await registerOpenApi(app, ctx.version);
  if (!(await consoleRoutes(app, () => door.keysRequired()))) app.log.warn('the console is not built (npm run build): GET / answers 404');
  healthRoutes(app, ctx, () => closing);
  farmsRoute(app, ctx);
  issuesRoute(app, ctx);
  eventsRoute(app, streams, (res) => door.leaveInFlight(res));
  forecastRoute(app, forecasts);
  archiveRoute(app, ctx, forecasts);
  elementsRoute(app);
  metricsRoute(app, opts.scrapeProcesses ?? (() => metrics.registry.metrics()), storeGauges(ctx.store, ctx.runDeadlineMs ?? defaultOf(SETTINGS['run-deadline'])!));
  return app;
}
