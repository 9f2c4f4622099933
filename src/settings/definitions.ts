/**
 * Every setting of every command, defined once: its kind of value, default,
 * unit, whether it is secret, which commands take it and its help line. The
 * command line, the environment, the config file, each command's --help,
 * `forecastd config` and the README's settings table are all read from here.
 */
import { availableParallelism } from 'node:os';
import { DEFAULT_MATCH_RADIUS_KM, DEFAULT_RANGE } from '../domain/limits.js';
import { DEFAULT_BODY_DISK_MB, DEFAULT_CACHE, DEFAULT_CACHE_MB, DEFAULT_RUN_DISK_MB, DEFAULT_RUN_MAX_AGE_S } from '../http/context.js';
import { DEFAULT_DB } from '../store/openStore.js';
import { PG_DEFAULTS } from '../store/store.js';
import { choice, duration, farmIds, integer, number, onOff, origins, rangeBox, redisUrl, storeUrl, text, wholeSeconds, type Kind } from './kinds.js';

/** The commands that take settings (`farms` is `farms import`; `config` takes every setting of `serve`). */
export type CommandName = 'serve' | 'ingest' | 'farms' | 'demo' | 'migrate-store' | 'config' | 'keys' | 'status' | 'prune' | 'webhooks';
export const COMMAND_NAMES: readonly CommandName[] = ['serve', 'ingest', 'farms', 'demo', 'migrate-store', 'config', 'keys', 'status', 'prune', 'webhooks'];

/** Where a setting can come from besides its default. */
export type Origin = 'flag' | 'env' | 'file';

export interface SettingDef<T = any, HasDefault extends boolean = boolean> {
  /** The long name: the flag `--name`, the variable FORECASTD_NAME, the file key "name". */
  readonly name: string;
  readonly kind: Kind<T>;
  /** The value when no source sets it; a function when it depends on the machine. Absent: unset. */
  readonly default: HasDefault extends true ? T | (() => T) : undefined;
  /** How help and the README show the default, when not as the value itself ("number of cores"). */
  readonly defaultText?: string;
  /** The command cannot run without it (the command checks; help and the README say so). */
  readonly required?: boolean;
  /** The unit of a number ("MB", "requests/s"). */
  readonly unit?: string;
  /** How to print it: `url` hides the password inside a URL, `url-user` also a lone user name, `all` the whole value. */
  readonly secret?: 'url' | 'url-user' | 'all';
  readonly commands: readonly CommandName[];
  /** The value's placeholder after the flag in help (`--port N`); none for a switch. */
  readonly arg?: string;
  /** One line of help. */
  readonly help: string;
  /** Where it may come from; default all three. */
  readonly origins?: readonly Origin[];
}

type Spec<T> = Omit<SettingDef<T>, 'name' | 'default'>;
const withDefault = <T>(spec: Spec<T> & { default: NoInfer<T> | (() => NoInfer<T>) }): Omit<SettingDef<T, true>, 'name'> => spec;
const unset = <T>(spec: Spec<T>): Omit<SettingDef<T, false>, 'name'> => ({ ...spec, default: undefined });

const STORE_COMMANDS: readonly CommandName[] = ['serve', 'ingest', 'farms', 'demo', 'keys', 'status', 'prune', 'webhooks'];
const EVERY_COMMAND = COMMAND_NAMES;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const AUTH_MODES = ['auto', 'required', 'off'] as const;
/** The config file read when neither --config nor FORECASTD_CONFIG names one, if it exists. */
export const DEFAULT_CONFIG_FILE = './forecastd.config.json';

const requests = integer(1, 1_000_000_000);
const perSecond = number({ min: 0, exclusive: true, max: 1_000_000 });

