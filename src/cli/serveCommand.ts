/**
 * forecastd serve: wires options -> store -> app, listens, and shuts down
 * cleanly. With --workers N > 1 the process is a node:cluster primary that runs
 * N workers sharing the port; it prints the listening line once all listen and
 * forwards SIGTERM / SIGINT to them.
 */
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { parseRange, type RangeBox } from '../domain/geo.js';
import { DEFAULT_MATCH_RADIUS_KM, DEFAULT_RANGE } from '../domain/limits.js';
import { buildApp } from '../http/app.js';
import { DEFAULT_CACHE, type CacheSettings } from '../http/context.js';
import { openStore, parseStoreUrl, type StoreOptions } from '../store/openStore.js';
import { PG_DEFAULTS } from '../store/store.js';
import { dbOption, dbUrl, intOption, numberOption, version } from './config.js';
import { UsageError } from './usage.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

interface ServeOptions {
  port: number;
  host: string;
  db: string;
  range: RangeBox;
  matchRadiusKm: number;
  level: string;
  workers: number;
  cache: CacheSettings;
  store: StoreOptions;
}

function readOptions(args: string[]): ServeOptions {
  const { values } = parseArgs({
    args,
    options: {
      ...dbOption,
      port: { type: 'string' },
      host: { type: 'string' },
      range: { type: 'string' },
      'match-radius-km': { type: 'string' },
      'log-level': { type: 'string' },
      workers: { type: 'string' },
      'series-cache-mb': { type: 'string' },
      'body-cache-mb': { type: 'string' },
      'latest-max-age': { type: 'string' },
      'read-db': { type: 'string' },
      'pg-pool-size': { type: 'string' },
      'pg-connect-timeout-ms': { type: 'string' },
      'pg-statement-timeout-ms': { type: 'string' },
    },
    allowPositionals: false,
    strict: true,
  });
  let range: RangeBox = DEFAULT_RANGE;
  if (values.range !== undefined) {
    try {
      range = parseRange(values.range);
    } catch (err) {
      throw new UsageError((err as Error).message, 'serve');
    }
  }
  const db = dbUrl(values.db);
  if (values['read-db'] !== undefined && (parseStoreUrl(db).kind !== 'postgres' || parseStoreUrl(values['read-db']).kind !== 'postgres')) {
    throw new UsageError('--read-db needs PostgreSQL URLs for both --db and --read-db', 'serve');
  }
  const level = values['log-level'] ?? 'warn';
  if (!LOG_LEVELS.includes(level)) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}`, 'serve');
  return {
    port: intOption('port', values.port, 8080, 0, 65535),
    host: values.host ?? '127.0.0.1',
    db,
    range,
    matchRadiusKm: numberOption('match-radius-km', values['match-radius-km'], DEFAULT_MATCH_RADIUS_KM, 0),
    level,
    workers: intOption('workers', values.workers, availableParallelism(), 1, 256),
    cache: {
      seriesMb: intOption('series-cache-mb', values['series-cache-mb'], DEFAULT_CACHE.seriesMb, 0, 1 << 20),
      bodyMb: intOption('body-cache-mb', values['body-cache-mb'], DEFAULT_CACHE.bodyMb, 0, 1 << 20),
      latestMaxAgeS: intOption('latest-max-age', values['latest-max-age'], DEFAULT_CACHE.latestMaxAgeS, 0, 31536000),
    },
    store: {
      readUrl: values['read-db'],
      poolSize: intOption('pg-pool-size', values['pg-pool-size'], PG_DEFAULTS.poolSize, 1, 1000),
      connectTimeoutMs: intOption('pg-connect-timeout-ms', values['pg-connect-timeout-ms'], PG_DEFAULTS.connectTimeoutMs, 1, 600_000),
      statementTimeoutMs: intOption('pg-statement-timeout-ms', values['pg-statement-timeout-ms'], PG_DEFAULTS.statementTimeoutMs, 1, 3_600_000),
    },
  };
}

/** Serves in this process until SIGTERM / SIGINT; resolves with the exit status. */
async function serveHere(o: ServeOptions, announce: (address: string) => void): Promise<number> {
  const store = await openStore(o.db, o.store);
  const app = await buildApp(
    { store, rules: { range: o.range, matchRadiusKm: o.matchRadiusKm }, version: version(), cache: o.cache },
    { logger: { level: o.level, stream: process.stderr } },
  );
  let address: string;
  try {
    address = await app.listen({ port: o.port, host: o.host });
  } catch (err) {
    await store.close();
    throw err;
  }
  announce(address);
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string): void => {
      if (stopping) return;
      stopping = true;
      app.log.info({ signal }, 'draining and shutting down');
      app
        .close()
        .then(() => store.close())
        .then(
          () => resolve(0),
          (err: unknown) => {
            process.stderr.write(`forecastd: shutdown failed: ${String(err)}\n`);
            resolve(1);
          },
        );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}

/** The cluster primary: starts the workers, replaces any that dies, stops them all on a signal. */
function supervise(o: ServeOptions, args: string[]): Promise<number> {
  return new Promise((resolve) => {
    cluster.setupPrimary({ exec: process.argv[1], args: ['serve', ...args], silent: false });
    let stopping = false;
    let listening = 0;
    let announced = false;
    let failed = false;
    const start = (): void => {
      const w = cluster.fork({ FORECASTD_CLUSTER_WORKER: '1' });
      w.on('message', (m: { listening?: string }) => {
        if (m.listening !== undefined && ++listening === o.workers && !announced) {
          announced = true;
          process.stdout.write(`listening on ${m.listening}\n`);
        }
      });
    };
    cluster.on('exit', (w, code, signal) => {
      if (stopping && code !== 0) failed = true;
      if (!stopping && !announced) {
        // A worker that fails before the cluster is up (port taken, bad store) stops the whole start.
        failed = true;
        stopping = true;
        for (const other of Object.values(cluster.workers ?? {})) other?.process.kill('SIGTERM');
      } else if (!stopping) {
        process.stderr.write(`forecastd: worker ${w.process.pid} exited (${signal ?? code}); starting another\n`);
        listening--;
        start();
      }
      if (Object.keys(cluster.workers ?? {}).length === 0 && stopping) resolve(failed ? 1 : 0);
    });
    const stop = (): void => {
      if (stopping) return;
      stopping = true;
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    for (let i = 0; i < o.workers; i++) start();
  });
}

export async function serveCommand(args: string[]): Promise<number> {
  const o = readOptions(args);
  if (cluster.isWorker) {
    const code = await serveHere(o, (address) => process.send?.({ listening: address }));
    // The IPC channel to the primary would keep this process alive.
    process.disconnect?.();
    return code;
  }
  if (o.workers === 1) {
    return serveHere(o, (address) => process.stdout.write(`listening on ${address}\n`));
  }
  return supervise(o, args);
}
