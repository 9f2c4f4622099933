/**
 * The metrics of one process (INTERFACE.md section 13), in a prom-client
 * registry of its own. Nothing on the request path calls prom-client: the
 * parts that see events keep plain numbers (HttpStats, the caches' hit
 * counters, the door's refusals, the fields below), and each metric's
 * collect() reads them when /metrics is scraped. With --workers N the
 * registries of all workers are added up by the cluster primary
 * (clusterMetrics.ts); what is read from the store is not per process and is
 * kept apart (storeGauges.ts).
 *
 * No label holds a site, a run or a key: routes are templates, the other
 * labels take a few fixed values.
 */
import type { DiskCacheStats } from '../cache/diskRing.js';
import { Counter, Gauge, Registry, type Metric } from 'prom-client';
import { collectProcessMetrics } from './defaultMetrics.js';
import { DURATION_BUCKETS_S, HttpStats, type RouteStats } from './httpStats.js';

/**
 * How often the event loop's delay is sampled for nodejs_eventloop_lag_*, ms. prom-client's 10 ms woke an
 * idle process a hundred times a second: an idle server used 130-150 ms of CPU per 10 s with it and 50-60 ms
 * with 100 ms (docs/operations.md). A stall still shows as the delay of the sample it holds up.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

/** The Prometheus text format's content type. */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** Lookups of a cache, counted by the cache itself. */
export interface HitCounts {
  readonly hits: number;
  readonly misses: number;
}

/** What one in-memory cache holds: the bytes it counts (objects included) and the most it may hold. */
export interface CacheMemory {
  readonly cache: 'body' | 'memo' | 'run';
  readonly bytes: number;
  readonly capacity: number;
}

/** Counters kept by other parts of the server, read at scrape time. */
export interface MetricSources {
  /** Rendered forecast bodies (http/bodyCache.ts). */
  readonly bodyCache?: HitCounts;
  /** Runs held in memory (query/readModel.ts). */
  readonly runCache?: HitCounts;
  /** Remembered answers (http/forecastService.ts): sent again, or the request planned. */
  readonly memo?: HitCounts;
  /** The caches' memory, within --cache-mb (http/forecastService.ts). */
  readonly cacheMemory?: () => readonly CacheMemory[];
  /** Requests refused with 429 (access/door.ts). */
  readonly door?: { readonly rateLimited: number };
  /** Outages of the shared rate-limit store (Redis). */
  readonly limiter?: { readonly faults: number };
  /** The event log as this process follows it, and its event streams (src/events/). */
  readonly events?: EventCounts;
  /** The caches' copies on local disk (cache/diskRing.ts): of runs (--run-disk-mb) and of rendered answers (--body-disk-mb). */
  readonly diskCaches?: () => readonly { readonly cache: 'run' | 'body'; readonly stats: DiskCacheStats | undefined }[];
  /** What the wire front took and handed to Node's server (http/wireFront.ts). */
  readonly wire?: { readonly taken: number; readonly handedOff: number };
}

/** What the event hub and the streams count. */
export interface EventCounts {
  /** Log entries read, by kind. */
  readonly seen: { readonly run: number; readonly tick: number };
  /** Ticks this process appended to the log. */
  readonly ticksWritten: number;
  /** Events written to stream clients. */
  readonly sent: number;
  /** Stream clients disconnected for not reading. */
  readonly dropped: number;
}

/**
 * What webhook delivery attempts came to (section 14): delivered (a 2xx), retry (failed, tried again later),
 * refused (not sent: the address is private; tried again later), gave-up (the last attempt failed), gone (410).
 */
export const WEBHOOK_RESULTS = ['delivered', 'retry', 'refused', 'gave-up', 'gone'] as const;
export type WebhookResult = (typeof WEBHOOK_RESULTS)[number];

/** Sets (a gauge) or adds to (a counter, just reset) one labelled sample at scrape time. */
type SampleSetter = (labels: Record<string, string>, value: number) => void;

export class Metrics {
  readonly registry = new Registry();
  readonly http = new HttpStats();
  /** Failed store calls (not refusals such as an unknown site): see countingStore.ts. */
  storeErrors = 0;
  /** Run files taken and rejected, and the records of those taken (the watch folder's ingest). */
  readonly ingest = { taken: 0, rejected: 0, records: 0 };
  /** Server-Sent Events clients connected to this process. */
  sseClients = 0;
  readonly webhookDeliveries: Record<WebhookResult, number> = { delivered: 0, retry: 0, refused: 0, 'gave-up': 0, gone: 0 };
  private sources: MetricSources = {};