const TABLE = {
  config: unset({
    kind: text('a file path'),
    defaultText: `${DEFAULT_CONFIG_FILE} when it exists`,
    commands: EVERY_COMMAND,
    arg: 'FILE',
    help: 'JSON config file whose keys are setting names',
    origins: ['flag', 'env'],
  }),
  db: withDefault({
    kind: storeUrl,
    default: DEFAULT_DB,
    secret: 'url',
    commands: STORE_COMMANDS,
    arg: 'URL',
    help: 'store: sqlite:PATH (or a bare path) or postgres://...',
  }),
  port: withDefault({ kind: integer(0, 65535), default: 8080, commands: ['serve'], arg: 'N', help: 'TCP port to listen on; 0 picks a free one' }),
  host: withDefault({ kind: text('an address or host name'), default: '127.0.0.1', commands: ['serve'], arg: 'ADDR', help: 'address to bind' }),
  range: withDefault({
    kind: rangeBox,
    default: DEFAULT_RANGE,
    unit: 'degrees',
    commands: ['serve'],
    arg: 'LON0,LAT0,LON1,LAT1',
    help: 'service range box for coordinate queries',
  }),
  'match-radius-km': withDefault({
    kind: number({ min: 0 }),
    default: DEFAULT_MATCH_RADIUS_KM,
    unit: 'km',
    commands: ['serve'],
    arg: 'KM',
    help: 'a point is served by the nearest site within this radius',
  }),
  workers: withDefault({
    kind: integer(1, 256),
    default: () => availableParallelism(),
    defaultText: 'number of cores',
    unit: 'processes',
    commands: ['serve'],
    arg: 'N',
    help: 'processes serving the port (node:cluster)',
  }),
  'cache-mb': withDefault({
    kind: integer(0, 1 << 20),
    default: DEFAULT_CACHE_MB,
    unit: 'MB',
    commands: ['serve'],
    arg: 'MB',
    help: 'memory for the caches of each serving process: five sixths for rendered answers, one sixth for runs (docs/deployment.md: the memory it implies)',
  }),
  'run-disk-mb': withDefault({
    kind: integer(0, 1 << 24),
    default: DEFAULT_RUN_DISK_MB,
    unit: 'MB',
    commands: ['serve'],
    arg: 'MB',
    help: "local disk for copies of runs read from the store, read before asking the store again; in the SQLite store's folder, or the system's temporary folder for PostgreSQL (0: none)",
  }),
  'body-disk-mb': withDefault({
    kind: integer(0, 1 << 24),
    default: DEFAULT_BODY_DISK_MB,
    unit: 'MB',
    commands: ['serve'],
    arg: 'MB',
    help: 'local disk for copies of rendered answers that left the memory cache (whole-run CSV files, pages) and of bulk downloads\' entries, read back instead of rendering again; in the same folder as --run-disk-mb (0: none)',
  }),
  'latest-max-age': withDefault({
    kind: wholeSeconds(0, 31_536_000),
    default: DEFAULT_CACHE.latestMaxAgeS,
    unit: 's',
    commands: ['serve'],
    arg: 'S',
    help: 'Cache-Control max-age when the latest run is implied',
  }),
  'run-max-age': withDefault({
    kind: wholeSeconds(0, 31_536_000),
    default: DEFAULT_RUN_MAX_AGE_S,
    unit: 's',
    commands: ['serve'],
    arg: 'S',
    help: 'Cache-Control max-age when the run is named (issue=); a run changes only when its file is delivered again',
  }),
  'retention-days': withDefault({
    kind: integer(0, 36_500),
    default: 30,
    unit: 'days',
    commands: ['serve', 'prune'],
    arg: 'N',
    help: "remove runs issued longer ago than this (never a site's newest run; 0 keeps everything)",
  }),
  'dry-run': withDefault({ kind: onOff, default: false, commands: ['prune'], help: 'prune: print what would be removed, remove nothing', origins: ['flag'] }),
  'shutdown-grace': withDefault({
    kind: duration(0, 3_600_000),
    default: 10_000,
    commands: ['serve'],
    arg: 'DURATION',
    help: 'after SIGTERM / SIGINT, how long in-flight requests may take before their connections are closed',
  }),
  'run-deadline': withDefault({
    kind: duration(60_000, 30 * 86_400_000),
    default: 3 * 3_600_000,
    commands: ['serve', 'status'],
    arg: 'DURATION',
    help: "a run still missing sites this long after its first file is partial",
  }),
  'events-keep': withDefault({
    // At least a day: section 14 promises a client a day to resume in.
    kind: duration(86_400_000, 365 * 86_400_000),
    default: 86_400_000,
    commands: ['serve', 'prune'],
    arg: 'DURATION',
    help: 'how long the event log keeps events for clients that resume (GET /api/v1/events with Last-Event-ID)',
  }),
  'sse-keepalive': withDefault({
    kind: duration(1_000, 3_600_000),
    default: 15_000,
    commands: ['serve'],
    arg: 'DURATION',
    help: 'an event stream with nothing to send gets a comment line this often',
  }),
  'sse-max-clients': withDefault({
    kind: integer(1, 1_000_000),
    default: 5_000,
    unit: 'streams',
    commands: ['serve'],
    arg: 'N',
    help: 'event streams open at once per process; beyond, 503',
  }),
  'sse-max-clients-per-key': withDefault({
    kind: integer(1, 1_000_000),
    default: 20,
    unit: 'streams',
    commands: ['serve'],
    arg: 'N',
    help: 'event streams open at once per API key and process; beyond, 429',
  }),
  'webhook-allow-private': withDefault({
    kind: onOff,
    default: false,
    // webhooks too: `webhooks retry` sends what is due itself.
    commands: ['serve', 'webhooks'],
    help: 'deliver webhooks to loopback and private network addresses too (refused by default)',
  }),
  'read-db': unset({
    kind: storeUrl,
    defaultText: 'none: reads go to db',
    secret: 'url',
    commands: ['serve'],
    arg: 'URL',
    help: 'PostgreSQL read replica for reads (writes and change notices use db)',
  }),
  'pg-pool-size': withDefault({
    kind: integer(1, 1000),
    default: PG_DEFAULTS.poolSize,
    unit: 'connections',
    commands: ['serve'],
    arg: 'N',
    help: 'PostgreSQL connections per pool and process',
  }),
  'pg-connect-timeout-ms': withDefault({
    kind: integer(1, 600_000),
    default: PG_DEFAULTS.connectTimeoutMs,
    unit: 'ms',
    commands: ['serve'],
    arg: 'MS',
    help: 'give up connecting to PostgreSQL after this long',
  }),
  'pg-statement-timeout-ms': withDefault({
    kind: integer(1, 3_600_000),
    default: PG_DEFAULTS.statementTimeoutMs,
    unit: 'ms',
    commands: ['serve'],
    arg: 'MS',
    help: 'cancel a PostgreSQL statement after this long',
  }),
  'log-level': withDefault({
    kind: choice(LOG_LEVELS),
    default: 'warn',
    commands: ['serve'],
    arg: 'LEVEL',
    help: `least severe level logged, one of ${LOG_LEVELS.join(', ')} (JSON lines on stderr)`,
  }),
  auth: withDefault({
    kind: choice(AUTH_MODES),
    default: 'auto',
    commands: ['serve'],
    arg: 'MODE',
    help: 'API keys required once a live key exists (auto), always (required) or never (off)',
  }),
  'default-rate': withDefault({
    kind: perSecond,
    default: 20,
    unit: 'requests/s',
    commands: ['serve'],
    arg: 'R',
    help: "refill rate of a key's token bucket when the key sets none",
  }),
  'default-burst': withDefault({
    kind: requests,
    default: 200,
    unit: 'requests',
    commands: ['serve'],
    arg: 'B',
    help: "capacity of a key's token bucket when the key sets none",
  }),
  'auth-fail-rate': withDefault({
    kind: perSecond,
    default: 5,
    unit: 'requests/s',
    commands: ['serve'],
    arg: 'R',
    help: 'failed key attempts allowed per client address',
  }),
  'auth-fail-burst': withDefault({
    kind: requests,
    default: 100,
    unit: 'requests',
    commands: ['serve'],
    arg: 'B',
    help: 'burst of failed key attempts allowed per client address',
  }),
  'anon-rate': unset({
    kind: perSecond,
    defaultText: 'none: no limit',
    unit: 'requests/s',
    commands: ['serve'],
    arg: 'R',
    help: 'when no key is asked for (auth off, auto before the first key, open paths but the health probes): rate per client address (with anon-burst)',
  }),
  'anon-burst': unset({
    kind: requests,
    defaultText: 'none: no limit',
    unit: 'requests',
    commands: ['serve'],
    arg: 'B',
    help: 'when no key is asked for: burst per client address (with anon-rate)',
  }),
  redis: unset({
    kind: redisUrl,
    defaultText: 'none: limits per process',
    secret: 'url-user',
    commands: ['serve'],
    arg: 'URL',
    help: 'Redis that holds rate limits across processes',
  }),
  'max-in-flight': withDefault({
    kind: integer(1, 1_000_000),
    default: 256,
    unit: 'requests',
    commands: ['serve'],
    arg: 'N',
    help: 'requests served at once per process; beyond, 503 at once',
  }),
  'headers-timeout': withDefault({
    kind: duration(1, 3_600_000),
    default: 10_000,
    commands: ['serve'],
    arg: 'DURATION',
    help: 'cut off a client whose request head has not arrived after this long',
  }),
  'request-timeout': withDefault({
    kind: duration(1, 86_400_000),
    default: 30_000,
    commands: ['serve'],
    arg: 'DURATION',
    help: 'cut off a client whose whole request has not arrived after this long',
  }),
  'keep-alive-timeout': withDefault({
    kind: duration(1, 3_600_000),
    default: 5_000,
    commands: ['serve'],
    arg: 'DURATION',
    help: 'close a kept-alive connection idle for this long',
  }),
  'cors-origin': withDefault({
    kind: origins,
    default: Object.freeze([]) as readonly string[],
    defaultText: 'none',
    commands: ['serve'],
    arg: 'ORIGIN,...',
    help: 'answer CORS for these web origins',
  }),
  'node-http-only': withDefault({
    kind: onOff,
    default: false,
    commands: ['serve'],
    help: 'read every request with Node’s HTTP server, turning off the wire front that reads and answers plain forecast GETs itself',
  }),
  'access-log': withDefault({
    kind: onOff,
    default: false,
    commands: ['serve'],
    help: 'log a line per request: request id, route, status, duration, key name',
  }),
  watch: unset({
    kind: text('a folder path'),
    defaultText: 'none: no folder is watched',
    commands: ['serve', 'ingest'],
    arg: 'DIR',
    help: 'take every run file put into DIR or its subfolders, then move it to DIR/done/ or DIR/rejected/',
  }),
  settle: withDefault({
    kind: duration(0, 3_600_000),
    default: 2_000,
    commands: ['serve', 'ingest'],
    arg: 'DURATION',
    help: 'with watch: a file is complete once its size and modification time have not changed for this long',
  }),
  'ingest-threads': withDefault({
    kind: integer(0, 64),
    default: () => availableParallelism(),
    defaultText: 'number of cores',
    unit: 'threads',
    commands: ['serve', 'ingest'],
    arg: 'N',
    help: 'threads reading, checking and encoding run files (ingest, and a watched folder) while the store commits earlier ones, in order; 0: none',
  }),
  runs: withDefault({ kind: integer(1, 60), default: 4, unit: 'runs', commands: ['demo'], arg: 'N', help: 'how many runs (the last 00 and 12 UTC runs)' }),
  seed: withDefault({ kind: integer(0, 2 ** 31 - 1), default: 1, commands: ['demo'], arg: 'N', help: 'random seed; the same seed gives the same data' }),
  out: unset({
    kind: text('a folder path'),
    defaultText: 'a temporary folder, removed',
    commands: ['demo'],
    arg: 'DIR',
    help: 'keep the generated CSV files in DIR',
  }),
  'if-empty': withDefault({ kind: onOff, default: false, commands: ['demo'], help: 'do nothing when the store already holds sites' }),
  from: unset({ kind: storeUrl, required: true, secret: 'url', commands: ['migrate-store'], arg: 'URL', help: 'the store to copy from' }),
  to: unset({
    kind: storeUrl,
    required: true,
    secret: 'url',
    commands: ['migrate-store'],
    arg: 'URL',
    help: 'the store to copy into (created and migrated if new)',
  }),
  json: withDefault({ kind: onOff, default: false, commands: ['config', 'keys', 'status', 'webhooks'], help: 'print JSON', origins: ['flag'] }),
  // The attributes of one key (keys create / roll) or webhook endpoint (webhooks add): arguments of a command line, never from the environment or a file.
  name: unset({
    kind: text('a name'),
    commands: ['keys', 'webhooks'],
    arg: 'NAME',
    help: "keys create: the new key's name (unique among live keys); webhooks add: the endpoint's name (default: the URL's host)",
    origins: ['flag'],
  }),
  farms: unset({
    kind: farmIds,
    commands: ['keys', 'webhooks'],
    arg: 'ID,ID,...',
    help: 'keys create: the sites the key may see; webhooks add: the sites whose runs the endpoint hears of (default: every site)',
    origins: ['flag'],
  }),
  rate: unset({ kind: perSecond, unit: 'requests/s', commands: ['keys'], arg: 'R', help: "keys create: the key's refill rate (default: the server's default-rate)", origins: ['flag'] }),
  burst: unset({ kind: requests, unit: 'requests', commands: ['keys'], arg: 'B', help: "keys create: the key's bucket size (default: the server's default-burst)", origins: ['flag'] }),
  admin: withDefault({ kind: onOff, default: false, commands: ['keys'], help: 'keys create: an operator key (/metrics; sees every site)', origins: ['flag'] }),
  grace: withDefault({
    kind: duration(0, 7 * 86_400_000),
    default: 86_400_000,
    commands: ['keys'],
    arg: 'DURATION',
    help: 'keys roll: how long the old key keeps working (0s: stops at once)',
    origins: ['flag'],
  }),
};

