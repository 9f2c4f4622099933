/**
 * One scrape for every process of `serve --workers N` (node:cluster). The
 * primary does not serve HTTP, so the worker that receives GET /metrics asks
 * the primary over the IPC channel; the primary asks every worker that listens
 * for its registry as JSON, adds them up with prom-client's
 * AggregatorRegistry.aggregate (counters and histograms summed; each metric's
 * own rule for gauges), together with its own process metrics, and sends the
 * text back. The asking worker adds the store's gauges (read once, not per
 * worker) and answers.
 *
 * Counters must never go down, or Prometheus takes it for a restart and
 * rate() jumps: when a worker exits, the counters and histograms it last
 * reported are kept by the primary and added to every later scrape, so a
 * replaced worker loses at most what it counted since the previous scrape.
 */
import type { Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

const SCRAPE = 'forecastd:metrics:scrape';
const SCRAPED = 'forecastd:metrics:scraped';
const COLLECT = 'forecastd:metrics:collect';
const COLLECTED = 'forecastd:metrics:collected';

/** How long the primary waits for every worker's metrics, ms. */
const COLLECT_TIMEOUT_MS = 3000;
/** How long a worker waits for the primary's answer, ms (longer than the primary waits for the workers). */
const SCRAPE_TIMEOUT_MS = 5000;

type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

interface Message {
  readonly type?: string;
  readonly id?: number;
  readonly metrics?: MetricsJson;
  readonly text?: string;
  readonly error?: string;
}

const isMessage = (m: unknown): m is Message => typeof m === 'object' && m !== null && typeof (m as Message).type === 'string';

/**
 * A worker's side: answers the primary's requests for this process's
 * registry, and scrapes the whole instance through the primary.
 */
export function clusterWorkerMetrics(registry: Registry): { scrape(): Promise<string>; close(): void } {
  let next = 0;
  const waiting = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }>();
  const onMessage = (m: unknown): void => {
    if (!isMessage(m) || m.id === undefined) return;
    if (m.type === COLLECT) {
      registry.getMetricsAsJSON().then(
        (metrics) => process.send?.({ type: COLLECTED, id: m.id, metrics }),
        (err: unknown) => process.send?.({ type: COLLECTED, id: m.id, error: String(err) }),
      );
    } else if (m.type === SCRAPED) {
      const w = waiting.get(m.id);
      if (w === undefined) return;
      waiting.delete(m.id);
      clearTimeout(w.timer);
      if (m.text !== undefined) w.resolve(m.text);
      else w.reject(new Error(m.error ?? 'no metrics'));
    }
  };
  process.on('message', onMessage);
  return {
    scrape: () =>
      new Promise<string>((resolve, reject) => {
        const id = ++next;
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error('the cluster primary did not answer in time'));
        }, SCRAPE_TIMEOUT_MS);
        waiting.set(id, { resolve, reject, timer });
        process.send?.({ type: SCRAPE, id });
      }),
    close: () => {
      process.off('message', onMessage);
      for (const w of waiting.values()) clearTimeout(w.timer);
      waiting.clear();
    },
  };
}

interface Collection {
  /** The worker that asked, and the id it asked with. */
  readonly from: Worker;
  readonly replyId: number;
  /** Workers yet to send their metrics. */
  readonly pending: Set<number>;
  readonly parts: MetricsJson[];
  timer?: NodeJS.Timeout;
}

/** The primary's side: add each worker once it listens, and retire it when it exits. */
export class ClusterMetrics {
  private readonly workers = new Map<number, Worker>();
  /** What each worker reported at the last scrape. */
  private readonly lastSeen = new Map<number, MetricsJson>();
  /** Counters and histograms of workers that have exited, summed. */
  private retired: MetricsJson = [];
  /** Scrapes under way, by the id the workers are asked with. */
  private readonly collections = new Map<number, Collection>();
  private next = 0;

  /** `own`: the primary's registry (its process metrics, and what it counts itself, such as the watch folder's files). */
  constructor(private readonly own: Registry) {}

