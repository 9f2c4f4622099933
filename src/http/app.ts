/**
 * Builds the HTTP application (never listens): the one place where routes,
 * schemas, the envelope and the OpenAPI document are put together.
 */
import { createServer, type IncomingMessage, type ServerOptions } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { Door, doorSettings } from '../access/door.js';
import { Keyring } from '../access/keyring.js';
import { principalOf } from '../access/principal.js';
import { localLimiter } from '../access/rateLimit/localLimiter.js';
import { ApiError, CODES } from '../domain/errors.js';
import { defaultOf, SETTINGS } from '../settings/definitions.js';
import type { AppContext } from './context.js';
import { directForecast } from './directForecast.js';
import { clientErrorResponse, rawUnroutedResponse, registerErrorHandling, RoutePaths, sendError } from './envelope.js';
import { registerOpenApi } from './openapi.js';
import { MALFORMED, parseQuery, PLAIN_DECIMAL, type ParsedQuery } from './querystring.js';
import { elementsRoute } from './routes/elements.js';
import { farmsRoute } from './routes/farms.js';
import { ForecastService } from './forecastService.js';
import { forecastRoute } from './routes/forecast.js';
import { healthRoutes } from './routes/health.js';
import { issuesRoute } from './routes/issues.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The paths the app's GET routes take, as registered. */
    readonly routePaths: RoutePaths;
  }
}

/** How often Node checks request and header timeouts, ms: they are enforced within this much of their setting. */
const CONNECTIONS_CHECK_MS = 1000;

export interface AppOptions {
  readonly logger?: FastifyServerOptions['logger'];
}

export async function buildApp(ctx: AppContext, opts: AppOptions = {}): Promise<FastifyInstance> {
  let closing = false;
  const forecasts = new ForecastService(ctx);
  const paths = new RoutePaths();
  const limits = {
    headersTimeoutMs: ctx.limits?.headersTimeoutMs ?? defaultOf(SETTINGS['headers-timeout'])!,
    requestTimeoutMs: ctx.limits?.requestTimeoutMs ?? defaultOf(SETTINGS['request-timeout'])!,
    keepAliveTimeoutMs: ctx.limits?.keepAliveTimeoutMs ?? defaultOf(SETTINGS['keep-alive-timeout'])!,
  };
  const keyring = new Keyring(ctx.store, { onError: (err) => app.log.warn({ err }, 'reading API keys failed') });
  await keyring.start();
  const limiter = ctx.limiter ?? localLimiter();
  const door = new Door(doorSettings(ctx.access, ctx.limits), keyring, limiter);
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
        },
        // The door first, for every request: whatever it refuses reaches neither the direct path nor a route.
        (req, res) => {
          if (door.admit(req, res)) direct(req, res);
        },
      );
      server.setTimeout(o.connectionTimeout);
      if (o.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = o.maxRequestsPerSocket;
      // Node hands a CONNECT over as a bare socket (and closes it unanswered when nobody listens): no route takes it.
      server.on('connect', (req: IncomingMessage, socket: Duplex) => {
        socket.on('error', () => undefined);
        socket.end(rawUnroutedResponse(paths.answer('CONNECT', req.url ?? '')));
      });
      return server;
    },
    logger: opts.logger ?? false,
    // Access logs belong to the proxy in front; per-request log lines would cost more than the request.
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
      socket.end(clientErrorResponse(err as NodeJS.ErrnoException));
    },
  });
  app.decorate('routePaths', paths);
  // Requests that did not come through the server's listener (inject) pass the same door here, first of all hooks.
  app.addHook('onRequest', (req, reply, done) => {
    if (principalOf(req.raw) !== undefined || door.admit(req.raw, reply.raw)) {
      // Every answer of the framework's routes; the direct path and the door write it in their own headers.
      reply.header('x-content-type-options', 'nosniff');
      done();
    } else reply.hijack();
  });
  registerErrorHandling(app, paths);
  app.addHook('onClose', async () => {
    await keyring.close();
    if (ctx.limiter === undefined) await limiter.close();
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
          done(new ApiError(CODES.BAD_PARAMETER, `Query parameter ${name} must be a plain decimal number.`));
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
  });

  await registerOpenApi(app, ctx.version);
  healthRoutes(app, ctx, () => closing);
  farmsRoute(app, ctx);
  issuesRoute(app, ctx);
  forecastRoute(app, forecasts);
  elementsRoute(app);
  return app;
}
