/** Starting the watch-folder ingest from serve or ingest (INTERFACE.md section 12). */
import { statSync } from 'node:fs';
import { watchFolder, type WatchOutcome, type Watcher } from '../ingest/watchFolder.js';
import type { Metrics } from '../ops/metrics.js';
import type { Resolved } from '../settings/resolve.js';
import type { ServeOptions, WatchSettings } from '../settings/serveOptions.js';
import { openStore } from '../store/openStore.js';
import type { Store } from '../store/store.js';

/** Refuses, as a setting's fault (exit status 2), a folder to watch that is not there. */
export function checkWatchFolder(s: Resolved): void {
  const dir = s.value('watch');
  if (dir === undefined) return;
  let isFolder: boolean;
  try {
    isFolder = statSync(dir).isDirectory();
  } catch {
    throw s.error('watch', `no such folder "${dir}"`);
  }
  if (!isFolder) throw s.error('watch', `"${dir}" is not a folder`);
}

export interface WatchHandlers {
  readonly onOutcome: (o: WatchOutcome) => void;
  readonly onError: (err: unknown) => void;
}

export function runWatch(store: Store, w: WatchSettings, handlers: WatchHandlers): Promise<Watcher> {
  return watchFolder(store, { dir: w.dir, settleMs: w.settleMs, threads: w.threads, ...handlers });
}

/** What the watcher logs through: a pino logger, or jsonLinesLog where there is none. */
export interface WatchLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** serve logs each file taken (info) or rejected (warn), and failures it will retry (error); `metrics` counts the files. */
export function watchLogHandlers(log: WatchLog, metrics?: Metrics): WatchHandlers {
  return {
    onOutcome: (o) => {
      metrics?.countIngestedFile(o);
      if (o.ok) log.info({ file: o.file, farm_id: o.farmId, issue: o.issue, records: o.records, placed: o.placedAt }, 'watch: file taken');
      else log.warn({ file: o.file, report: o.line, placed: o.placedAt }, 'watch: file rejected');
    },
    onError: (err) => log.error({ fault: err instanceof Error ? err.message : String(err) }, 'watch: failed, trying again'),
  };
}

const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/** JSON lines on stderr in the server log's shape, for a process without the app's logger (a cluster's primary). */
export function jsonLinesLog(level: string, stream: NodeJS.WritableStream = process.stderr): WatchLog {
  const min = LEVELS[level] ?? LEVELS.warn!;
  const line = (n: number) => (obj: object, msg: string) => {
    if (n >= min) stream.write(JSON.stringify({ level: n, time: Date.now(), pid: process.pid, ...obj, msg }) + '\n');
  };
  return { info: line(30), warn: line(40), error: line(50) };
}

/** A cluster's primary watches the folder with a store of its own; stop() finishes the file in hand and closes it. */
export async function primaryWatch(o: ServeOptions & { watch: WatchSettings }, metrics?: Metrics): Promise<{ stop(): Promise<void> }> {
  const store = await openStore(o.db, o.store);
  try {
    const watcher = await runWatch(store, o.watch, watchLogHandlers(jsonLinesLog(o.level), metrics));
    return {
      async stop() {
        await watcher.stop();
        await store.close();
      },
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}