  /** servesHttp: false for a cluster's primary, which counts what it does itself (the watch folder) but serves no HTTP. */
  constructor(opts: { readonly servesHttp?: boolean } = {}) {
    const serving = opts.servesHttp === false ? 0 : 1;
    const register = [this.registry];
    const counter = (name: string, help: string, labelNames: string[], fill: (set: SampleSetter) => void): void => {
      new Counter({
        name,
        help,
        labelNames,
        registers: register,
        collect(this: Counter) {
          this.reset();
          fill((labels, value) => this.inc(labels, value));
        },
      });
    };
    const gauge = (name: string, help: string, labelNames: string[], fill: (set: SampleSetter) => void): void => {
      new Gauge({
        name,
        help,
        labelNames,
        registers: register,
        collect(this: Gauge) {
          this.reset();
          fill((labels, value) => this.set(labels, value));
        },
      });
    };
    const http = this.http;
    counter('forecastd_http_requests_total', 'HTTP answers by route template and status code.', ['route', 'code'], (set) => {
      for (const r of http.routes()) {
        r.codes.forEach((n, code) => {
          if (n > 0) set({ route: r.route, code: String(code) }, n);
        });
      }
    });
    registerHistogram(
      this.registry,
      'forecastd_http_request_duration_seconds',
      'Time from a request being read to its answer being handed to the socket, by route template.',
      () => http.routes(),
    );
    counter('forecastd_ingest_files_total', 'Run files ingested by this server, taken or rejected.', ['result'], (set) => {
      set({ result: 'taken' }, this.ingest.taken);
      set({ result: 'rejected' }, this.ingest.rejected);
    });
    counter('forecastd_ingest_records_total', 'Records (time steps) of the run files taken.', [], (set) => set({}, this.ingest.records));
    counter('forecastd_cache_requests_total', 'Lookups of the in-memory caches: remembered answers by URL (memo), rendered bodies (body) and runs (run).', ['cache', 'result'], (set) => {
      for (const [cache, counts] of [
        ['memo', this.sources.memo],
        ['body', this.sources.bodyCache],
        ['run', this.sources.runCache],
      ] as const) {
        set({ cache, result: 'hit' }, counts?.hits ?? 0);
        set({ cache, result: 'miss' }, counts?.misses ?? 0);
      }
    });
    gauge('forecastd_cache_bytes', 'Memory the in-memory caches hold as they count it (entries and their objects), by cache: rendered bodies, remembered answers (memo), runs.', ['cache'], (set) => {
      for (const c of this.sources.cacheMemory?.() ?? []) set({ cache: c.cache }, c.bytes);
    });
    gauge('forecastd_cache_capacity_bytes', 'The most each in-memory cache may hold (its share of --cache-mb).', ['cache'], (set) => {
      for (const c of this.sources.cacheMemory?.() ?? []) set({ cache: c.cache }, c.capacity);
    });
    // A cache whose copies are off reports zeros, so that every series exists from the first scrape.
    const diskCaches = (): readonly { cache: string; stats: DiskCacheStats | undefined }[] => this.sources.diskCaches?.() ?? [];
    counter('forecastd_disk_cache_reads_total', 'Entries read from the caches\u2019 copies on local disk (--run-disk-mb, --body-disk-mb): at once on the event loop, or (runs) on libuv\u2019s threads after a slow read.', ['cache', 'way'], (set) => {
      for (const d of diskCaches()) {
        set({ cache: d.cache, way: 'at_once' }, d.stats?.counts.syncReads ?? 0);
        set({ cache: d.cache, way: 'threaded' }, d.stats?.counts.asyncReads ?? 0);
      }
    });
    counter('forecastd_disk_cache_slow_reads_total', 'Reads of copies that waited for the disk (each sends the next 250 ms of reads off the event loop).', ['cache'], (set) => {
      for (const d of diskCaches()) set({ cache: d.cache }, d.stats?.counts.slowReads ?? 0);
    });
    counter('forecastd_disk_cache_errors_total', 'Reads and writes of copies that failed (the copy is forgotten; the store answers, or the answer is rendered).', ['cache'], (set) => {
      for (const d of diskCaches()) set({ cache: d.cache }, d.stats?.counts.errors ?? 0);
    });
    gauge('forecastd_disk_cache_bytes', 'Bytes of the caches\u2019 copies on local disk.', ['cache'], (set) => {
      for (const d of diskCaches()) set({ cache: d.cache }, d.stats?.bytes ?? 0);
    });
    gauge('forecastd_disk_cache_capacity_bytes', 'The most each cache\u2019s copies on local disk may take (--run-disk-mb, --body-disk-mb; 0: none).', ['cache'], (set) => {
      for (const d of diskCaches()) set({ cache: d.cache }, d.stats?.capacity ?? 0);
    });
    counter('forecastd_wire_requests_total', 'Requests read and answered by the wire front (plain forecast GETs), without Node’s HTTP objects.', [], (set) =>
      set({}, this.sources.wire?.taken ?? 0),
    );
    counter('forecastd_wire_handoffs_total', 'Connections the wire front handed to Node’s HTTP server at the first request it does not take.', [], (set) =>
      set({}, this.sources.wire?.handedOff ?? 0),
    );
    counter('forecastd_store_errors_total', 'Store calls that failed (unreachable, timed out, or any other fault).', [], (set) => set({}, this.storeErrors));
    counter('forecastd_rate_limited_total', 'Requests refused with 429 (a key over its rate, or failed keys of an address).', [], (set) =>
      set({}, this.sources.door?.rateLimited ?? 0),
    );
    counter('forecastd_rate_limit_faults_total', 'Outages of the shared rate-limit store (Redis) seen; limits were per process meanwhile.', [], (set) =>
      set({}, this.sources.limiter?.faults ?? 0),
    );
    gauge('forecastd_sse_clients', 'Server-Sent Events clients connected.', [], (set) => set({}, this.sseClients));
    counter('forecastd_events_seen_total', 'Entries of the event log read by this process: runs published, clock ticks.', ['kind'], (set) => {
      set({ kind: 'run' }, this.sources.events?.seen.run ?? 0);
      set({ kind: 'tick' }, this.sources.events?.seen.tick ?? 0);
    });
    counter('forecastd_event_ticks_written_total', 'Clock ticks this process appended to the event log (one per moment over all processes).', [], (set) =>
      set({}, this.sources.events?.ticksWritten ?? 0),
    );
    counter('forecastd_events_sent_total', 'Events written to Server-Sent Events clients (catch-up included).', [], (set) =>
      set({}, this.sources.events?.sent ?? 0),
    );
    counter('forecastd_sse_dropped_total', 'Server-Sent Events clients disconnected because they did not read fast enough.', [], (set) =>
      set({}, this.sources.events?.dropped ?? 0),
    );
    gauge('forecastd_workers', 'Processes serving HTTP whose metrics this scrape adds up (the workers of --workers N).', [], (set) => set({}, serving));
    counter('forecastd_webhook_deliveries_total', 'Webhook delivery attempts by result.', ['result'], (set) => {
      for (const result of WEBHOOK_RESULTS) set({ result }, this.webhookDeliveries[result]);
    });
    collectProcessMetrics(this.registry, { eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }

  /** Reads these counters at scrape time, from now on. */
  watch(sources: MetricSources): void {
    this.sources = { ...this.sources, ...sources };
  }

  /** Counts one run file: taken with its records, or rejected (an ingest outcome, as the watch folder reports it). */
  countIngestedFile(o: { readonly ok: true; readonly records: number } | { readonly ok: false }): void {
    if (o.ok) {
      this.ingest.taken++;
      this.ingest.records += o.records;
    } else {
      this.ingest.rejected++;
    }
  }
}

/**
 * The duration histogram, read from the routes' bucket counts at scrape time.
 * A metric object of prom-client's shape (what its own Histogram.get returns,
 * and what the cluster aggregation sums), since prom-client's Histogram has no
 * way to be set from counts kept elsewhere.
 */
function registerHistogram(registry: Registry, name: string, help: string, routes: () => readonly RouteStats[]): void {
  const get = async () => {
    const values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> = [];
    for (const r of routes()) {
      if (r.count === 0) continue;
      let cumulative = 0;
      DURATION_BUCKETS_S.forEach((le, i) => {
        cumulative += r.buckets[i]!;
        values.push({ metricName: `${name}_bucket`, labels: { route: r.route, le }, value: cumulative });
      });
      values.push({ metricName: `${name}_bucket`, labels: { route: r.route, le: '+Inf' }, value: r.count });
      values.push({ metricName: `${name}_sum`, labels: { route: r.route }, value: r.sumMs / 1000 });
      values.push({ metricName: `${name}_count`, labels: { route: r.route }, value: r.count });
    }
    return { name, help, type: 'histogram', aggregator: 'sum', values };
  };
  registry.registerMetric({ name, help, type: 'histogram', aggregator: 'sum', get, reset: () => undefined } as unknown as Metric);
}
