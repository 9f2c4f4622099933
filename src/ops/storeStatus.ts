/**
 * What `forecastd status` reports of a store: sites, runs, the newest runs
 * with their states and site counts over every registered site (section 11),
 * the age of the newest complete or partial run (newestDoneRun, shared with
 * the freshness metric), and the store's size.
 */
import type { RunStatus } from '../domain/runState.js';
import { formatUtc, parseIssue } from '../domain/time.js';
import { scopedRunStates } from '../query/runList.js';
import { EVERY_SITE } from '../query/scope.js';
import type { Store } from '../store/store.js';
import { newestDoneRun } from './storeGauges.js';
import { storeSize, type StoreSize } from './storeSize.js';

/** How many of the newest runs are listed. */
export const LATEST_RUNS = 5;

export interface RunLine {
  readonly issue: string;
  readonly issueTimeUtc: string;
  readonly status: RunStatus;
  /** Sites holding data in the run. */
  readonly sites: number;
  /** Registered sites. */
  readonly sitesExpected: number;
}

export interface StoreStatus {
  readonly sites: number;
  /** Runs (issues), as the issues list counts them. */
  readonly runs: number;
  /** (site, run) records: one per run file taken. */
  readonly siteRuns: number;
  /** Newest first. */
  readonly latestRuns: readonly RunLine[];
  /** The newest complete or partial run; undefined when there is none. */
  readonly latestDone: { readonly issue: string; readonly ageS: number } | undefined;
  readonly size: StoreSize;
}

/** The store's status at nowMs, runs judged with serve's --run-deadline. */
export async function storeStatus(store: Store, url: string, nowMs: number, deadlineMs: number): Promise<StoreStatus> {
  const [sites, siteRuns, states, size] = await Promise.all([
    store.countFarms(),
    store.countRuns(),
    scopedRunStates(store, EVERY_SITE, deadlineMs, nowMs),
    storeSize(url),
  ]);
  const done = newestDoneRun(states);
  return {
    sites,
    runs: states.length,
    siteRuns,
    latestRuns: states.slice(0, LATEST_RUNS).map((r) => ({
      issue: r.issue,
      issueTimeUtc: formatUtc(parseIssue(r.issue)!),
      status: r.status,
      sites: r.farms,
      sitesExpected: r.farmsExpected,
    })),
    latestDone: done === undefined ? undefined : { issue: done.issue, ageS: Math.round((nowMs - parseIssue(done.issue)!) / 1000) },
    size,
  };
}
