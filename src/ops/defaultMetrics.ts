/**
 * prom-client's default process and Node.js metrics, all but the garbage
 * collector's duration histogram (nodejs_gc_duration_seconds).
 *
 * Why not that one: it observes every collection through a PerformanceObserver,
 * and any observer of collections (prom-client's, an empty one, or
 * v8.GCProfiler) made scavenges promote about 3 KB more each. Under mixed load
 * at 10,000 sites that was more than half of what reached the old generation,
 * and it doubled the mark-compacts whose marking makes the tail
 * (docs/performance.md). A collection's pause still shows where an operator
 * looks for stalls, in nodejs_eventloop_lag_seconds; and prom-client's
 * observer counted only the first collection of each batch it was handed, so
 * under load the histogram undercounted anyway.
 *
 * prom-client offers no option to leave one default metric out, so each of its
 * default collectors is loaded by the name in its own list (metricsList), as
 * collectDefaultMetrics would call it.
 */
import { createRequire } from 'node:module';
import { collectDefaultMetrics, type Registry } from 'prom-client';

/** The default collector left out, by prom-client's name for it. */
const LEFT_OUT = 'gc';

/** What each module of prom-client's default collectors exports. */
type Collector = (registry: Registry, config: { readonly eventLoopMonitoringPrecision: number }) => void;

const require = createRequire(import.meta.url);

export function collectProcessMetrics(registry: Registry, config: { readonly eventLoopMonitoringPrecision: number }): void {
  for (const name of collectDefaultMetrics.metricsList) {
    if (name === LEFT_OUT) continue;
    const collect = require(`prom-client/lib/metrics/${name}.js`) as Collector;
    collect(registry, config);
  }
}
