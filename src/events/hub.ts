/**
 * One per serve process (per worker with --workers N): follows the store's
 * event log and hands what each scope may hear to its subscribers.
 *
 * - It reads the log after the last entry it holds every `pollMs` and at once
 *   when the store tells of a commit, and keeps the entries of the last
 *   `keepMs` (--events-keep) in memory: the window every derivation starts from.
 * - It keeps one RunFeed (feed.ts) per scope, shared by that scope's clients,
 *   with the events it derived since the window's start (its history). A
 *   scope's feed is made when its first client comes, by replaying the window
 *   silently. The feed of every site is always kept: it tells when ticks are
 *   needed.
 * - A client resuming after an id gets the history after it (the replay of
 *   the window, kept), then the live events, in one synchronous step, so that
 *   nothing falls between them nor comes twice. An id the window no longer
 *   covers (events older than it were dropped) gets a reset instead, whose id
 *   is the hub's position: `lastEntry * 10 + 9`, greater than every event
 *   derived so far and less than every event to come, so that a client which
 *   resumes from it misses nothing either.
 * - Ticks: while some run may still change by the clock alone (clockUntil of
 *   the feed of every site), it appends a tick every TICK_MS at a moment
 *   rounded down to TICK_MS; every process does, the store keeps one per moment.
 * - Every few minutes it drops from memory the entries older than keepMs
 *   (the store's log is pruned by retention, src/ops/retention.ts).
 */
import { EVERY_SITE, type Scope } from '../query/scope.js';
import type { EventEntry, Store } from '../store/store.js';
import { eventId, RunFeed, splitEventId, type FeedEvent } from './feed.js';

/** The tick interval and the grid tick moments are rounded to, ms. */
export const TICK_MS = 5000;
/** Entries read per query. */
const PAGE = 1000;
const DROP_EVERY_MS = 5 * 60_000;

/** An event as a stream carries it. */
export function eventText(e: FeedEvent): string {
  return `id: ${e.id}\nevent: ${e.event}\ndata: ${e.data}\n\n`;
}

/** Events as a stream carries them, one after another. */
const streamText = (events: readonly FeedEvent[]): string => events.map(eventText).join('');

export interface HubOptions {
  readonly store: Store;
  /** --run-deadline, ms. */
  readonly deadlineMs: number;
  /** --events-keep, ms. */
  readonly keepMs: number;
  /** The clock (epoch ms); default Date.now. */
  readonly now?: () => number;
  /** How often the log is read when no commit was told of, ms (default 300). */
  readonly pollMs?: number;
  /**
   * The tick interval and grid, ms (default TICK_MS). Every process sharing a
   * store must use the same, or their ticks are not deduplicated; tests shorten it.
   */
  readonly tickMs?: number;
  /** How often entries older than keepMs are dropped from memory, ms (default 5 minutes). */
  readonly dropEveryMs?: number;
  /** Faults (an unreachable store): the hub retries on its next round. */
  readonly onError?: (err: unknown, what: string) => void;
}

/** Counts for the metrics, read at scrape time. */
export interface HubCounts {
  /** Log entries read, by kind. */
  readonly seen: { run: number; tick: number };
  /** Ticks this process appended (those another process had appended first are not counted). */
  ticksWritten: number;
}

/** Where a client starts. */
export type StreamStart =
  | { readonly reset: false; readonly catchUp: readonly FeedEvent[]; readonly text: string }
  | { readonly reset: true; readonly resetId: number };

export interface Subscriber {
  /** Called once, synchronously on attach, before any live event. */
  begin(start: StreamStart): void;
  /** Live events of the subscriber's scope, in order, with their text. */
  deliver(events: readonly FeedEvent[], text: string): void;
}

interface LiveFeed {
  readonly scope: Scope;
  readonly feed: RunFeed;
  /**
   * Events derived since the window's start, by id. Their stream texts are not kept beside them: at 10,000
   * sites the window holds some 20,000 events a day per feed, and a text is made again only for a client
   * that resumes.
   */
  readonly history: FeedEvent[];
  readonly subscribers: Set<Subscriber>;
}

