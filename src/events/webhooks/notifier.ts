/**
 * Turns the store's event log into webhook notices (INTERFACE.md section 14).
 * It follows the log (asking every pollMs, and at once after a commit this
 * process is told of) with one RunFeed (../feed.ts) per distinct set of sites
 * among the endpoints: the endpoint's sites, or every site. When a feed tells
 * that a run became `complete` or `partial`, each endpoint of that set that was
 * added before the entry (and is not disabled) gets a notice in the outbox.
 *
 * Several processes may run it over one store: a notice's id is derived from
 * (endpoint, run, type) alone and the outbox takes each (endpoint, id) once,
 * so the notice exists once whoever enqueues it first. How far the log has
 * been followed is kept in the store (the mark `webhooks.notifier`, moved
 * after the notices of the entries before it are in the outbox). At start the
 * feeds are rebuilt by reading the kept log from its beginning: up to the
 * mark silently (those notices exist), after it as new.
 *
 * A run turns partial only when an entry at or after its deadline is read.
 * Every serve process ticks on a grid while runs receive (../hub.ts); the
 * notifier also appends a tick at each deadline of its sets' runs once it has
 * passed, so that a partial notice carries the deadline itself as its time
 * (ticks at one moment are kept once, and feeds never move their clock back).
 */
import { createHash } from 'node:crypto';
import { formatBeijing } from '../../domain/time.js';
import { listFarms } from '../../query/lists.js';
import { scopeOf } from '../../query/scope.js';
import type { EventEntry, NoticeType, Store, StoredWebhook } from '../../store/store.js';
import { RunFeed, type FeedEvent } from '../feed.js';
import type { WebhookLog } from './deliverer.js';

/** The store's mark of how far the log has been followed. */
export const NOTIFIER_MARK = 'webhooks.notifier';
export const NOTIFIER_POLL_MS = 500;
/** Entries read at once. */
const BATCH = 500;

/** The `webhook-id` of a notice: the same in every process and on every attempt. */
export function noticeId(webhookId: number, issue: string, type: NoticeType): string {
  return 'msg_' + createHash('sha256').update(`${webhookId}\u0000${issue}\u0000${type}`).digest('hex').slice(0, 32);
}

/** The body of a notice: one line of JSON, sent and signed as is on every attempt. */
export function noticeBody(type: NoticeType, ev: FeedEvent): string {
  return JSON.stringify({
    type,
    issue: ev.issue,
    status: ev.status,
    farms: ev.farms,
    farms_expected: ev.farmsExpected,
    timestamp: formatBeijing(ev.at),
  });
}

export interface NotifierOptions {
  /** `--run-deadline`, ms. */
  readonly deadlineMs: number;
  readonly log: WebhookLog;
  /** Called after notices were put in the outbox (the deliverer of this process looks at once). */
  readonly onEnqueued?: () => void;
  readonly pollMs?: number;
}

/** The feed of one set of sites, shared by the endpoints that name that set. */
interface ScopeFeed {
  readonly farms: readonly string[] | null;
  readonly inScope: (farmId: string) => boolean;
  readonly feed: RunFeed;
  /** Runs seen in the set (their first entry sets the deadline). */
  readonly issues: Set<string>;
  expected: number;
  hooks: StoredWebhook[];
}

const scopeKey = (farms: readonly string[] | null): string => (farms === null ? '*' : [...new Set(farms)].sort().join('\u0000'));

