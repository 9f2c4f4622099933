/**
 * The in-memory read side of a store for the forecast path: every farm, the
 * latest issue per farm, and a bounded cache of runs (their compact blobs with
 * parsed views, copied into the cache's own memory: see ArenaCache). When the
 * store's change token moves (checked at most once per changePollMs, at once
 * after a commit through this process), the farms and runs written since the
 * last seen revision are fetched and only those entries are replaced or
 * dropped. So a replaced run is never served from here once its replacement is
 * committed.
 *
 * A run handed out by getRun() is valid until the current turn of the event
 * loop ends: use it synchronously, never across an I/O wait.
 */
import { ArenaCache } from '../cache/arenaCache.js';
import type { DiskCacheStats, DiskRing, RingRecord } from '../cache/diskRing.js';
import { openSeries } from '../domain/codec.js';
import type { SeriesView } from '../domain/seriesView.js';
import { runKey, type Box, type Farm, type Store, type StoredRun } from '../store/store.js';
import type { Maybe } from './maybe.js';
import type { SiteSource } from './siteLookup.js';

/** What forecast planning reads: the read model answers from memory when it can; a store always provides it. */
export interface ReadSource extends SiteSource {
  latestIssue(farmId: string): Maybe<string | undefined>;
  getRun(farmId: string, issue: string): Maybe<StoredRun | undefined>;
}

const DONE = Promise.resolve();

/** What a run's copy on disk keeps beside its blob. */
export interface RunMeta {
  readonly revision: number;
  readonly publishedAt: number;
}
/**
 * Once the run cache is full, one run read in this many is kept (ArenaCache): mixed load at 10,000 sites
 * reads runs evenly over six times what the default cache holds, so a kept run is rarely asked again before
 * it is evicted. Each kept run's objects (about 1 KB: the entry, its key, the run and its view) outlive a
 * scavenge and die old; at one in sixteen they were three quarters of what that load moved into the old
 * generation. One in 256 moves a quarter as much as one in 64, and mixed load at 10,000 sites then ran
 * 25 s without a mark-compact (docs/performance.md). The cost is slower adaptation: a run asked for again
 * and again gets in after some hundreds of misses, and at 13,000 misses a second the cache's contents turn
 * over in about a minute; under light load the misses it leaves cost little.
 */
export const RUN_ADMISSION = 256;

export class ReadModel implements ReadSource {
  private token = '';
  private seen = -1;
  private farms = new Map<string, Farm>();
  private byLat: Farm[] = [];
  /** farm_id -> newest issue holding data; null = none. Absent = not yet asked. */
  private readonly latest = new Map<string, string | null>();
  /** farm_id -> the revision at which its record or one of its runs last changed here; absent: not since the snapshot. */
  private readonly changedAt = new Map<string, number>();
  private readonly runs: ArenaCache<string, StoredRun>;
  private pending: Promise<void> | undefined;
  /** Set by the store's commit listener: check before the next answer. */
  private dirty = true;
  private checkedAt = -Infinity;
  /** Runs found in memory and runs read from the store, read by the metrics. */
  readonly runLookups = { hits: 0, misses: 0 };

  /** The store's changePollMs, read once: `current` is asked on every request. */
  private readonly pollMs: number;

  constructor(
    private readonly store: Store,
    cacheBytes: number,
    /** Copies of runs read from the store, on local disk (--run-disk-mb): read before the store is asked. */
    private readonly disk?: DiskRing<RunMeta>,
  ) {
    this.pollMs = store.changePollMs;
    this.runs = new ArenaCache(cacheBytes, { admitOneIn: RUN_ADMISSION });
    store.onCommit(() => (this.dirty = true));
  }

  /** The store revision the model reflects (moves with every commit of farms or runs). */
  get revision(): number {
    return this.seen;
  }

  /**
   * What an answer about one site depends on, as a number that moves whenever the site's record or one of
   * its runs changes (and with nothing else): an answer remembered with this stamp stands while it does. For
   * no site (a nearest-site query, which depends on every site), the revision.
   */
  stampOf(farmId: string | undefined): number {
    return farmId === undefined ? this.seen : (this.changedAt.get(farmId) ?? 0);
  }

  /** Whether sync() would find nothing to do: the model may be read at once, without waiting a turn. */
  get current(): boolean {
    return this.pending === undefined && !this.dirty && performance.now() - this.checkedAt < this.pollMs;
  }

  /**
   * Brings the model up to date with every commit made through this store object
   * before this call, and with other processes' commits up to the store's
   * changePollMs ago.
   */
  sync(): Promise<void> {
    // A commit noticed while a refresh is under way may postdate what that refresh read.
    if (this.pending) return this.dirty ? this.pending.then(() => this.sync()) : this.pending;
    if (this.current) return DONE;
    this.dirty = false;
    this.checkedAt = performance.now();
    this.pending = this.refresh()
      .catch((err: unknown) => {
        this.dirty = true;
        throw err;
      })
      .finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async refresh(): Promise<void> {
    const token = await this.store.changeToken();
    if (token === this.token) return;
    let farmsChanged: boolean;
    if (this.seen < 0) {
      const snap = await this.store.snapshot();
      this.farms = new Map(snap.farms.map((f) => [f.farmId, f]));
      this.seen = snap.revision;
      farmsChanged = true;
    } else {
      const ch = await this.store.changesSince(this.seen);
      for (const f of ch.farms) {
        this.farms.set(f.farmId, f);
        this.changedAt.set(f.farmId, ch.revision);
      }
      for (const r of ch.runs) {
        this.changedAt.set(r.farmId, ch.revision);
        const key = runKey(r.farmId, r.issue);
        this.runs.delete(key);
        this.disk?.delete(key);
        const known = this.latest.get(r.farmId);
        if (r.removed) {
          // Retention never removes a site's newest run; should the newest known be gone, ask again.
          if (known === r.issue) this.latest.delete(r.farmId);
        } else if (known === null || (known !== undefined && r.issue > known)) this.latest.set(r.farmId, r.issue);
      }
      this.seen = ch.revision;
      farmsChanged = ch.farms.length > 0;
    }
    if (farmsChanged) this.byLat = [...this.farms.values()].sort((a, b) => a.lat - b.lat);
    this.token = token;
  }

  getFarm(farmId: string): Farm | undefined {
    return this.farms.get(farmId);
  }

  farmsInBox(box: Box): readonly Farm[] {
    const a = this.byLat;
    let lo = 0;
    let hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (a[mid]!.lat < box.latMin) lo = mid + 1;
      else hi = mid;
    }
    const out: Farm[] = [];
    for (let i = lo; i < a.length && a[i]!.lat <= box.latMax; i++) {
      const f = a[i]!;
      if (f.lon >= box.lonMin && f.lon <= box.lonMax) out.push(f);
    }
    return out.sort((x, y) => (x.farmId < y.farmId ? -1 : x.farmId > y.farmId ? 1 : 0));
  }