export class EventHub {
  readonly counts: HubCounts = { seen: { run: 0, tick: 0 }, ticksWritten: 0 };
  private readonly store: Store;
  private readonly now: () => number;
  private readonly tickMs: number;
  /** The window: entries with id > floor, oldest first. */
  private window: EventEntry[] = [];
  /** Entries with an id up to this one are not held (never read, or dropped). */
  private floor = 0;
  /** The last entry read. */
  private last = 0;
  private loaded = false;
  private readonly feeds = new Map<string, LiveFeed>();
  private readonly every: LiveFeed;
  /** Registered sites, and what the store's change feed was last read at. */
  private readonly registered = new Set<string>();
  private registryVersion = 0;
  private revision = 0;
  private token: string | undefined;
  private readonly expectedCache = new Map<string, { version: number; count: number }>();
  private syncing: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private unsubscribe: (() => void) | undefined;
  private lastFault = 0;

  constructor(private readonly options: HubOptions) {
    this.store = options.store;
    this.now = options.now ?? Date.now;
    this.tickMs = options.tickMs ?? TICK_MS;
    this.every = this.makeFeed(EVERY_SITE);
    this.feeds.set(EVERY_SITE.id, this.every);
  }

  /** Starts following the log; resolves once the window is read (or its first read failed: it is retried). */
  async start(): Promise<void> {
    this.unsubscribe = this.store.onCommit(() => void this.sync().catch(() => undefined));
    const every = (ms: number, fn: () => void): void => {
      const t = setInterval(fn, ms);
      t.unref();
      this.timers.push(t);
    };
    every(this.options.pollMs ?? 300, () => void this.sync().catch(() => undefined));
    every(this.tickMs, () => void this.tick());
    every(this.options.dropEveryMs ?? DROP_EVERY_MS, () => this.dropBefore(this.now() - this.options.keepMs));
    await this.sync().catch(() => undefined);
    this.dropBefore(this.now() - this.options.keepMs);
  }

  /** Stops following; waits for a read under way. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    this.unsubscribe?.();
    await this.syncing?.catch(() => undefined);
  }

  /** The id of the last entry read. */
  get position(): number {
    return this.last;
  }

