/**
 * How event log entries are laid out in store rows, the same in every adapter.
 * A 'run' entry names the (site, run) and the revision it was published with;
 * a 'tick' entry only its moment. Integer columns may arrive as text
 * (PostgreSQL's bigint).
 */
import type { EventBounds, EventEntry } from './store.js';

export interface EventRow {
  id: number | string;
  kind: string;
  farm_id: string | null;
  issue: string | null;
  revision: number | string | null;
  at: number | string;
}

export const EVENT_COLUMNS = 'id, kind, farm_id, issue, revision, at';

export const toEventEntry = (r: EventRow): EventEntry =>
  r.kind === 'run'
    ? { id: Number(r.id), kind: 'run', farmId: r.farm_id!, issue: r.issue!, revision: Number(r.revision), at: Number(r.at) }
    : { id: Number(r.id), kind: 'tick', at: Number(r.at) };

export const toEventBounds = (r: { first: number | string | null; last: number | string | null } | undefined): EventBounds => ({
  first: r?.first === null || r?.first === undefined ? null : Number(r.first),
  last: r?.last === null || r?.last === undefined ? 0 : Number(r.last),
});

/** Checks a page request: ids and counts are whole numbers. */
export function checkEventPage(afterId: number, limit: number): void {
  if (!Number.isSafeInteger(afterId)) throw new RangeError('an event id must be a whole number');
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('a page of events holds at least 1');
}
