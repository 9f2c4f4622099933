/**
 * The one door every request passes, before routing and before the direct
 * forecast path: CORS preflight, the in-flight cap, the key, its scope and its
 * rate. It either admits the request (admitAs: the routes read the scope from
 * it) or answers it itself. The server's listener calls it first; a framework
 * hook calls it for requests that did not come through the listener (inject),
 * so there is no way to a route around it.
 *
 * Order: a preflight is answered before anything (browsers send no key with
 * it); then the in-flight cap (cheapest refusal of load); then, for guarded
 * paths, the key: its form (a checksum, so garbage costs no lookup), then the
 * key table in memory. A failed key costs the client address a token of the
 * failed-authentication bucket, never the key's. An admitted key pays one
 * token of its own bucket, whatever the answer.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { clip, CODES, type CodeDef } from '../domain/errors.js';
import type { KeyEntry, Keyring } from './keyring.js';
import { admitAs, ANONYMOUS, setAnswerHeaders, type Principal } from './principal.js';
import { defaultOf, SETTINGS } from '../settings/definitions.js';
import type { AccessOptions, LimitOptions } from '../settings/serveOptions.js';
import { newDecision, type Decision } from './rateLimit/decision.js';
import { limitHeader, policyHeader } from './rateLimit/headers.js';
import type { RateLimiter } from './rateLimit/rateLimiter.js';
import { routeClass, type RouteClass } from './routeClass.js';

export type AuthMode = 'auto' | 'required' | 'off';

export interface DoorSettings {
  readonly auth: AuthMode;
  readonly defaultRate: number;
  readonly defaultBurst: number;
  readonly authFailRate: number;
  readonly authFailBurst: number;
  /** Per client address when no key is asked for; undefined: no limit. */
  readonly anonRate: number | undefined;
  readonly anonBurst: number | undefined;
  /** Requests answered at once at most per process; beyond, 503. 0: no cap. */
  readonly maxInFlight: number;
  readonly corsOrigins: readonly string[];
}

/** The door's settings from serve's options; what is not given takes the default of its setting's one definition. */
export function doorSettings(access: Partial<AccessOptions> = {}, limits: Partial<LimitOptions> = {}): DoorSettings {
  return {
    auth: access.auth ?? defaultOf(SETTINGS.auth)!,
    defaultRate: access.defaultRate ?? defaultOf(SETTINGS['default-rate'])!,
    defaultBurst: access.defaultBurst ?? defaultOf(SETTINGS['default-burst'])!,
    authFailRate: access.authFailRate ?? defaultOf(SETTINGS['auth-fail-rate'])!,
    authFailBurst: access.authFailBurst ?? defaultOf(SETTINGS['auth-fail-burst'])!,
    anonRate: access.anonRate,
    anonBurst: access.anonBurst,
    maxInFlight: limits.maxInFlight ?? defaultOf(SETTINGS['max-in-flight'])!,
    corsOrigins: access.corsOrigins ?? defaultOf(SETTINGS['cors-origin'])!,
  };
}

export const UNAUTHORIZED_MESSAGE = 'A valid API key is required: send it as "Authorization: Bearer KEY" or "X-API-Key: KEY".';
const WWW_AUTHENTICATE = 'Bearer realm="forecastd"';
const EXPOSED = 'RateLimit, RateLimit-Policy, Retry-After, ETag, Forecast-Issue, X-Request-Id';
const PREFLIGHT_HEADERS = 'Authorization, X-API-Key, X-Request-Id, If-None-Match, If-Modified-Since, Accept, Last-Event-ID';

/** Whether a header value starts with `Bearer ` in any letter case. */
function isBearer(value: string): boolean {
  const word = 'bearer ';
  for (let i = 0; i < word.length; i++) {
    const c = value.charCodeAt(i);
    // A letter of either case matches its lower case; the space only itself.
    if ((i < 6 ? c | 32 : c) !== word.charCodeAt(i)) return false;
  }
  return true;
}

/** The key a request names, or null when it names none; '' when what it sends cannot be a key. */
export function presentedKey(req: IncomingMessage): string | null {
  const auth = req.headers.authorization;
  const header = req.headers['x-api-key'];
  let fromAuth: string | null = null;
  if (auth !== undefined) {
    // Scheme case-insensitive (RFC 9110); exactly one space; nothing else. Compared by character codes: the
    // header comes with every request.
    fromAuth = auth.length > 7 && isBearer(auth) ? auth.slice(7) : '';
  }
  // A repeated X-API-Key arrives joined with ", " and fails the form check.
  const fromHeader = typeof header === 'string' ? header : header === undefined ? null : '';
  if (fromAuth !== null && fromHeader !== null) return fromAuth === fromHeader ? fromAuth : '';
  return fromAuth ?? fromHeader;
}

function clientAddress(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? '';
}

/** Writes the error envelope of `def` with `message` and extra headers to a response nothing was written to. */
export type ErrorAnswerWriter = (res: ServerResponse, def: CodeDef, message: string, headers: readonly string[]) => void;

export class Door {
  private inFlight = 0;
  private readonly leave = (): void => {
    this.inFlight--;
  };
  /** Requests refused with 429, read by the metrics at scrape time. */
  rateLimited = 0;
  /** Filled by each take: the decision is read before the next one. */
  private readonly decision = newDecision();
  private readonly cors: ReadonlySet<string>;

  constructor(
    private readonly settings: DoorSettings,
    private readonly keys: Keyring,
    private readonly limiter: RateLimiter,
    /** Writes a refusal: the HTTP layer's own error-envelope writer, so that the envelope is spelled once. */
    private readonly refuse: ErrorAnswerWriter,
    private readonly now: () => number = Date.now,
  ) {
    this.cors = new Set(settings.corsOrigins);
  }

