/**
 * Which door rule a path falls under. Every path is guarded (a key, when keys
 * are required) unless it is listed open here; operator endpoints need an
 * admin key. A route added later is guarded without anyone remembering to,
 * and so is any spelling of a path the router might decode onto a guarded one.
 */
export type RouteClass = 'api' | 'open' | 'probe' | 'admin';

/**
 * Health probes: open, and outside the per-address limit of anonymous callers (--anon-rate), which a load
 * balancer probing from one address would otherwise turn into a healthy instance marked down.
 */
export const PROBE_PATHS: readonly string[] = ['/healthz', '/readyz'];

/**
 * Paths any caller may read: health, the API's description and catalogue (what a client needs before it has
 * a key), and the console's page, which asks for a key itself when the API wants one.
 */
export const OPEN_PATHS: readonly string[] = ['/', '/api/v1/openapi.json', '/api/v1/elements', '/docs'];

/** Open path prefixes: static files of the docs page and of the console. */
export const OPEN_PREFIXES: readonly string[] = ['/docs/', '/console/'];

export const ADMIN_PATHS: readonly string[] = ['/metrics'];

/** The path without query and without one trailing slash (the router ignores it too). */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

export function routeClass(url: string): RouteClass {
  // The forecast path first: it is the one asked for thousands of times a second.
  if (url.startsWith('/api/v1/forecast?')) return 'api';
  const path = pathOf(url);
  if (PROBE_PATHS.includes(path)) return 'probe';
  if (OPEN_PATHS.includes(path)) return 'open';
  for (const prefix of OPEN_PREFIXES) if (path.startsWith(prefix)) return 'open';
  return ADMIN_PATHS.includes(path) ? 'admin' : 'api';
}
