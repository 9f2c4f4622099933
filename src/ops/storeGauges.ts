/**
 * Gauges read from the store when /metrics is scraped: the same for every
 * process of an instance, so they are read once per scrape by the process
 * that answers it, in a registry of their own that the cluster aggregation
 * does not add up (clusterMetrics.ts). Each is one cheap query.
 */
import { Gauge, Registry } from 'prom-client';
import type { RunState } from '../domain/runState.js';
import { parseIssue } from '../domain/time.js';
import { scopedRunStates } from '../query/runList.js';
import { EVERY_SITE } from '../query/scope.js';
import type { Store } from '../store/store.js';

/**
 * The run whose age `forecastd_latest_run_age_seconds` and `forecastd status`
 * report (INTERFACE.md section 13): the newest run that is complete or partial
 * over every registered site (section 11). A run still receiving does not
 * count, so the age keeps growing while a late run trickles in, and the
 * freshness alert fires on time.
 */
export function newestDoneRun(states: readonly RunState[]): RunState | undefined {
  return states.find((s) => s.status === 'complete' || s.status === 'partial');
}

/** The issue time (epoch ms) of newestDoneRun at `now`; undefined when no run is complete or partial. */
export async function latestRunIssueMs(store: Store, deadlineMs: number, now: number): Promise<number | undefined> {
  const done = newestDoneRun(await scopedRunStates(store, EVERY_SITE, deadlineMs, now));
  return done === undefined ? undefined : (parseIssue(done.issue) ?? undefined);
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

/**
 * A registry of the store's gauges; `deadlineMs` is serve's --run-deadline and
 * `now` the clock that runs' states and ages are judged with.
 */
export function storeGauges(store: Store, deadlineMs: number, now: () => number = Date.now): Registry {
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
    help: 'Now minus the issue time of the newest complete or partial run; no sample while there is none.',
    registers,
    collect(this: Gauge) {
      return setFrom(this, async () => {
        const at = now();
        const issueMs = await latestRunIssueMs(store, deadlineMs, at);
        return issueMs === undefined ? undefined : (at - issueMs) / 1000;
      });
    },
  });
  return registry;
}
