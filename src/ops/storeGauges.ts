/**
 * Gauges read from the store when /metrics is scraped: the same for every
 * process of an instance, so they are read once per scrape by the process
 * that answers it, in a registry of their own that the cluster aggregation
 * does not add up (clusterMetrics.ts). Each is one cheap query.
 */
import { Gauge, Registry } from 'prom-client';
import { parseIssue } from '../domain/time.js';
import type { Store } from '../store/store.js';

/**
 * The issue time (epoch ms) of the run that `forecastd_latest_run_age_seconds`
 * and `forecastd status` measure the age of; undefined when there is none.
 * For now the newest stored run. Section 13 means the newest run that is
 * complete or partial (section 11): once runs have states, this is the one
 * function to change.
 */
export async function latestRunIssueMs(store: Store): Promise<number | undefined> {
  const newest = (await store.listIssues(undefined, 0, 1)).items[0];
  return newest === undefined ? undefined : (parseIssue(newest.issue) ?? undefined);
}

/** Sets the gauge, or leaves it without a sample when the value is unknown (empty store, store unreachable). */
async function setFrom(gauge: Gauge, read: () => Promise<number | undefined>): Promise<void> {
  let value: number | undefined;
  try {
    value = await read();
  } catch {
    // Counted as a store error by the store's wrapper; the scrape still answers.
    value = undefined;
  }
  if (value === undefined) gauge.remove();
  else gauge.set(value);
}

/** A registry of the store's gauges; `now` is the clock the run's age is measured with. */
export function storeGauges(store: Store, now: () => number = Date.now): Registry {
  const registry = new Registry();
  const registers = [registry];
  new Gauge({
    name: 'forecastd_sites',
    help: 'Registered sites.',
    registers,
    collect(this: Gauge) {
      return setFrom(this, () => store.countFarms());
    },
  });
  new Gauge({
    name: 'forecastd_runs',
    help: 'Stored runs (issues), as the issues list counts them.',
    registers,
    collect(this: Gauge) {
      return setFrom(this, async () => (await store.listIssues(undefined, 0, 1)).total);
    },
  });
  new Gauge({
    name: 'forecastd_site_runs',
    help: 'Stored (site, run) records: one per run file taken.',
    registers,
    collect(this: Gauge) {
      return setFrom(this, () => store.countRuns());
    },
  });
  new Gauge({
    name: 'forecastd_latest_run_age_seconds',
    help: 'Now minus the issue time of the newest run; no sample while the store holds none.',
    registers,
    collect(this: Gauge) {
      return setFrom(this, async () => {
        const issueMs = await latestRunIssueMs(store);
        return issueMs === undefined ? undefined : (now() - issueMs) / 1000;
      });
    },
  });
  return registry;
}