type Table = typeof TABLE;
export type SettingName = keyof Table & string;
export type Settings = { readonly [N in SettingName]: Table[N] & { readonly name: N } };

export const SETTINGS: Settings = Object.freeze(
  Object.fromEntries(Object.entries(TABLE).map(([name, spec]) => [name, Object.freeze({ ...spec, name })])),
) as Settings;

/** Every setting, in table order. */
export const ALL_SETTINGS: readonly SettingDef[] = Object.values(SETTINGS);

/** The value a command reads for a setting: unset (undefined) only when it has no default. */
export type ValueOf<N extends SettingName> = Table[N] extends Omit<SettingDef<infer T, infer D>, 'name'> ? (D extends true ? T : T | undefined) : never;

export const originsOf = (def: SettingDef): readonly Origin[] => def.origins ?? ['flag', 'env', 'file'];

/** Does the command take the setting? `config` takes those of `serve` as well as its own. */
export const takes = (command: CommandName, def: SettingDef): boolean =>
  def.commands.includes(command) || (command === 'config' && def.commands.includes('serve'));

/** The settings of a command, in table order. */
export const settingsOf = (command: CommandName): readonly SettingDef[] => ALL_SETTINGS.filter((d) => takes(command, d));

export const envName = (name: string): string => `FORECASTD_${name.toUpperCase().replace(/-/g, '_')}`;

/** The default value, computing it when it depends on the machine; undefined when unset. */
export const defaultOf = <T>(def: SettingDef<T>): T | undefined =>
  typeof def.default === 'function' ? (def.default as () => T)() : (def.default as T | undefined);

/** The default as help and the README show it. */
export function defaultText(def: SettingDef): string {
  if (def.required) return 'required';
  if (def.defaultText !== undefined) return def.defaultText;
  const value = defaultOf(def);
  return value === undefined ? 'none' : def.kind.text(value);
}

/**
 * Settings that were and are no more, with what took their place: a flag or file key left from an older
 * version is refused (exit 2, as any bad setting) with a message that says what to write instead.
 */
const RETIRED: ReadonlyMap<string, string> = new Map([
  ['series-cache-mb', 'retired: --cache-mb sizes every cache now (one sixth of it holds runs)'],
  ['body-cache-mb', 'retired: --cache-mb sizes every cache now (five sixths of it hold rendered answers)'],
]);

/** Why a name that is not a setting is refused: what replaced it, when it is a retired one. */
export const notASetting = (name: string, fallback: string): string => RETIRED.get(name) ?? fallback;
