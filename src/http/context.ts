/** What the HTTP layer is given by the command that builds it. */
import type { RateLimiter } from '../access/rateLimit/rateLimiter.js';
import type { SiteRules } from '../query/siteLookup.js';
import type { AccessOptions, EventOptions, LimitOptions } from '../settings/serveOptions.js';
import type { Store } from '../store/store.js';

export interface CacheSettings {
  /** Bound of the cache of runs (compact blobs and views), MB. */
  readonly seriesMb: number;
  /** Bound of the cache of rendered bodies (with their compressed variants), MB. */
  readonly bodyMb: number;
  /** max-age, seconds, of a forecast whose run is implied (the latest). */
  readonly latestMaxAgeS: number;
  /**
   * max-age, seconds, of a forecast that names its run (issue=): a run changes only when its file is delivered
   * again (a correction), so it may be kept longer, but not for ever. Absent: DEFAULT_RUN_MAX_AGE_S.
   */
  readonly runMaxAgeS?: number;
  /** Local disk for copies of runs read from the store, MB (0: none; absent: none, as in tests of other things). */
  readonly runDiskMb?: number;
  /** Local disk for copies of rendered bodies that left the memory cache, MB (0 or absent: none). */
  readonly bodyDiskMb?: number;
  /** Where those files are made: a folder on a disk. */
  readonly diskDir?: string;
}

/**
 * The local disk a serving process gives copies of runs by default, MB (`--run-disk-mb`): every run of
 * 10,000 sites × 2 runs (about 14 KB each, 273 MB) and the latest run of some 70,000 sites.
 */
export const DEFAULT_RUN_DISK_MB = 1024;

/**
 * The local disk a serving process gives copies of rendered bodies by default, MB (`--body-disk-mb`): about
 * 14,000 whole-run CSV files of 15 fields (about 140 KB each), so that a bulk download of one run of 10,000
 * sites (1.4 GB) is read back whole by the next one, with room for the single downloads and pages besides.
 */
export const DEFAULT_BODY_DISK_MB = 2048;

/**
 * The memory a serving process gives its caches by default, MB (`--cache-mb`). Sized so that the hot set of
 * 10,000 sites (the default page of each site's latest run, about 21 KB rendered, and its remembered answer)
 * stays in memory, and that with every cache full the peak RSS stays under 500 MB (docs/performance.md,
 * "Memory").
 */
export const DEFAULT_CACHE_MB = 300;

/**
 * How the caches share `--cache-mb`: five sixths for rendered answers (with the answers remembered by URL),
 * which spare a request every other cost (a remembered answer needs neither its run nor a render), one sixth
 * for runs, from which answers not yet rendered are made.
 */
export function cacheSplit(cacheMb: number): Pick<CacheSettings, 'seriesMb' | 'bodyMb'> {
  const seriesMb = Math.round(cacheMb / 6);
  return { bodyMb: cacheMb - seriesMb, seriesMb };
}

/** An hour: a corrected run reaches a cache that kept the first version within the hour. */
export const DEFAULT_RUN_MAX_AGE_S = 3600;

export const DEFAULT_CACHE: CacheSettings = Object.freeze({ ...cacheSplit(DEFAULT_CACHE_MB), latestMaxAgeS: 60, runMaxAgeS: DEFAULT_RUN_MAX_AGE_S });

export interface AppContext {
  readonly store: Store;
  readonly rules: SiteRules;
  readonly version: string;
  readonly cache?: CacheSettings;
  /** How long after its first publication a run may keep receiving before it is partial, ms (default: the setting's). */
  readonly runDeadlineMs?: number;
  /** Plain forecast GETs read and answered by the wire front (default: yes; --node-http-only turns it off). */
  readonly wireFront?: boolean;
  /** Keys, scopes and rate limits; what is not given takes its setting's default. */
  readonly access?: Partial<AccessOptions>;
  readonly limits?: Partial<LimitOptions>;
  /** Event streams; what is not given takes its setting's default. */
  readonly events?: Partial<EventOptions> & {
    /** How long the event log keeps entries (--events-keep), ms. */
    readonly keepMs?: number;
    /** Queued bytes beyond which a stream's client is dropped (default 1 MB). */
    readonly bufferBytes?: number;
    /** How often the event log is read when no commit was told of, ms (default 300). */
    readonly pollMs?: number;
    /** The clock tick interval of the event log, ms (default 5 s; the same in every process of a store). */
    readonly tickMs?: number;
  };
  /** Shared (Redis) rate limits, owned by the caller; default: per process, owned by the app. */
  readonly limiter?: RateLimiter;
}