export class Notifier {
  private readonly feeds = new Map<string, ScopeFeed>();
  /** The last entry every feed has applied. */
  private cursor = 0;
  /** Entries up to this id are applied silently (their notices exist). */
  private silentUpTo = 0;
  /** The mark as this process last read or moved it. */
  private mark = 0;
  /** The latest `at` among the entries applied. */
  private lastAt = 0;
  /** Moments at which some set's run reaches its deadline, not yet passed by an entry. */
  private readonly deadlines = new Set<number>();
  private fresh = true;
  private pumping: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly store: Store,
    private readonly o: NotifierOptions,
  ) {}

  start(): void {
    this.unsubscribe = this.store.onCommit(() => this.poke());
    this.poke();
  }

  /** Follows the log now (coalesced with a pass under way). */
  poke(): void {
    if (this.stopped) return;
    if (this.pumping !== undefined) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.pumping = this.pump().finally(() => {
      this.pumping = undefined;
      if (this.stopped) return;
      if (this.again) {
        this.again = false;
        this.poke();
      } else {
        this.timer = setTimeout(() => this.poke(), this.o.pollMs ?? NOTIFIER_POLL_MS);
      }
    });
  }

  /** Stops following; a pass under way finishes first. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.unsubscribe?.();
    await this.pumping;
  }

  /** Follows the log to its end; on a fault starts over from the mark, as a restart would. */
  private async pump(): Promise<void> {
    try {
      if (this.fresh) {
        this.mark = await this.store.readMark(NOTIFIER_MARK);
        this.silentUpTo = this.mark;
        this.fresh = false;
      }
      while (!this.stopped && (await this.step())) {
        /* next batch */
      }
      if (!this.stopped) await this.tickDeadlines();
    } catch (err) {
      this.o.log.error({ fault: err instanceof Error ? err.message : String(err) }, 'webhooks: cannot follow the event log, starting over');
      this.feeds.clear();
      this.deadlines.clear();
      this.cursor = 0;
      this.lastAt = 0;
      this.fresh = true;
    }
  }

  /**
   * A run's deadline is judged at the first entry of the log at or after it;
   * when none comes, a tick is appended at the deadline itself (several
   * processes appending the same moment make one tick).
   */
  private async tickDeadlines(): Promise<void> {
    for (const d of this.deadlines) if (d <= this.lastAt) this.deadlines.delete(d);
    if (this.deadlines.size === 0 || ![...this.feeds.values()].some((sf) => sf.feed.receiving())) return;
    const now = Date.now();
    for (const d of [...this.deadlines].filter((x) => x <= now).sort((a, b) => a - b)) {
      await this.store.appendTick(d);
      this.deadlines.delete(d);
    }
  }

  /** Applies an entry to a set's feed: the events it derives. */
  private apply(sf: ScopeFeed, entry: EventEntry): FeedEvent[] {
    if (entry.kind === 'run' && !sf.issues.has(entry.issue) && sf.inScope(entry.farmId)) {
      sf.issues.add(entry.issue);
      this.deadlines.add(entry.at + this.o.deadlineMs);
    }
    return sf.feed.apply(entry);
  }

  /** One batch of entries; false when the log had none after the cursor. */
  private async step(): Promise<boolean> {
    const entries = await this.store.eventsAfter(this.cursor, BATCH);
    if (entries.length === 0) return false;
    await this.syncFeeds();
    let enqueued = 0;
    for (const entry of entries) {
      for (const sf of this.feeds.values()) {
        const events = this.apply(sf, entry);
        if (entry.id <= this.silentUpTo) continue;
        for (const ev of events) enqueued += await this.notify(sf, entry, ev);
      }
      this.cursor = entry.id;
      this.lastAt = Math.max(this.lastAt, entry.at);
    }
    if (enqueued > 0) this.o.onEnqueued?.();
    if (this.cursor > this.mark) {
      await this.store.advanceMark(NOTIFIER_MARK, this.cursor);
      this.mark = this.cursor;
    }
    return entries.length === BATCH;
  }

  private async notify(sf: ScopeFeed, entry: EventEntry, ev: FeedEvent): Promise<number> {
    if (ev.event !== 'issue' || (ev.status !== 'complete' && ev.status !== 'partial')) return 0;
    const type: NoticeType = ev.status === 'complete' ? 'issue.complete' : 'issue.partial';
    const body = noticeBody(type, ev);
    let n = 0;
    for (const hook of sf.hooks) {
      if (hook.disabledAt !== null || hook.sinceEventId >= entry.id) continue;
      const added = await this.store.enqueueDelivery({
        webhookId: hook.id,
        msgId: noticeId(hook.id, ev.issue, type),
        type,
        issue: ev.issue,
        body,
        createdAt: Date.now(),
      });
      if (added) {
        n++;
        this.o.log.info({ webhook: hook.name, issue: ev.issue, type }, 'webhooks: notice queued');
      }
    }
    return n;
  }

  /**
   * Matches the feeds to the endpoints as they are now: a new set of sites gets
   * a feed that reads the kept log up to the cursor silently; a set no
   * endpoint names any more is dropped. Refreshes each set's count of
   * registered sites.
   */
  private async syncFeeds(): Promise<void> {
    const hooks = await this.store.listWebhooks();
    const wanted = new Map<string, StoredWebhook[]>();
    for (const h of hooks) {
      const key = scopeKey(h.farms);
      const list = wanted.get(key);
      if (list === undefined) wanted.set(key, [h]);
      else list.push(h);
    }
    for (const key of [...this.feeds.keys()]) if (!wanted.has(key)) this.feeds.delete(key);
    for (const [key, list] of wanted) {
      let sf = this.feeds.get(key);
      if (sf === undefined) {
        const farms = list[0]!.farms;
        const inScope: (farmId: string) => boolean = farms === null ? () => true : ((set) => (id: string) => set.has(id))(new Set(farms));
        const created: ScopeFeed = {
          farms,
          inScope,
          issues: new Set(),
          expected: 0,
          hooks: list,
          feed: new RunFeed({ inScope, expected: () => created.expected, deadlineMs: this.o.deadlineMs }),
        };
        sf = created;
        sf.expected = await this.expectedOf(sf.farms);
        await this.catchUp(sf);
        this.feeds.set(key, sf);
      } else {
        sf.expected = await this.expectedOf(sf.farms);
      }
      sf.hooks = list;
    }
  }

  /** Registered sites among the set (all of them for every site). */
  private async expectedOf(farms: readonly string[] | null): Promise<number> {
    if (farms === null) return this.store.countFarms();
    return (await listFarms(this.store, scopeOf(farms), 0, Number.MAX_SAFE_INTEGER)).total;
  }

  /** Applies the kept log up to the cursor to a new set's feed, telling nothing. */
  private async catchUp(sf: ScopeFeed): Promise<void> {
    let after = 0;
    while (after < this.cursor) {
      const entries = await this.store.eventsAfter(after, BATCH);
      if (entries.length === 0) break;
      for (const e of entries) {
        if (e.id > this.cursor) return;
        this.apply(sf, e);
        after = e.id;
      }
    }
  }
}
