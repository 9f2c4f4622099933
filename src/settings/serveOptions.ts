/** serve's settings as the typed options object the command runs with, with the checks that involve several settings. */
import { tmpdir } from 'node:os';
import { dirname } from 'node:path';
import type { RangeBox } from '../domain/geo.js';
import { cacheSplit, type CacheSettings } from '../http/context.js';
import { parseStoreUrl, type StoreOptions } from '../store/openStore.js';
import { formatDuration } from './duration.js';
import type { ValueOf } from './definitions.js';
import type { Resolved } from './resolve.js';

/** Who may call and how often (INTERFACE.md section 10); read here, enforced by the HTTP layer. */
export interface AccessOptions {
  readonly auth: ValueOf<'auth'>;
  /** Requests per second and bucket size of a key that sets none of its own. */
  readonly defaultRate: number;
  readonly defaultBurst: number;
  /** Failed key attempts per client address. */
  readonly authFailRate: number;
  readonly authFailBurst: number;
  /** With auth off: a limit per client address, when both are set. */
  readonly anonRate?: number;
  readonly anonBurst?: number;
  /** Redis shared by every process for rate limits; per process without it. */
  readonly redis?: string;
  readonly corsOrigins: readonly string[];
  readonly accessLog: boolean;
}

/** Resource limits per process. */
export interface LimitOptions {
  readonly maxInFlight: number;
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
}

/** Server-Sent Events (INTERFACE.md section 14); how long the log keeps entries is eventsKeepMs. */
export interface EventOptions {
  /** A stream with nothing to send gets a comment line this often, ms. */
  readonly keepaliveMs: number;
  /** Streams open at once per process. */
  readonly maxClients: number;
  /** Streams open at once per key and process. */
  readonly maxClientsPerKey: number;
}

/** Watch-folder ingest (INTERFACE.md section 12): the folder and how long a file must stand still. */
export interface WatchSettings {
  readonly dir: string;
  readonly settleMs: number;
  readonly threads: number;
}

/** The folder to watch, if any (serve and ingest). */
export function watchSettings(s: Resolved): WatchSettings | undefined {
  const dir = s.value('watch');
  return dir === undefined ? undefined : { dir, settleMs: s.value('settle'), threads: s.value('ingest-threads') };
}

export interface ServeOptions {
  readonly port: number;
  readonly host: string;
  readonly db: string;
  readonly range: RangeBox;
  readonly matchRadiusKm: number;
  readonly level: ValueOf<'log-level'>;
  readonly workers: number;
  readonly cache: CacheSettings;
  /** How long after its first publication a run may keep receiving before it is partial, ms. */
  readonly runDeadlineMs: number;
  /** Runs issued longer ago than this many days are removed (never a site's newest); 0 keeps everything. */
  readonly retentionDays: number;
  /** Event log entries older than this are removed (never the newest), ms. */
  readonly eventsKeepMs: number;
  /** After SIGTERM / SIGINT, how long in-flight requests may take before their connections are closed, ms. */
  readonly shutdownGraceMs: number;
  /** Plain forecast GETs are read and answered by the wire front (http/wireFront.ts); false: by node:http too. */
  readonly wireFront: boolean;
  readonly store: StoreOptions;
  readonly access: AccessOptions;
  readonly limits: LimitOptions;
  readonly events: EventOptions;
  readonly watch?: WatchSettings;
  /** Webhooks (INTERFACE.md section 14): deliver to loopback and private network addresses too. */
  readonly webhookAllowPrivate: boolean;
}

/** Where the caches' copies on disk go: beside an SQLite store (a disk the operator chose for data), else the system's temporary folder. */
function diskDir(db: string): string {
  const loc = parseStoreUrl(db);
  return loc.kind === 'sqlite' ? dirname(loc.path) : tmpdir();
}

/** The options of `serve` (or of `config`, which shows serve's); throws a SettingError when settings contradict each other. */
export function serveOptions(s: Resolved): ServeOptions {
  const db = s.value('db');
  const readDb = s.value('read-db');
  if (readDb !== undefined && (parseStoreUrl(db).kind !== 'postgres' || parseStoreUrl(readDb).kind !== 'postgres')) {
    throw s.error('read-db', 'needs PostgreSQL URLs for both db and read-db');
  }
  const headersTimeoutMs = s.value('headers-timeout');
  const requestTimeoutMs = s.value('request-timeout');
  if (headersTimeoutMs > requestTimeoutMs) {
    throw s.error('headers-timeout', `must not be longer than request-timeout (${formatDuration(requestTimeoutMs)})`);
  }
  return {
    port: s.value('port'),
    host: s.value('host'),
    db,
    range: s.value('range'),
    matchRadiusKm: s.value('match-radius-km'),
    level: s.value('log-level'),
    workers: s.value('workers'),
    runDeadlineMs: s.value('run-deadline'),
    retentionDays: s.value('retention-days'),
    eventsKeepMs: s.value('events-keep'),
    shutdownGraceMs: s.value('shutdown-grace'),
    wireFront: !s.value('node-http-only'),
    cache: {
      ...cacheSplit(s.value('cache-mb')),
      latestMaxAgeS: s.value('latest-max-age'),
      runMaxAgeS: s.value('run-max-age'),
      runDiskMb: s.value('run-disk-mb'),
      bodyDiskMb: s.value('body-disk-mb'),
      diskDir: diskDir(db),
    },
    store: {
      readUrl: readDb,
      poolSize: s.value('pg-pool-size'),
      connectTimeoutMs: s.value('pg-connect-timeout-ms'),
      statementTimeoutMs: s.value('pg-statement-timeout-ms'),
    },
    access: {
      auth: s.value('auth'),
      defaultRate: s.value('default-rate'),
      defaultBurst: s.value('default-burst'),
      authFailRate: s.value('auth-fail-rate'),
      authFailBurst: s.value('auth-fail-burst'),
      anonRate: s.value('anon-rate'),
      anonBurst: s.value('anon-burst'),
      redis: s.value('redis'),
      corsOrigins: s.value('cors-origin'),
      accessLog: s.value('access-log'),
    },
    limits: {
      maxInFlight: s.value('max-in-flight'),
      headersTimeoutMs,
      requestTimeoutMs,
      keepAliveTimeoutMs: s.value('keep-alive-timeout'),
    },
    events: {
      keepaliveMs: s.value('sse-keepalive'),
      maxClients: s.value('sse-max-clients'),
      maxClientsPerKey: s.value('sse-max-clients-per-key'),
    },
    watch: watchSettings(s),
    webhookAllowPrivate: s.value('webhook-allow-private'),
  };
}
