/**
 * What `forecastd status` reports of a store: sites, runs, the newest runs
 * with their site counts, the age of the run the freshness alert watches
 * (latestRunIssueMs, shared with the metric), and the store's size. Read
 * through the store's own list and count methods.
 */
import { formatUtc, parseIssue } from '../domain/time.js';
import type { Store } from '../store/store.js';
import { latestRunIssueMs } from './storeGauges.js';
import { storeSize, type StoreSize } from './storeSize.js';

/** How many of the newest runs are listed. */
export const LATEST_RUNS = 5;

export interface RunLine {
  readonly issue: string;
  readonly issueTimeUtc: string;
  /** Sites holding data in the run. */
  readonly sites: number;
}

export interface StoreStatus {
  readonly sites: number;
  /** Runs (issues), as the issues list counts them. */
  readonly runs: number;
  /** (site, run) records: one per run file taken. */
  readonly siteRuns: number;
  /** Newest first. */
  readonly latestRuns: readonly RunLine[];
  /** Seconds since the issue time of the run latestRunIssueMs names; undefined when the store holds none. */
  readonly latestRunAgeS: number | undefined;
  readonly size: StoreSize;
}

export async function storeStatus(store: Store, url: string, nowMs: number): Promise<StoreStatus> {
  const [sites, siteRuns, issues, latestMs, size] = await Promise.all([
    store.countFarms(),
    store.countRuns(),
    store.listIssues(undefined, 0, LATEST_RUNS),
    latestRunIssueMs(store),
    storeSize(url),
  ]);
  return {
    sites,
    runs: issues.total,
    siteRuns,
    latestRuns: issues.items.map((i) => ({ issue: i.issue, issueTimeUtc: formatUtc(parseIssue(i.issue)!), sites: i.farms })),
    latestRunAgeS: latestMs === undefined ? undefined : Math.round((nowMs - latestMs) / 1000),
    size,
  };
}
