/**
 * A run's state as a caller sees it (INTERFACE.md section 11), derived from
 * what the store records (how many of the expected sites hold data, when they
 * first arrived) and the clock, which comes in as a value:
 *
 *   receiving ──(every expected site holds data)──> complete
 *       │                                              ▲
 *       └──(deadline passes first)──> partial ──(the last site arrives late)
 *   any of them ──(a newer run is complete or partial)──> superseded
 *
 * `completed_at` is when the run first left `receiving`: when its last site
 * arrived, or its deadline, whichever came first; a partial run that later
 * completes keeps it.
 */
export const RUN_STATUSES = ['receiving', 'complete', 'partial', 'superseded'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export interface RunArrivalFacts {
  readonly issue: string;
  readonly farms: number;
  readonly firstPublishedAt: number;
  readonly lastArrivalAt: number;
  readonly lastPublishedAt: number;
}

export interface RunState {
  readonly issue: string;
  readonly status: RunStatus;
  readonly farms: number;
  readonly farmsExpected: number;
  readonly availableAt: number;
  readonly completedAt: number | null;
  readonly updatedAt: number;
}

/**
 * The states of runs given newest first (each run's state depends on the newer
 * ones), with `expected` sites, the deadline after a run's first publication,
 * at `now` (epoch ms).
 */
export function runStates(runs: readonly RunArrivalFacts[], expected: number, deadlineMs: number, now: number): RunState[] {
  let newerDone = false;
  return runs.map((r) => {
    const deadlineAt = r.firstPublishedAt + deadlineMs;
    let status: RunStatus;
    let completedAt: number | null;
    if (r.farms >= expected) {
      status = 'complete';
      completedAt = Math.min(r.lastArrivalAt, deadlineAt);
    } else if (now >= deadlineAt) {
      status = 'partial';
      completedAt = deadlineAt;
    } else {
      status = 'receiving';
      completedAt = null;
    }
    const done = status !== 'receiving';
    if (newerDone) status = 'superseded';
    newerDone ||= done;
    return {
      issue: r.issue,
      status,
      farms: r.farms,
      farmsExpected: expected,
      availableAt: r.firstPublishedAt,
      completedAt,
      updatedAt: r.lastPublishedAt,
    };
  });
}

/** The statuses named by `?status=` (comma-separated), or the first name that is not one. */
export function parseStatuses(text: string): { statuses: ReadonlySet<RunStatus> } | { unknown: string } {
  const statuses = new Set<RunStatus>();
  for (const raw of text.split(',')) {
    const name = raw.trim();
    if (!(RUN_STATUSES as readonly string[]).includes(name)) return { unknown: name };
    statuses.add(name as RunStatus);
  }
  return { statuses };
}
