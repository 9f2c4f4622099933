/**
 * The runs list as a scope sees it at a moment: each run with its state
 * (domain/runState.ts), expected sites being the registered sites the scope
 * sees; optionally only runs holding data of one site, or in some states.
 */
import { badParameter, clip } from '../domain/errors.js';
import { parseStatuses, runStates, type RunState, type RunStatus } from '../domain/runState.js';
import type { Page, Store } from '../store/store.js';
import { listFarms, listIssues } from './lists.js';
import type { Scope } from './scope.js';

export interface RunListQuery {
  readonly farmId?: string;
  /** `?status=` as sent: state names, comma-separated. */
  readonly status?: string;
  readonly offset: number;
  readonly limit: number;
}

/** The runs of the scope with their states, newest first, at `now`. */
export async function scopedRunStates(store: Store, scope: Scope, deadlineMs: number, now: number): Promise<RunState[]> {
  const among = scope.farms === null ? undefined : [...scope.farms];
  const [arrivals, expected] = await Promise.all([
    store.runArrivals(among),
    scope.farms === null ? store.countFarms() : listFarms(store, scope, 0, Number.MAX_SAFE_INTEGER).then((p) => p.total),
  ]);
  return runStates(arrivals, expected, deadlineMs, now);
}

export async function listRuns(store: Store, scope: Scope, q: RunListQuery, deadlineMs: number, now: number): Promise<Page<RunState>> {
  let wanted: ReadonlySet<RunStatus> | undefined;
  if (q.status !== undefined) {
    const parsed = parseStatuses(q.status);
    if ('unknown' in parsed) {
      throw badParameter(
        `Query parameter status has "${clip(parsed.unknown, 40)}", which is not a run state (receiving, complete, partial, superseded).`,
      );
    }
    wanted = parsed.statuses;
  }
  let states = await scopedRunStates(store, scope, deadlineMs, now);
  if (q.farmId !== undefined) {
    // The site's runs (not found, as any missing site, when the scope does not see it).
    const ofSite = await listIssues(store, scope, q.farmId, 0, Number.MAX_SAFE_INTEGER);
    const issues = new Set(ofSite.items.map((i) => i.issue));
    states = states.filter((s) => issues.has(s.issue));
  }
  if (wanted !== undefined) states = states.filter((s) => wanted.has(s.status));
  return { total: states.length, items: states.slice(q.offset, q.offset + q.limit) };
}
