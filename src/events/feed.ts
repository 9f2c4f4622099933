/**
 * What the clients of one scope hear, derived from the store's event log
 * (INTERFACE.md section 14). The log holds facts only: a (site, run) was
 * published (`run` entries) and the clock reached a moment (`tick` entries).
 * A RunFeed turns them, one entry at a time, into the events a scope may see:
 *
 * - `run`: a site of the scope published (or replaced) its data of a run.
 * - `issue`: a run's state (src/domain/runState.ts), counted over the scope's
 *   sites, changed, or the run was seen for the first time.
 *
 * It is pure: no I/O and no clock of its own. Time comes only from the
 * entries' `at`, and the expected sites from `expected()`, so two feeds of the
 * same scope fed the same entries (with the same registry) say the same thing,
 * with the same ids, in every process and on every replay.
 *
 * Ids: an event derived from entry E has the id `E * 10 + k`: k = 0 for the
 * `run` event of a run entry, k = 1..9 for the `issue` events that follow the
 * entry. Issue events of one entry come newest issue first (the order of
 * runStates). At most nine are told per entry; a further change (which takes
 * more than nine runs changing at one moment) is told after the next entry,
 * since a feed remembers only the states it has told.
 *
 * The clock of a feed never goes back: states are judged at the greatest `at`
 * seen so far, so an entry committed just after a tick but stamped a moment
 * before it (a publication's time is taken before its commit, and processes'
 * clocks differ a little) cannot turn a partial run back into a receiving one.
 */
import { runStates, type RunArrivalFacts, type RunStatus } from '../domain/runState.js';
import { formatBeijing } from '../domain/time.js';
import type { EventEntry } from '../store/store.js';

/** Issue events one entry can carry (k = 1..9). */
export const ISSUE_EVENTS_PER_ENTRY = 9;

export interface FeedEvent {
  /** `entryId * 10 + k`. */
  readonly id: number;
  readonly event: 'run' | 'issue';
  /** One line of JSON. */
  readonly data: string;
  readonly issue: string;
  /** With `issue` events: the run's new state. */
  readonly status?: RunStatus;
  /** With `issue` events: sites of the scope holding data in the run. */
  readonly farms?: number;
  /** With `issue` events: registered sites the scope sees. */
  readonly farmsExpected?: number;
  /**
   * When, epoch ms: a `run` event's publication time (its entry's `at`); an
   * `issue` event's moment of judgement (the greatest `at` applied so far).
   */
  readonly at: number;
}

export interface RunFeedOptions {
  /** Whether the scope sees this site. */
  inScope(farmId: string): boolean;
  /** Registered sites the scope sees, asked at every entry. */
  expected(): number;
  /** `--run-deadline`, ms after a run's first publication. */
  readonly deadlineMs: number;
}

/** The id of the k-th event derived from an entry. */
export function eventId(entryId: number, k: number): number {
  return entryId * 10 + k;
}

/** An event id back into the entry it came from and its place among that entry's events. */
export function splitEventId(id: number): { entryId: number; k: number } {
  const k = id % 10;
  return { entryId: (id - k) / 10, k };
}

/**
 * A `Last-Event-ID` (or `?last_event_id=`) as sent: a decimal integer of at
 * most 16 digits (what `entryId * 10 + k` reaches), else undefined.
 */
export function parseLastEventId(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const t = text.trim();
  if (!/^\d{1,16}$/.test(t)) return undefined;
  const n = Number(t);
  return Number.isSafeInteger(n) ? n : undefined;
}

interface RunFacts {
  readonly issue: string;
  readonly sites: Set<string>;
  firstPublishedAt: number;
  lastArrivalAt: number;
  lastPublishedAt: number;
  /** The status last told; undefined: never told. */
  told: RunStatus | undefined;
  /** The status computed at the last entry. */
  status: RunStatus;
}