  /** Takes part in scrapes from now on (call when the worker listens). */
  add(worker: Worker): void {
    if (this.workers.has(worker.id)) return;
    this.workers.set(worker.id, worker);
    worker.on('message', (m: unknown) => this.onMessage(worker, m));
  }

  /** A worker exited: its last counts are kept; scrapes waiting for it go on without it. */
  retire(worker: Worker): void {
    this.workers.delete(worker.id);
    const last = this.lastSeen.get(worker.id);
    this.lastSeen.delete(worker.id);
    if (last !== undefined) {
      const cumulative = last.filter((m) => (m.type as unknown) === 'counter' || (m.type as unknown) === 'histogram');
      this.retired =
        this.retired.length === 0 ? cumulative : AggregatorRegistry.aggregate([this.retired, cumulative]).getMetricsAsArray().map(plain);
    }
    for (const [key, c] of this.collections) {
      if (c.pending.delete(worker.id) && c.pending.size === 0) void this.finish(key);
    }
  }

  private onMessage(worker: Worker, m: unknown): void {
    if (!isMessage(m) || m.id === undefined) return;
    if (m.type === SCRAPE) {
      this.start(worker, m.id);
    } else if (m.type === COLLECTED) {
      const c = this.collections.get(m.id);
      if (c === undefined || !c.pending.delete(worker.id)) return;
      if (m.metrics === undefined) {
        this.answer(m.id, { error: m.error ?? 'a worker sent no metrics' });
        return;
      }
      c.parts.push(m.metrics);
      this.lastSeen.set(worker.id, m.metrics);
      if (c.pending.size === 0) void this.finish(m.id);
    }
  }

  private start(from: Worker, replyId: number): void {
    const key = ++this.next;
    const asked = [...this.workers.values()].filter((w) => w.isConnected());
    const c: Collection = { from, replyId, pending: new Set(asked.map((w) => w.id)), parts: [] };
    this.collections.set(key, c);
    if (asked.length === 0) {
      void this.finish(key);
      return;
    }
    c.timer = setTimeout(() => this.answer(key, { error: 'a worker did not send its metrics in time' }), COLLECT_TIMEOUT_MS);
    for (const w of asked) {
      // With a callback a failed send is reported there, not as an 'error' event: a worker killed a moment
      // ago still counts as connected until its channel's end is read, and the event would end the primary.
      w.send({ type: COLLECT, id: key }, (err: Error | null) => {
        if (err) this.unreachable(key, w.id);
      });
    }
  }

  /** A worker that cannot be asked (it is exiting): the scrape goes on without it, as for one that exited. */
  private unreachable(key: number, workerId: number): void {
    const c = this.collections.get(key);
    if (c !== undefined && c.pending.delete(workerId) && c.pending.size === 0) void this.finish(key);
  }

  /** Ends the scrape `key` with its text or an error, once. */
  private answer(key: number, result: { text: string } | { error: string }): void {
    const c = this.collections.get(key);
    if (c === undefined) return;
    this.collections.delete(key);
    clearTimeout(c.timer);
    // An asking worker that exits meanwhile has nobody to answer: its failed send is dropped (see start).
    if (c.from.isConnected()) c.from.send({ type: SCRAPED, id: c.replyId, ...result }, () => undefined);
  }

  private async finish(key: number): Promise<void> {
    const c = this.collections.get(key);
    if (c === undefined) return;
    try {
      const parts = [...c.parts, await this.own.getMetricsAsJSON(), ...(this.retired.length > 0 ? [this.retired] : [])];
      this.answer(key, { text: await AggregatorRegistry.aggregate(parts).metrics() });
    } catch (err) {
      this.answer(key, { error: String(err) });
    }
  }
}

/** An aggregated metric as the JSON a worker sends (the aggregate's metric objects carry their values). */
function plain(metric: unknown): MetricsJson[number] {
  const { name, help, type, aggregator, values } = metric as MetricsJson[number];
  return { name, help, type, aggregator, values } as MetricsJson[number];
}
