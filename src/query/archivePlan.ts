/**
 * Planning a bulk download (INTERFACE.md section 17): which run, which sites of it the caller may see (each
 * with the version that will be sent), which fields and which window. Knows nothing of HTTP or of the zip
 * format; the same checks and messages as a single forecast download, so that each entry is that download.
 */
import { notFound } from '../domain/errors.js';
import { parseIssue } from '../domain/time.js';
import { resolveWindow, type TimeWindow } from '../domain/window.js';
import type { RunVersion, Store } from '../store/store.js';
import { runParams } from './forecastQuery.js';
import type { Scope } from './scope.js';

export interface ArchiveParams {
  readonly issue?: string;
  readonly start?: string;
  readonly end?: string;
  readonly elements?: readonly string[];
}

export interface ArchivePlan {
  readonly issue: string;
  readonly issueMs: number;
  /** Catalogue indexes of the chosen fields, in catalogue order. */
  readonly elements: readonly number[];
  readonly startMs: number | undefined;
  readonly endMs: number | undefined;
  /** The window the entries are cut to, resolved against the run (checked here, before anything is sent). */
  readonly window: TimeWindow;
  /** The visible sites holding the run, sorted by farm_id, each with the version listed when planning. */
  readonly runs: readonly RunVersion[];
  /** The newest publication among them: the archive's Last-Modified. */
  readonly publishedAt: number;
}

export async function planArchive(store: Store, p: ArchiveParams, scope: Scope): Promise<ArchivePlan> {
  const { startMs, endMs, elements } = runParams(p);
  const among = scope.farms === null ? undefined : [...scope.farms];
  let issue = p.issue;
  if (issue === undefined) {
    issue = (await store.listIssues(undefined, 0, 1, among)).items[0]?.issue;
    if (issue === undefined) throw notFound('No run holds forecast data yet.');
  }
  // A run none of whose sites the caller may see is answered as one that does not exist.
  const runs = await store.runVersions(issue, among);
  if (runs.length === 0) throw notFound(`Issue ${issue} does not exist.`);
  let publishedAt = 0;
  for (const r of runs) publishedAt = Math.max(publishedAt, r.publishedAt);
  const issueMs = parseIssue(issue)!;
  // A start after the run's last time with no end is a bad window: refused now, not in the middle of a zip.
  const window = resolveWindow(issueMs, startMs, endMs);
  return { issue, issueMs, elements, startMs, endMs, window, runs, publishedAt };
}
