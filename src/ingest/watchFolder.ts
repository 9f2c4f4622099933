/**
 * Watch-folder ingest (INTERFACE.md section 12): takes every complete run file
 * put into a folder, one at a time, and moves it to DIR/done/ or DIR/rejected/.
 *
 * Each file goes through the same steps, each of which survives a kill at any
 * instant:
 * 1. claim: rename into this watcher's claims folder under a name unique to this
 *    delivery (exactly one of several watchers' renames succeeds);
 * 2. ingest through the strict reader; publish the run together with the record
 *    of the file (claim, path, size, time, SHA-256, result) in one store
 *    transaction, or record the rejection;
 * 3. move it to its place (watchPlace.ts).
 * A claim left behind is finished by the next watcher to start or to notice its
 * owner gone (watchOwners.ts): when the store holds its record only step 3 is
 * redone, else from step 2 (publishing a run again replaces it atomically).
 *
 * The folder is scanned at start and every scan interval (a folder event only
 * brings the next scan forward: events are lost on network file systems).
 */
import { watch, type FSWatcher } from 'node:fs';
import { readdir, rename, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ClaimRecordedError, type FileRecord, type IngestedFile, type Store } from '../store/store.js';
import { formatFault, type Fault } from './fault.js';
import { FileReaders } from './fileReaders.js';
import { asFault, formatAccepted } from './ingestFiles.js';
import { prepareRunFile, type PrepareOptions, type PreparedFile } from './preparedFile.js';
import { parseRunFileName } from './runCsv.js';
import { baseName, claimName, parseClaimName, watchLayout } from './watchClaims.js';
import { Owner, Peers } from './watchOwners.js';
import { placeClaim } from './watchPlace.js';
import { SettleTracker, type Candidate } from './watchScan.js';

export interface WatchOptions {
  /** The folder, as given (reports name files under it). */
  readonly dir: string;
  /** A file is complete once its size and modification time have not changed for this long. */
  readonly settleMs: number;
  /** Time between two scans of the folder. Default 500 ms. */
  readonly scanMs?: number;
  /** Time between two heartbeats of this watcher. Default 2 s. */
  readonly heartbeatMs?: number;
  /** A watcher on another host whose heartbeat has not changed for this long is gone. Default 30 s. */
  readonly leaseMs?: number;
  /** Each file taken or rejected by this watcher, once it is in its place. */
  readonly onOutcome?: (o: WatchOutcome) => void;
  /** Threads that read, check and encode the files taken (FileReaders); 0 or absent: on the watcher's own. */
  readonly threads?: number;
  /** A failure that the watcher survives (the store unreachable, a file it cannot move); it tries again later. */
  readonly onError?: (err: unknown) => void;
}

/** A file this watcher took or rejected: the path it was delivered at (under the folder as given) and its report line. */
export type Outcome =
  | { readonly ok: true; readonly file: string; readonly farmId: string; readonly issue: string; readonly records: number; readonly line: string }
  | { readonly ok: false; readonly file: string; readonly fault: Fault; readonly line: string };

/** An outcome once the file is in its place: `placedAt` relative to the watched folder. */
export type WatchOutcome = Outcome & { readonly placedAt: string };

export interface Watcher {
  /** Stops after the file in hand; resolves once the watcher has let go of everything. */
  stop(): Promise<void>;
  /** Resolves when the watcher has stopped. */
  readonly stopped: Promise<void>;
}

const DEFAULTS = { scanMs: 500, heartbeatMs: 2000, leaseMs: 30_000 };
/**
 * Files taken at once. Each file waits on the disk several times (claim, stat,
 * read, place) and on the store; taken one at a time, those waits made a file
 * take 2.0 ms against 1.2 ms for `ingest` (1,000 files, bench:watch). With a
 * few in hand, one file's work fills another's waits.
 */
const TAKE_LANES = 4;
const MAX_BACKOFF_MS = 10_000;

/** A pass that failed for a reason already reported. */
class Retry extends Error {}

const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException).code;

/** A recorded result, as far as placing it needs, and the outcome when this watcher made the record. */
interface Recorded {
  readonly rec: Pick<IngestedFile, 'result' | 'at' | 'path' | 'message'>;
  readonly outcome?: Outcome;
}

