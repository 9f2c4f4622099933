/**
 * Retention (INTERFACE.md section 12): runs whose issue time is older than
 * the retention period are removed, but never a site's newest run, so a site
 * whose provider stopped delivering still answers with its last forecast.
 * The event log (section 14) keeps its entries for `events-keep` (never
 * removing the newest, so the last id given survives), and the webhook outbox
 * its delivered and given-up deliveries as long (never a pending one).
 * `serve` prunes at start and hourly; `forecastd prune` on demand.
 */
import { formatIssue, HOUR_MS } from '../domain/time.js';
import type { RunKey, Store } from '../store/store.js';

const DAY_MS = 24 * HOUR_MS;

/** The first issue kept: runs issued before now minus `days` are older than the period. */
export function retentionCutoff(nowMs: number, days: number): string {
  // An issue names a whole hour; a run issued within the hour the period ends in is kept.
  return formatIssue(Math.floor((nowMs - days * DAY_MS) / HOUR_MS) * HOUR_MS);
}

/** Removes the event log's entries older than `keepMs` before now, but the newest; how many. */
export function pruneEventLog(store: Store, keepMs: number, nowMs: number): Promise<number> {
  return store.pruneEvents(nowMs - keepMs);
}

/**
 * Removes (or with dryRun lists) the runs past the period; `days` 0 keeps every run. With `eventsKeepMs`,
 * also removes the event log's entries older than that, and the outbox's delivered and given-up deliveries
 * last attempted before then (not in a dry run, which changes nothing).
 */
export async function pruneOld(
  store: Store,
  days: number,
  nowMs: number,
  dryRun: boolean,
  eventsKeepMs?: number,
): Promise<readonly RunKey[]> {
  const runs = days === 0 ? [] : await store.pruneRuns(retentionCutoff(nowMs, days), dryRun);
  if (eventsKeepMs !== undefined && !dryRun) {
    await pruneEventLog(store, eventsKeepMs, nowMs);
    await store.pruneDeliveries(nowMs - eventsKeepMs);
  }
  return runs;
}

/** What serve keeps: runs for `days` (0: every run), and the event log's entries for `eventsKeepMs`. */
export interface RetentionPolicy {
  readonly days: number;
  readonly eventsKeepMs?: number;
}

export interface RetentionLog {
  info(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
}

/** Prunes now and then every `everyMs` (an hour) until the returned stop is called. */
export function scheduleRetention(store: Store, policy: RetentionPolicy, log: RetentionLog, everyMs = HOUR_MS): () => Promise<void> {
  const { days, eventsKeepMs } = policy;
  if (days === 0 && eventsKeepMs === undefined) return async () => undefined;
  let running: Promise<void> = Promise.resolve();
  const run = (): void => {
    running = pruneOld(store, days, Date.now(), false, eventsKeepMs).then(
      (removed) => {
        if (removed.length > 0) log.info({ removed: removed.length, retentionDays: days }, 'retention: removed old runs');
      },
      // A store outage only delays the next prune.
      (err: unknown) => log.warn({ err }, 'retention: pruning failed'),
    );
  };
  run();
  const timer = setInterval(run, everyMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