export class RunFeed {
  /** Newest issue first. */
  private readonly runs: RunFacts[] = [];
  private readonly byIssue = new Map<string, RunFacts>();
  private lastEntryId = 0;
  /** The greatest `at` applied: the feed's clock. */
  private clock = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: RunFeedOptions) {}

  /** The id of the last entry applied (0: none). */
  get position(): number {
    return this.lastEntryId;
  }

  /** Whether some run is still receiving: ticks are needed to judge its deadline. */
  receiving(): boolean {
    return this.runs.some((r) => r.status === 'receiving');
  }

  /**
   * Until when (epoch ms) the clock alone may still change a state, for this
   * scope or any narrower one: a run not every expected site holds data of
   * may turn partial (or supersede an older one) up to its deadline, and a
   * narrower scope's first publication in it is at latest when this scope's
   * last site first arrived. -Infinity when no run is missing sites.
   */
  clockUntil(): number {
    const expected = this.options.expected();
    let until = Number.NEGATIVE_INFINITY;
    for (const r of this.runs) if (r.sites.size < expected) until = Math.max(until, r.lastArrivalAt + this.options.deadlineMs);
    return until;
  }

  /** The events derived from the next entry of the log, in order. Entries must come in increasing id order. */
  apply(entry: EventEntry): FeedEvent[] {
    if (entry.id <= this.lastEntryId) return [];
    this.lastEntryId = entry.id;
    this.clock = Math.max(this.clock, entry.at);
    const out: FeedEvent[] = [];
    if (entry.kind === 'run') {
      if (!this.options.inScope(entry.farmId)) return out;
      this.record(entry.farmId, entry.issue, entry.at);
      out.push({
        id: eventId(entry.id, 0),
        event: 'run',
        data: JSON.stringify({
          farm_id: entry.farmId,
          issue: entry.issue,
          revision: entry.revision,
          published_at: formatBeijing(entry.at),
        }),
        issue: entry.issue,
        at: entry.at,
      });
    }
    if (this.runs.length === 0) return out;
    const expected = this.options.expected();
    const facts: RunArrivalFacts[] = this.runs.map((r) => ({
      issue: r.issue,
      farms: r.sites.size,
      firstPublishedAt: r.firstPublishedAt,
      lastArrivalAt: r.lastArrivalAt,
      lastPublishedAt: r.lastPublishedAt,
    }));
    const states = runStates(facts, expected, this.options.deadlineMs, this.clock);
    let k = 1;
    for (let i = 0; i < states.length; i++) {
      const run = this.runs[i]!;
      const state = states[i]!;
      run.status = state.status;
      if (run.told === state.status || k > ISSUE_EVENTS_PER_ENTRY) continue;
      run.told = state.status;
      out.push({
        id: eventId(entry.id, k++),
        event: 'issue',
        data: JSON.stringify({ issue: state.issue, status: state.status, farms: state.farms, farms_expected: state.farmsExpected }),
        issue: state.issue,
        status: state.status,
        farms: state.farms,
        farmsExpected: state.farmsExpected,
        at: this.clock,
      });
    }
    return out;
  }

  private record(farmId: string, issue: string, at: number): void {
    let run = this.byIssue.get(issue);
    if (run === undefined) {
      run = {
        issue,
        sites: new Set(),
        firstPublishedAt: at,
        lastArrivalAt: at,
        lastPublishedAt: at,
        told: undefined,
        status: 'receiving',
      };
      this.byIssue.set(issue, run);
      // Newest first: issues are yyyyMMddHH, so text order is time order.
      let i = 0;
      while (i < this.runs.length && this.runs[i]!.issue > issue) i++;
      this.runs.splice(i, 0, run);
    }
    if (!run.sites.has(farmId)) {
      run.sites.add(farmId);
      run.lastArrivalAt = Math.max(run.lastArrivalAt, at);
    }
    run.firstPublishedAt = Math.min(run.firstPublishedAt, at);
    run.lastPublishedAt = Math.max(run.lastPublishedAt, at);
  }
}