/** Starts watching; resolves once the folder is checked and this watcher's claims folder exists. */
export async function watchFolder(store: Store, options: WatchOptions): Promise<Watcher> {
  const o = { ...DEFAULTS, ...options };
  const layout = watchLayout(resolve(o.dir));
  const st = await stat(layout.root);
  if (!st.isDirectory()) throw new Error(`${o.dir} is not a folder`);
  const owner = await Owner.start(layout);
  const peers = new Peers(layout, owner.id, o.leaseMs);
  const tracker = new SettleTracker(o.settleMs);
  const display = (rel: string): string => join(o.dir, rel);
  const report = (err: unknown): void => o.onError?.(err);

  let stopping = false;
  let wake: (() => void) | undefined;
  const sleep = (ms: number): Promise<void> =>
    new Promise((res) => {
      const t = setTimeout(done, ms);
      function done(): void {
        clearTimeout(t);
        wake = undefined;
        res();
      }
      wake = done;
    });

  let hint: FSWatcher | undefined;
  try {
    hint = watch(layout.root, () => wake?.());
    hint.on('error', () => undefined);
  } catch {
    hint = undefined; // no events here: the scans alone find files
  }
  const heartbeat = setInterval(() => void owner.beat().catch(report), o.heartbeatMs);
  const readers = o.threads !== undefined && o.threads > 0 ? new FileReaders(o.threads) : undefined;
  const prepare = (file: string, options: PrepareOptions): Promise<PreparedFile> =>
    readers !== undefined ? readers.prepare(file, options) : Promise.resolve(prepareRunFile(file, options));

  /** Ingests and records a claim: the record (ours, or one made meanwhile); undefined when the claim went. */
  async function ingestClaim(claimPath: string, name: string, path: string, seenMtimeMs?: number): Promise<Recorded | undefined> {
    let mtimeMs: number;
    try {
      mtimeMs = seenMtimeMs ?? (await stat(claimPath)).mtimeMs;
    } catch (err) {
      if (errno(err) === 'ENOENT') return undefined; // taken over by another watcher
      throw err;
    }
    // A file that cannot be read is rejected, as ingest rejects it (its record holds the hash of nothing).
    const base = baseName(path);
    const prepared = await prepare(claimPath, { name: base, facts: true });
    if (!prepared.ok && prepared.code === 'ENOENT') return undefined;
    const file = display(path);
    const { size, sha256 } = prepared.facts!;
    const record = { claim: name, path, size, mtimeMs: Math.trunc(mtimeMs), sha256 };
    let fault: Fault;
    if (prepared.ok) {
      const { farmId, issue, series } = prepared;
      const line = formatAccepted(file, farmId, issue, series.records);
      const taken: FileRecord = { ...record, message: line, farmId, issue };
      try {
        const pub = await store.putRun({ farmId, issue, series }, { file: taken });
        return {
          rec: { result: 'taken', at: pub.publishedAt, path, message: line },
          outcome: { ok: true, file, farmId, issue, records: series.records, line },
        };
      } catch (err) {
        if (err instanceof ClaimRecordedError) return recorded(name);
        fault = asFault(err);
      }
    } else fault = prepared.fault;
    const line = formatFault(file, fault);
    let names: { farmId: string | null; issue: string | null } = { farmId: null, issue: null };
    try {
      names = parseRunFileName(base);
    } catch {
      // a name that names no run: recorded without one
    }
    try {
      const rec = await store.recordRejectedFile({ ...record, message: line, farmId: names.farmId, issue: names.issue });
      return { rec, outcome: { ok: false, file, fault, line } };
    } catch (err) {
      if (err instanceof ClaimRecordedError) return recorded(name);
      throw err;
    }
  }

  async function recorded(name: string): Promise<Recorded | undefined> {
    const rec = await store.ingestedFile(name);
    return rec && { rec };
  }

  /**
   * Finishes a claim in this watcher's folder: ingests it unless recorded before, then moves it.
   * `mtimeMs`: the claim's modification time, when just seen.
   */
  async function finish(name: string, fresh: boolean, mtimeMs?: number): Promise<void> {
    const claimPath = join(owner.dir, name);
    const path = parseClaimName(name)?.path ?? name;
    const before = fresh ? undefined : await recorded(name);
    const done = before ?? (await ingestClaim(claimPath, name, path, mtimeMs));
    if (done === undefined) return;
    // A record made before this attempt may have been linked into place before.
    const placedAt = await placeClaim(layout, owner.id, claimPath, done.rec, done.outcome === undefined);
    if (placedAt !== undefined && done.outcome !== undefined) o.onOutcome?.({ ...done.outcome, placedAt });
  }

  /** Claims a complete file and finishes it. */
  async function take(c: Candidate): Promise<void> {
    tracker.forget(c.rel);
    const name = claimName(c.rel, c.size, c.mtimeMs);
    try {
      await rename(c.abs, join(owner.dir, name));
    } catch (err) {
      if (errno(err) === 'ENOENT') return; // another watcher claimed it, or it went
      throw err;
    }
    await finish(name, true, await settledAgain(join(owner.dir, name), c));
  }

  /**
   * Takes the ready files TAKE_LANES at a time. Files of one run name (delivered
   * into different subfolders) are taken one after the other in scan order, so
   * that the later delivery is the one kept, as when files are taken one by one.
   * After a failure no more are started; those in hand are finished, then the
   * first failure is thrown.
   */
  async function takeAll(ready: readonly Candidate[]): Promise<void> {
    const byRun = new Map<string, Candidate[]>();
    for (const c of ready) {
      const run = baseName(c.rel).replace(/\.csv$/i, '');
      const queue = byRun.get(run);
      if (queue === undefined) byRun.set(run, [c]);
      else queue.push(c);
    }
    const queues = [...byRun.values()];
    let next = 0;
    let failure: { err: unknown } | undefined;
    const lane = async (): Promise<void> => {
      while (!stopping && failure === undefined && next < queues.length) {
        for (const c of queues[next++]!) {
          if (stopping || failure !== undefined) return;
          try {
            await take(c);
          } catch (err) {
            failure ??= { err };
            return;
          }
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(TAKE_LANES, queues.length) }, lane));
    if (failure !== undefined) throw failure.err;
  }

  /**
   * A file written in place may still be written to through a handle opened
   * before the claim: wait until it stands still for the settle time again.
   * Returns its modification time then, or undefined when it went.
   */
  async function settledAgain(claimPath: string, c: Candidate): Promise<number | undefined> {
    let last = { size: c.size, mtimeMs: c.mtimeMs };
    for (;;) {
      const now = await stat(claimPath).catch(() => undefined);
      if (now === undefined) return undefined;
      if (now.size === last.size && now.mtimeMs === last.mtimeMs) return now.mtimeMs;
      last = { size: now.size, mtimeMs: now.mtimeMs };
      await new Promise((r) => setTimeout(r, Math.max(o.settleMs, 50)));
    }
  }

  /**
   * Claims in this watcher's folder: left by a failure (the store unreachable), or taken over from a gone
   * watcher. One that cannot be finished now does not hold up the others; returns whether all were.
   */
  async function finishOwn(): Promise<boolean> {
    const names = (await readdir(owner.dir).catch(() => [] as string[])).filter((n) => !n.startsWith('.'));
    let all = true;
    for (const name of names) {
      if (stopping) break;
      await finish(name, false).catch((err: unknown) => {
        all = false;
        report(err);
      });
    }
    return all;
  }

  async function takeOverGone(): Promise<void> {
    for (const id of await peers.gone()) await peers.takeOver(id, owner.dir);
  }

  /** One pass; returns how long to wait before the next, or throws (then the wait grows). */
  async function cycle(): Promise<number> {
    await takeOverGone();
    // While claims cannot be finished, no more are made: they would only wait beside them.
    if (!(await finishOwn())) throw new Retry();
    if (stopping) return 0;
    const { ready, nextAt } = await tracker.scan(layout.root);
    await takeAll(ready);
    if (ready.length > 0) return 0;
    return nextAt === undefined ? o.scanMs : Math.min(o.scanMs, Math.max(0, Math.ceil(nextAt - performance.now())));
  }

  const stopped = (async () => {
    let failures = 0;
    try {
      while (!stopping) {
        let delay: number;
        try {
          delay = await cycle();
          failures = 0;
        } catch (err) {
          if (!(err instanceof Retry)) report(err);
          // Failing passes wait longer each time, up to MAX_BACKOFF_MS.
          delay = Math.min(o.scanMs * 2 ** Math.min(failures++, 10), MAX_BACKOFF_MS);
        }
        if (!stopping && delay > 0) await sleep(delay);
      }
    } finally {
      clearInterval(heartbeat);
      hint?.close();
      await readers?.close();
      await owner.release().catch(report);
    }
  })();

  return {
    stopped,
    async stop() {
      stopping = true;
      wake?.();
      await stopped;
    },
  };
}
