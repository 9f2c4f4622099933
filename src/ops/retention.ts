/**
 * Retention (INTERFACE.md section 12): runs whose issue time is older than
 * the retention period are removed, but never a site's newest run, so a site
 * whose provider stopped delivering still answers with its last forecast.
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

/** Removes (or with dryRun lists) the runs past the period; `days` 0 keeps everything. */
export async function pruneOld(store: Store, days: number, nowMs: number, dryRun: boolean): Promise<readonly RunKey[]> {
  if (days === 0) return [];
  return store.pruneRuns(retentionCutoff(nowMs, days), dryRun);
}

export interface RetentionLog {
  info(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
}

/** Prunes now and then every `everyMs` (an hour) until the returned stop is called. */
export function scheduleRetention(store: Store, days: number, log: RetentionLog, everyMs = HOUR_MS): () => Promise<void> {
  if (days === 0) return async () => undefined;
  let running: Promise<void> = Promise.resolve();
  const run = (): void => {
    running = pruneOld(store, days, Date.now(), false).then(
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