  latestIssue(farmId: string): Maybe<string | undefined> {
    const known = this.latest.get(farmId);
    return known !== undefined ? (known ?? undefined) : this.readLatestIssue(farmId);
  }

  private async readLatestIssue(farmId: string): Promise<string | undefined> {
    const seen = this.seen;
    const issue = await this.store.latestIssue(farmId);
    // A refresh during the read may have applied changes this answer predates: then don't keep it.
    if (this.seen === seen) this.latest.set(farmId, issue ?? null);
    return issue;
  }

  getRun(farmId: string, issue: string): Maybe<StoredRun | undefined> {
    const key = runKey(farmId, issue);
    const run = this.runs.get(key);
    if (run !== undefined) {
      this.runLookups.hits++;
      return run;
    }
    this.runLookups.misses++;
    const copy = this.disk?.get(key);
    return copy instanceof Promise ? copy.then((c) => this.fromCopy(key, farmId, issue, c)) : this.fromCopy(key, farmId, issue, copy);
  }

  /**
   * The run from its copy on disk, kept in memory as a store read would be; from the store when there is no
   * copy or it is damaged.
   */
  private fromCopy(key: string, farmId: string, issue: string, copy: RingRecord<RunMeta> | undefined): Maybe<StoredRun | undefined> {
    const view = copy && this.copyView(key, copy.bytes);
    if (view === undefined) return this.readRun(key, farmId, issue);
    const run: StoredRun = { farmId, issue, view, revision: copy!.meta.revision, publishedAt: copy!.meta.publishedAt };
    return this.keep(key, run);
  }

  /** The view of a run's copy read from disk; undefined, and the copy forgotten, when it does not parse. */
  private copyView(key: string, bytes: Uint8Array): SeriesView | undefined {
    try {
      return openSeries(bytes);
    } catch {
      this.disk!.delete(key);
      return undefined;
    }
  }

  /**
   * The run in the given revision, if memory or a copy on disk holds it, read into bytes that `into` gives
   * (the caller's, also when `into` was called and the answer is then undefined: a copy of another revision),
   * without moving or filling either cache: a bulk download reads every site's run once, and
   * must not push out the runs single answers read. Undefined when neither holds that revision, or copies are
   * read through libuv's threads for now: the caller then reads the store. Spares a bulk download a store
   * read per site (a hand-over to SQLite's read thread and back) once load has read the runs before.
   */
  heldRun(farmId: string, issue: string, revision: number, into: (length: number) => Uint8Array): StoredRun | undefined {
    const key = runKey(farmId, issue);
    const kept = this.runs.peek(key);
    if (kept !== undefined) {
      const blob = kept.view.encoded;
      if (kept.revision !== revision || blob === undefined) return undefined;
      const bytes = into(blob.length);
      bytes.set(blob);
      return { farmId, issue, view: openSeries(bytes), revision, publishedAt: kept.publishedAt };
    }
    const copy = this.disk?.readNow(key, into);
    if (copy === undefined || copy.meta.revision !== revision) return undefined;
    // A damaged copy is forgotten as getRun forgets it, and the caller reads the store.
    const view = this.copyView(key, copy.bytes);
    return view && { farmId, issue, view, revision, publishedAt: copy.meta.publishedAt };
  }

  private async readRun(key: string, farmId: string, issue: string): Promise<StoredRun | undefined> {
    const seen = this.seen;
    const run = await this.store.getRun(farmId, issue);
    if (run === undefined || this.seen !== seen) return run;
    const blob = run.view.encoded;
    if (blob !== undefined) this.disk?.put(key, blob, { revision: run.revision, publishedAt: run.publishedAt });
    return this.keep(key, run);
  }

  private keep(key: string, run: StoredRun): StoredRun {
    return this.runs.set(key, run.view.footprint, (region) => ({ ...run, view: run.view.copyTo(region) })) ?? run;
  }

  /** The copies on disk, if any: what they hold and how they were read (for /metrics). */
  diskStats(): DiskCacheStats | undefined {
    return this.disk?.stats();
  }

  /** Closes the copies on disk (the store is the caller's). */
  close(): Promise<void> {
    return this.disk?.close() ?? Promise.resolve();
  }

  /** Entries and bytes held, and the most bytes the run cache may hold: for diagnostics and /metrics. */
  stats(): { runs: number; runBytes: number; runCapacity: number; farms: number } {
    return { runs: this.runs.size, runBytes: this.runs.bytes, runCapacity: this.runs.capacity, farms: this.farms.size };
  }
}
