/** What the HTTP layer is given by the command that builds it. */
import type { RateLimiter } from '../access/rateLimit/rateLimiter.js';
import type { SiteRules } from '../query/siteLookup.js';
import type { AccessOptions, LimitOptions } from '../settings/serveOptions.js';
import type { Store } from '../store/store.js';

export interface CacheSettings {
  /** Bound of the cache of runs (compact blobs and views), MB. */
  readonly seriesMb: number;
  /** Bound of the cache of rendered bodies (with their compressed variants), MB. */
  readonly bodyMb: number;
  /** max-age, seconds, of a forecast whose run is implied (the latest). */
  readonly latestMaxAgeS: number;
}

export const DEFAULT_CACHE: CacheSettings = Object.freeze({ seriesMb: 128, bodyMb: 64, latestMaxAgeS: 60 });

export interface AppContext {
  readonly store: Store;
  readonly rules: SiteRules;
  readonly version: string;
  readonly cache?: CacheSettings;
  /** How long after its first publication a run may keep receiving before it is partial, ms (default: the setting's). */
  readonly runDeadlineMs?: number;
  /** Keys, scopes and rate limits; what is not given takes its setting's default. */
  readonly access?: Partial<AccessOptions>;
  readonly limits?: Partial<LimitOptions>;
  /** Shared (Redis) rate limits, owned by the caller; default: per process, owned by the app. */
  readonly limiter?: RateLimiter;
}