  /** Whether keys are asked for at this moment. */
  keysRequired(): boolean {
    const mode = this.settings.auth;
    return mode === 'required' || (mode === 'auto' && this.keys.hasLiveKeys());
  }

  /**
   * Admits the request (true: go on to the route) or answers it (false); a
   * promise of either while a shared rate limit is being asked. Admitting twice is harmless: the second call sees the
   * principal already set and lets it through (the framework hook after the
   * listener).
   */
  admit(req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean> {
    const origin = req.headers.origin;
    if (origin !== undefined && this.cors.size > 0 && this.cors.has(origin)) {
      if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
        res.writeHead(204, [
          'access-control-allow-origin', origin,
          'access-control-allow-methods', 'GET, HEAD',
          'access-control-allow-headers', PREFLIGHT_HEADERS,
          'access-control-max-age', '600',
          'vary', 'Origin',
          'x-content-type-options', 'nosniff',
        ]);
        res.end();
        return false;
      }
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('access-control-expose-headers', EXPOSED);
      res.appendHeader('vary', 'Origin');
    }
    if (this.settings.maxInFlight > 0) {
      if (this.inFlight >= this.settings.maxInFlight) {
        this.refuse(res, CODES.UNAVAILABLE, 'The server is at its limit of requests in flight; retry shortly.', ['retry-after', '1']);
        return false;
      }
      this.inFlight++;
      // A response emits 'close' exactly once (Node guards it with _closed): a shared listener, no once() wrapper.
      res.on('close', this.leave);
    }
    const kind = routeClass(req.url ?? '/');
    if (kind === 'probe') {
      admitAs(req, ANONYMOUS);
      return true;
    }
    if (kind === 'open' || !this.keysRequired()) {
      return this.admitAnonymous(req, res, kind === 'admin');
    }
    const text = presentedKey(req);
    const key = text === null || text === '' ? undefined : this.keys.lookup(text, this.now());
    if (key === undefined) {
      const d = this.limiter.take('authfail', clientAddress(req), this.settings.authFailRate, this.settings.authFailBurst, this.now(), this.decision);
      if (!d.allowed) {
        this.tooMany(res, d, []);
        return false;
      }
      this.refuse(res, CODES.UNAUTHORIZED, UNAUTHORIZED_MESSAGE, ['www-authenticate', WWW_AUTHENTICATE]);
      return false;
    }
    const rate = key.rate ?? this.settings.defaultRate;
    const burst = key.burst ?? this.settings.defaultBurst;
    // Nearly always decided at once; with shared limits, a key this process holds no tokens for waits for
    // the exchange with Redis already under way (a few ms at most) rather than being refused.
    const d = this.limiter.acquire('key', key.bucket, rate, burst, this.now());
    if (d instanceof Promise) return d.then((d) => this.admitKey(req, res, key, kind, d, rate, burst));
    return this.admitKey(req, res, key, kind, d, rate, burst);
  }

  /**
   * A long-lived answer (an event stream) leaves the count of requests in
   * flight once it starts: streams have their own limit (--sse-max-clients)
   * and would otherwise hold --max-in-flight places for hours. Called once
   * per admitted response; the count is put back when it closes, just after
   * the door takes it off for that close.
   */
  leaveInFlight(res: ServerResponse): void {
    if (this.settings.maxInFlight <= 0) return;
    this.inFlight--;
    res.once('close', () => this.inFlight++);
  }

  private admitKey(req: IncomingMessage, res: ServerResponse, key: KeyEntry, kind: RouteClass, d: Decision, rate: number, burst: number): boolean {
    const policy = policyHeader(burst, rate);
    if (!d.allowed) {
      this.tooMany(res, d, ['ratelimit-policy', policy, 'ratelimit', limitHeader(d)]);
      return false;
    }
    const limits = ['ratelimit-policy', policy, 'ratelimit', limitHeader(d)];
    setAnswerHeaders(req, limits);
    if (kind === 'admin' && !key.admin) {
      // Exactly what a path that does not exist gets, the request's cost in its limit included: an ordinary
      // key learns nothing of operator endpoints.
      this.refuse(res, CODES.NO_ENDPOINT, `No endpoint ${req.method ?? 'GET'} ${clip((req.url ?? '').split('?')[0]!, 80)}.`, limits);
      return false;
    }
    admitAs(req, key.principal);
    return true;
  }

  private admitAnonymous(req: IncomingMessage, res: ServerResponse, admin: boolean): boolean {
    const { anonRate, anonBurst } = this.settings;
    if (anonRate !== undefined && anonBurst !== undefined) {
      const d = this.limiter.take('anon', clientAddress(req), anonRate, anonBurst, this.now(), this.decision);
      const policy = policyHeader(anonBurst, anonRate);
      if (!d.allowed) {
        this.tooMany(res, d, ['ratelimit-policy', policy, 'ratelimit', limitHeader(d)]);
        return false;
      }
      setAnswerHeaders(req, ['ratelimit-policy', policy, 'ratelimit', limitHeader(d)]);
    }
    // Without keys, operator endpoints are as open as the rest: whoever can reach the port operates it.
    admitAs(req, admin ? ANONYMOUS_OPERATOR : ANONYMOUS);
    return true;
  }

  private tooMany(res: ServerResponse, d: Decision, headers: string[]): void {
    this.rateLimited++;
    const s = String(d.retryAfterS);
    this.refuse(res, CODES.RATE_LIMITED, `Too many requests: the rate limit is reached; retry after ${s} s.`, [...headers, 'retry-after', s]);
  }
}

const ANONYMOUS_OPERATOR: Principal = Object.freeze({ ...ANONYMOUS, admin: true });
