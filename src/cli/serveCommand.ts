/**
 * forecastd serve: wires settings -> store -> app, listens, and shuts down
 * cleanly. With --workers N > 1 the process is a node:cluster primary that runs
 * N workers sharing the port; it prints the listening line once all listen and
 * forwards SIGTERM / SIGINT to them.
 */
import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { redisLimiter } from '../access/rateLimit/redisLimiter.js';
import { buildApp } from '../http/app.js';
import { scheduleRetention } from '../ops/retention.js';
import { ClusterMetrics, clusterWorkerMetrics } from '../ops/clusterMetrics.js';
import { Metrics } from '../ops/metrics.js';
import { openStore } from '../store/openStore.js';
import { resolveSettings, type SettingsInput } from '../settings/resolve.js';
import { serveOptions, type ServeOptions } from '../settings/serveOptions.js';
import { version } from './config.js';
import { checkWatchFolder, primaryWatch, runWatch, watchLogHandlers } from './watchRunner.js';
import { startWebhooks } from '../events/webhooks/index.js';
import { primaryWebhooks, webhookRunOptions, withWebhookTesting } from './webhooksRunner.js';

/** A key never reaches a log line, whatever logs a request's headers. */
const REDACT = { paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'headers.authorization', 'headers["x-api-key"]'], censor: '[redacted]' };

const isLoopback = (host: string): boolean => host === 'localhost' || host === '::1' || host.startsWith('127.');

/**
 * The address announced: the host as given (section 8: `listening on http://HOST:PORT`), not the framework's
 * pick among the addresses it listens on (127.0.0.1 for 0.0.0.0), with the port taken (--port 0).
 */