  /**
   * Reads what the log holds now (joining a read under way, and reading again
   * after it, so that whatever was committed before this call is read).
   * Rejects when the store cannot be read.
   */
  sync(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.syncing !== undefined) {
      this.again = true;
      return this.syncing;
    }
    const run = async (): Promise<void> => {
      try {
        do {
          this.again = false;
          await this.pull();
        } while (this.again && !this.closed);
      } catch (err) {
        this.fault(err, 'reading the event log failed');
        throw err;
      } finally {
        this.syncing = undefined;
      }
    };
    this.syncing = run();
    return this.syncing;
  }

  /**
   * Attaches a subscriber to its scope's feed: `begin` is called at once with
   * the events after `lastEventId` (none without one) or a reset, and every
   * later event goes to `deliver`. Returns the detach function. Call sync()
   * first so that the catch-up covers what was committed before the client came.
   */
  attach(scope: Scope, lastEventId: number | undefined | 'invalid', sub: Subscriber): () => void {
    const live = this.feedOf(scope);
    const top = eventId(this.last, 9);
    let start: StreamStart;
    if (lastEventId === undefined) {
      start = { reset: false, catchUp: [], text: '' };
    } else if (lastEventId === 'invalid' || lastEventId > top || splitEventId(lastEventId).entryId < this.floor) {
      start = { reset: true, resetId: top };
    } else {
      const i = firstAfter(live.history, lastEventId);
      const catchUp = live.history.slice(i);
      start = { reset: false, catchUp, text: streamText(catchUp) };
    }
    sub.begin(start);
    live.subscribers.add(sub);
    return () => void live.subscribers.delete(sub);
  }

  /** Subscribers attached, over every scope. */
  subscribers(): number {
    let n = 0;
    for (const f of this.feeds.values()) n += f.subscribers.size;
    return n;
  }

  /** Whether the clock may still change some run's state (for some scope): ticks are needed. */
  needsTicks(now: number): boolean {
    return this.every.feed.receiving() || now <= this.every.feed.clockUntil();
  }

  private makeFeed(scope: Scope): LiveFeed {
    const farms = scope.farms;
    const feed = new RunFeed({
      inScope: farms === null ? () => true : (f) => farms.has(f),
      expected: () => this.expected(scope),
      deadlineMs: this.options.deadlineMs,
    });
    return { scope, feed, history: [], subscribers: new Set() };
  }

  /** The scope's feed; a new one replays the window silently. */
  private feedOf(scope: Scope): LiveFeed {
    let live = this.feeds.get(scope.id);
    if (live === undefined) {
      live = this.makeFeed(scope);
      for (const entry of this.window) for (const e of live.feed.apply(entry)) live.history.push(e);
      this.feeds.set(scope.id, live);
    }
    return live;
  }

  /** Registered sites the scope sees. */
  private expected(scope: Scope): number {
    if (scope.farms === null) return this.registered.size;
    const cached = this.expectedCache.get(scope.id);
    if (cached !== undefined && cached.version === this.registryVersion) return cached.count;
    let count = 0;
    for (const f of scope.farms) if (this.registered.has(f)) count++;
    this.expectedCache.set(scope.id, { version: this.registryVersion, count });
    return count;
  }

  private async load(): Promise<void> {
    this.token = await this.store.changeToken();
    const snap = await this.store.snapshot();
    for (const f of snap.farms) this.registered.add(f.farmId);
    this.registryVersion++;
    this.revision = snap.revision;
    const bounds = await this.store.eventBounds();
    this.floor = this.last = bounds.first === null ? bounds.last : bounds.first - 1;
    this.loaded = true;
  }

  /** Reads registrations made since the last read (sites are never unregistered). */
  private async refreshSites(force: boolean): Promise<void> {
    const token = await this.store.changeToken();
    if (!force && token === this.token) return;
    this.token = token;
    const changes = await this.store.changesSince(this.revision);
    let added = false;
    for (const f of changes.farms) {
      if (!this.registered.has(f.farmId)) {
        this.registered.add(f.farmId);
        added = true;
      }
    }
    if (added) this.registryVersion++;
    this.revision = Math.max(this.revision, changes.revision);
  }

  private async pull(): Promise<void> {
    if (!this.loaded) await this.load();
    await this.refreshSites(false);
    for (;;) {
      const batch = await this.store.eventsAfter(this.last, PAGE);
      if (batch.length === 0 || this.closed) return;
      // A site registered after the token was read: read the registry again, so that it counts as expected.
      if (batch.some((e) => e.kind === 'run' && !this.registered.has(e.farmId))) await this.refreshSites(true);
      this.absorb(batch);
      if (batch.length < PAGE) return;
    }
  }

  /** Applies entries to every feed and delivers, once per feed, what they derived. */
  private absorb(batch: readonly EventEntry[]): void {
    const derived = new Map<LiveFeed, FeedEvent[]>();
    for (const entry of batch) {
      if (entry.id <= this.last) continue;
      this.last = entry.id;
      this.window.push(entry);
      this.counts.seen[entry.kind]++;
      for (const live of this.feeds.values()) {
        const events = live.feed.apply(entry);
        if (events.length === 0) continue;
        const list = derived.get(live);
        if (list === undefined) derived.set(live, events);
        else list.push(...events);
      }
    }
    for (const [live, events] of derived) {
      for (const e of events) live.history.push(e);
      // Written out once per feed, and only for a feed that has clients (the feed of every site is kept without).
      if (live.subscribers.size === 0) continue;
      const text = streamText(events);
      for (const sub of live.subscribers) {
        try {
          sub.deliver(events, text);
        } catch (err) {
          // One client's fault (a socket gone wrong) must not keep the events from the others.
          live.subscribers.delete(sub);
          this.fault(err, 'delivering events to a stream failed');
        }
      }
    }
  }

  private async tick(): Promise<void> {
    if (this.closed || !this.loaded) return;
    const now = this.now();
    if (!this.needsTicks(now)) return;
    try {
      const id = await this.store.appendTick(Math.floor(now / this.tickMs) * this.tickMs);
      if (id !== undefined) this.counts.ticksWritten++;
      await this.sync();
    } catch (err) {
      this.fault(err, 'appending a tick to the event log failed');
    }
  }

  /**
   * Drops entries older than `cutoff` from the window (never the newest), and
   * what was derived from them from every history.
   */
  dropBefore(cutoff: number): void {
    let n = 0;
    while (n < this.window.length - 1 && this.window[n]!.at < cutoff) n++;
    if (n === 0) return;
    this.floor = this.window[n - 1]!.id;
    this.window = this.window.slice(n);
    const above = eventId(this.floor, 9);
    for (const live of this.feeds.values()) {
      const i = firstAfter(live.history, above);
      live.history.splice(0, i);
    }
  }

  private fault(err: unknown, what: string): void {
    // At most one line a minute: a store outage would otherwise log at every poll.
    const now = Date.now();
    if (now - this.lastFault < 60_000) return;
    this.lastFault = now;
    this.options.onError?.(err, what);
  }
}

/** The index of the first event with an id greater than `id`. */
function firstAfter(history: readonly FeedEvent[], id: number): number {
  let lo = 0;
  let hi = history.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (history[mid]!.id <= id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
