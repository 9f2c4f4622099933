/**
 * What the HTTP metrics count, kept as plain numbers: per route template, the
 * answers by status code and a histogram of durations. Recording an answer
 * finds the route (a one-entry memo of the last exact route, else a map
 * probe) and adds to typed arrays: no allocation, no label hashing. prom-client
 * reads these at scrape time (metrics.ts); its own `inc` / `observe` with labels
 * hash the labels on every call and cost several times as much
 * (docs/operations.md).
 *
 * Routes are the app's templates (`/api/v1/forecast`, `/docs/static/*`), never
 * a raw URL: any path no route takes counts as `other`, so the label set is
 * fixed by the code, whatever clients send.
 */
import { pathOf } from '../access/routeClass.js';

/** Upper bounds of the duration buckets, seconds: an answer from memory takes tens of µs, a whole-run download ms. */
export const DURATION_BUCKETS_S: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];
const BOUNDS_MS = Float64Array.from(DURATION_BUCKETS_S, (s) => s * 1000);

/** The route label of a path no route takes. */
export const OTHER_ROUTE = 'other';

/** HTTP status codes are three digits (Node refuses others). */
const CODES = 1000;

export class RouteStats {
  /** Answers by status code (index = code). */
  readonly codes = new Float64Array(CODES);
  /** Answers per duration bucket (not cumulative); the last slot counts those over the largest bound. */
  readonly buckets = new Float64Array(BOUNDS_MS.length + 1);
  /** Sum of durations, ms. */
  sumMs = 0;
  count = 0;

  constructor(readonly route: string) {}

  record(status: number, ms: number): void {
    this.codes[status >= 0 && status < CODES ? status : 0]++;
    let b = 0;
    while (b < BOUNDS_MS.length && ms > BOUNDS_MS[b]!) b++;
    this.buckets[b]++;
    this.sumMs += ms;
    this.count++;
  }
}

export class HttpStats {
  private readonly exact = new Map<string, RouteStats>();
  /** Templates ending in `*`, by their prefix. */
  private readonly prefixes: Array<[string, RouteStats]> = [];
  /** Templates with parameters (`/a/:id`). */
  private readonly patterns: Array<[RegExp, RouteStats]> = [];
  readonly other = new RouteStats(OTHER_ROUTE);
  /** The last exact route found and its path: the hot route is nearly always asked again. */
  private lastPath = '\u0000';
  private last: RouteStats = this.other;

  /** Adds a route template (as the framework registers it); adding one again changes nothing. */
  addRoute(template: string): void {
    const path = pathOf(template);
    if (this.exact.has(path) || this.prefixes.some(([, s]) => s.route === path) || this.patterns.some(([, s]) => s.route === path)) return;
    const stats = new RouteStats(path);
    if (path.endsWith('*') && !path.slice(0, -1).includes(':')) {
      this.prefixes.push([path.slice(0, -1), stats]);
    } else if (path.includes(':') || path.includes('*')) {
      const source = path
        .split('/')
        .map((part) => (part.startsWith(':') ? '[^/]+' : part === '*' ? '.*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/');
      this.patterns.push([new RegExp(`^${source}$`), stats]);
    } else {
      this.exact.set(path, stats);
    }
  }

  /** The stats of the route that takes the URL (path and query as the request line has them). */
  routeOf(url: string): RouteStats {
    const last = this.lastPath;
    if (url.startsWith(last)) {
      const next = url.charCodeAt(last.length);
      // NaN: the URL is the path itself; 63: '?'.
      if (next !== next || next === 63) return this.last;
    }
    const path = pathOf(url);
    const stats = this.exact.get(path);
    if (stats !== undefined) {
      this.lastPath = stats.route;
      this.last = stats;
      return stats;
    }
    for (const [prefix, s] of this.prefixes) if (path.startsWith(prefix)) return s;
    for (const [re, s] of this.patterns) if (re.test(path)) return s;
    return this.other;
  }

  /** Counts one answer. */
  record(url: string, status: number, ms: number): void {
    this.routeOf(url).record(status, ms);
  }

  /** Every route, `other` last. */
  routes(): RouteStats[] {
    return [...this.exact.values(), ...this.prefixes.map(([, s]) => s), ...this.patterns.map(([, s]) => s), this.other];
  }
}