export function listeningUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Why the port could not be taken, in words an operator acts on; Node's own text for anything else. */
export function listenFault(err: unknown, host: string, port: number): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const where = `${host}:${port}`;
  switch (code) {
    case 'EADDRINUSE':
      return `cannot listen on ${where}: the port is already in use`;
    case 'EACCES':
      return `cannot listen on ${where}: not permitted (ports below 1024 need privileges)`;
    case 'EADDRNOTAVAIL':
      return `cannot listen on ${where}: ${host} is not an address of this machine`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot listen on ${where}: the host ${host} does not resolve to an address`;
    default:
      return `cannot listen on ${where}: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** Serves in this process until SIGTERM / SIGINT; resolves with the exit status. */
async function serveHere(o: ServeOptions, announce: (address: string) => void): Promise<number> {
  const store = await openStore(o.db, o.store);
  const metrics = new Metrics();
  // A worker answers /metrics for the whole instance through the primary (src/ops/clusterMetrics.ts).
  const instance = cluster.isWorker ? clusterWorkerMetrics(metrics.registry) : undefined;
  // Faults of Redis are logged through the app's logger once it exists (the limiter must exist first).
  let log: FastifyBaseLogger | undefined;
  const limiter =
    o.access.redis === undefined
      ? undefined
      : await redisLimiter(o.access.redis, {
          onFault: (err) => {
            const fault = { fault: err instanceof Error ? err.message : String(err) };
            const msg = 'rate limits: Redis unreachable, limiting per process';
            if (log) log.error(fault, msg);
            else process.stderr.write(JSON.stringify({ level: 50, time: Date.now(), ...fault, msg }) + '\n');
          },
          onRecover: () => log?.warn('rate limits: Redis answers again, limits are shared'),
        });
  const app = await buildApp(
    {
      store,
      rules: { range: o.range, matchRadiusKm: o.matchRadiusKm },
      version: version(),
      cache: o.cache,
      runDeadlineMs: o.runDeadlineMs,
      access: o.access,
      limits: o.limits,
      wireFront: o.wireFront,
      events: { ...o.events, keepMs: o.eventsKeepMs },
      limiter,
    },
    { logger: { level: o.level, stream: process.stderr, redact: REDACT }, metrics, scrapeProcesses: instance?.scrape },
  );
  log = app.log;
  if (o.access.auth === 'off' && !isLoopback(o.host)) {
    app.log.warn({ host: o.host }, 'auth is off on an address other hosts can reach: anyone there reads every site');
  }
  // A folder is watched by one process of an instance: this one, unless it is a worker (then the primary does).
  const watcher = o.watch !== undefined && !cluster.isWorker ? await runWatch(store, o.watch, watchLogHandlers(app.log, metrics)) : undefined;
  let address: string;
  try {
    await app.listen({ port: o.port, host: o.host });
    address = listeningUrl(o.host, (app.server.address() as AddressInfo).port);
  } catch (err) {
    await watcher?.stop();
    await app.close();
    await limiter?.close();
    await store.close();
    throw new Error(listenFault(err, o.host, o.port));
  }
  announce(address);
  // After listening, not before: the start of the store's read thread does not delay the port on one core.
  store.prepareReads();
  // Every process prunes (at start and hourly): a removal is one transaction, so a second finds nothing left.
  const stopRetention = scheduleRetention(store, { days: o.retentionDays, eventsKeepMs: o.eventsKeepMs }, app.log);
  // Webhooks run where the folder is watched: in this process, unless it is a worker (then the primary does).
  const webhooks = cluster.isWorker ? undefined : startWebhooks(store, webhookRunOptions(o), metrics, app.log);
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string): void => {
      if (stopping) return;
      stopping = true;
      app.log.info({ signal }, 'draining and shutting down');
      // In-flight requests (and the file being taken) may finish within the grace; then what is still open is cut.
      const grace = setTimeout(() => {
        app.log.warn({ graceMs: o.shutdownGraceMs }, 'shutdown grace ended: closing the connections still open');
        app.server.closeAllConnections();
      }, o.shutdownGraceMs);
      grace.unref();
      const webhooksStopped = webhooks?.stop();
      stopRetention()
        .then(() => watcher?.stop())
        .then(() => app.close())
        .then(() => clearTimeout(grace))
        .then(() => limiter?.close())
        .then(() => webhooksStopped)
        .then(() => store.close())
        .then(() => instance?.close())
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
function supervise(o: ServeOptions, args: string[], primary: Metrics): Promise<number> {
  return new Promise((resolve) => {
    cluster.setupPrimary({ exec: process.argv[1], args: ['serve', ...args], silent: false });
    let stopping = false;
    let listening = 0;
    let announced = false;
    let failed = false;
    let reported = false;
    const metrics = new ClusterMetrics(primary.registry);
    const start = (): void => {
      const w = cluster.fork({ FORECASTD_CLUSTER_WORKER: '1' });
      // A failed message to a dying worker must not end the primary; its exit is handled below. While the
      // instance stops (a failed start included) the workers' channels closing is expected, not news.
      w.on('error', (err: Error) => {
        if (!stopping) process.stderr.write(`forecastd: worker ${w.process.pid}: ${err.message}\n`);
      });
      w.on('message', (m: { listening?: string; failed?: string } | null) => {
        if (typeof m?.failed === 'string') {
          // Every worker of a start that cannot listen fails alike: the first one's fault is the instance's.
          if (!announced && !reported) process.stderr.write(`forecastd: ${m.failed}\n`);
          reported = true;
          return;
        }
        if (typeof m?.listening !== 'string') return;
        metrics.add(w);
        if (++listening === o.workers && !announced) {
          announced = true;
          process.stdout.write(`listening on ${m.listening}\n`);
        }
      });
    };
    cluster.on('exit', (w, code, signal) => {
      metrics.retire(w);
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

export async function serveCommand(args: string[], input: SettingsInput): Promise<number> {
  const resolved = resolveSettings('serve', args, input);
  const o = withWebhookTesting(serveOptions(resolved), input.env);
  if (cluster.isWorker) {
    try {
      return await serveHere(o, (address) => process.send?.({ listening: address }));
    } catch (err) {
      // Told to the primary, which reports the first worker's fault once and stops the others; a primary
      // already gone (it stops the others on the first fault) is told nothing.
      if (process.connected) process.send?.({ failed: err instanceof Error ? err.message : String(err) }, undefined, undefined, () => undefined);
      return 1;
    } finally {
      // The IPC channel to the primary would keep this process alive, after a failed start too.
      process.disconnect?.();
    }
  }
  checkWatchFolder(resolved);
  if (o.workers === 1) {
    return serveHere(o, (address) => process.stdout.write(`listening on ${address}\n`));
  }
  // What the primary counts itself (the watch folder's files), added to the workers' metrics in every scrape.
  const primary = new Metrics({ servesHttp: false });
  const watch = o.watch === undefined ? undefined : await primaryWatch({ ...o, watch: o.watch }, primary);
  const webhooks = await primaryWebhooks(o, primary);
  try {
    return await supervise(o, args, primary);
  } finally {
    await watch?.stop();
    await webhooks.stop();
  }
}
