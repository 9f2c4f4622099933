/**
 * The store interface: everything forecastd keeps, behind one contract that
 * every adapter (SQLite now, PostgreSQL next) implements with the same
 * semantics. Nothing outside src/store knows which adapter it talks to.
 *
 * Semantics every adapter guarantees:
 * - A farm is keyed by farm_id; upsertFarms inserts or updates a whole batch
 *   atomically (all rows or none).
 * - A run of a farm is keyed by (farm_id, issue) and holds the whole series as
 *   one encoded blob. putRun publishes it atomically: a reader sees either the
 *   earlier version or the new one, never a mix and never a partial run.
 *   Each publication gets a revision, strictly greater than every revision
 *   handed out before by this store, and the time it was published.
 * - putRun refuses a run of a farm that is not registered (UnknownFarmError)
 *   and changes nothing then.
 * - Reads see every publication committed before the read began, also those
 *   made by other processes on the same store.
 * - Lists are ordered: farms by farm_id ascending, issues newest first.
 * - A batch of farms also takes one revision from the same sequence as runs, so
 *   changesSince(r) returns every farm and run written after revision r.
 * - changeToken() is cheap enough to call on every request. It differs from its
 *   previous value at once after a commit through this store object, and within
 *   changePollMs after a commit by any other process.
 * - onCommit listeners run after every commit made through this store object
 *   (and after commits of other processes that the adapter is told of). A reader
 *   that is not told must ask changeToken(); `changePollMs` is how stale it may
 *   let its answer become between two asks.
 *
 * API keys (INTERFACE.md section 10):
 * - The store never sees a key's text: it keeps the key's SHA-256 (lowercase
 *   hex, unique, indexed) and its display prefix, and refuses anything else in
 *   those places, so that a key passed by mistake is not written.
 * - A key is live at `now` when it is not revoked and has no end or an end
 *   after `now`. Every key operation takes `now` from the caller (as epoch ms),
 *   so that one clock decides both the grace end and liveness.
 * - A name is unique among live keys: createKey refuses a live name
 *   (KeyNameTakenError), also against a concurrent createKey by another process.
 *   The exception is a roll: during its grace the old and the new key share
 *   the name, and revokeKey ends both.
 * - rollKey ends the live keys of a name at graceEndsAt (an earlier end stays;
 *   graceEndsAt <= now revokes them at once) and adds a new key with the
 *   attributes of the newest of them, in one transaction.
 * - Keys are never deleted. Every create, revoke and roll takes a revision from
 *   the same sequence as farms and runs and moves changeToken like them, in
 *   every process; keysSince(r) returns every key written after revision r (all
 *   keys for r = 0), so a process keeps all keys in memory and re-reads only
 *   what changed when the token moves. Their own sequence would need a token of
 *   its own; this way one token tells of every change. (A key change thus also
 *   moves the revision changesSince reports, with no farms or runs in it.)
 * - touchKeys records last use and is no change for readers: it takes no
 *   revision, does not move this handle's changeToken nor fire onCommit (another
 *   SQLite process may still see its token move, harmlessly), and never moves
 *   last_used_at back.
 *
 * Files taken from a watched folder (INTERFACE.md section 12):
 * - Each delivery is recorded once, under its claim name (unique per delivery):
 *   what was taken (relative path, size, modification time, SHA-256 of the
 *   bytes), the result and its one-line report, and the run it became.
 * - putRun(run, { file }) records a taken file in the same transaction as the
 *   run, so the run and its record commit together or not at all.
 *   recordRejectedFile records a file that became no run.
 * - A claim name already recorded is refused (ClaimRecordedError) and nothing
 *   changes: the run is not published again. A watcher that finds its claim
 *   recorded only finishes moving the file.
 * - A record takes no revision of its own and is no change for readers.
 */
import type { EncodedSeries } from '../domain/codec.js';
import type { RunSeries } from '../domain/run.js';
import type { SeriesView } from '../domain/seriesView.js';

/** PostgreSQL connection defaults: a pool of 10 per process, fail fast when the server is away. */
export const PG_DEFAULTS = Object.freeze({ poolSize: 10, connectTimeoutMs: 1500, statementTimeoutMs: 5000 });

/** One text per (farm_id, issue), for maps keyed by run. */
export const runKey = (farmId: string, issue: string): string => `${farmId}\u0000${issue}`;

export interface Farm {
  readonly farmId: string;
  readonly lat: number;
  readonly lon: number;
  readonly name: string;
  /** Further registry columns, in registry order. */
  readonly extra: ReadonlyArray<readonly [string, string]>;
  /**
   * When the store last wrote this record (epoch ms; every import writes every record it names). Set on a
   * record read from a store, absent on one read from a registry file: an answer that shows the site's
   * coordinates was last modified no earlier than this. upsertFarms keeps a record's own (a store copied to
   * another keeps its times) and gives the others the time of the write.
   */
  readonly updatedAt?: number;
}

export interface NewRun {
  readonly farmId: string;
  /** `yyyyMMddHH`, UTC. */
  readonly issue: string;
  /** The series, or its blob as encodeSeries made it (checked to open before it is kept). */
  readonly series: RunSeries | EncodedSeries;
}

/** A file of a watched folder as the store records it. */
export interface FileRecord {
  /** The claim's name: unique per delivery. */
  readonly claim: string;
  /** Where it was delivered, relative to the watched folder, `/`-separated. */
  readonly path: string;
  /** Bytes. */
  readonly size: number;
  /** Modification time when taken, epoch ms. */
  readonly mtimeMs: number;
  /** SHA-256 of the bytes, 64 lowercase hex digits. */
  readonly sha256: string;
  /** The one-line report printed for it (the fault of a rejected file). */
  readonly message: string;
  /** The site and run it names; null when its name names none (a rejected file). */
  readonly farmId: string | null;
  readonly issue: string | null;
}

export interface IngestedFile extends FileRecord {
  /** Order of recording, increasing. */
  readonly id: number;
  readonly result: 'taken' | 'rejected';
  /** When it was recorded (for a taken file: the run's publication time), epoch ms. */
  readonly at: number;
}

export interface PutRunOptions {
  /** The watched-folder file the run came from, recorded as taken in the same transaction. */
  readonly file?: FileRecord;
}

export interface StoredRun {
  readonly farmId: string;
  readonly issue: string;
  /** The series, decoded on demand from the stored blob. */
  readonly view: SeriesView;
  readonly revision: number;
  /** Epoch ms when this version was published. */
  readonly publishedAt: number;
}

/** One stored run's version, without its data. */
export interface RunVersion {
  readonly farmId: string;
  readonly revision: number;
  /** Epoch ms when this version was published. */
  readonly publishedAt: number;
}

/** A run as stored: its encoded blob, for copying between stores. */
export interface EncodedRun {
  readonly farmId: string;
  readonly issue: string;
  readonly blob: Uint8Array;
  readonly revision: number;
  readonly publishedAt: number;
}

export interface RunKey {
  readonly farmId: string;
  readonly issue: string;
}

export interface Publication {
  readonly revision: number;
  readonly publishedAt: number;
}

export interface IssueSummary {
  readonly issue: string;
  /** Number of farms holding data in this run. */
  readonly farms: number;
}

/** When a run's sites arrived, over all its sites (or those of a scope). */
export interface RunArrival {
  readonly issue: string;
  /** Sites holding data in the run. */
  readonly farms: number;
  /** The first publication of any site in the run, epoch ms. */
  readonly firstPublishedAt: number;
  /** When the last of these sites first arrived (later replacements do not move it), epoch ms. */
  readonly lastArrivalAt: number;
  /** The last publication in the run, replacements included, epoch ms. */
  readonly lastPublishedAt: number;
}

export interface Page<T> {
  readonly total: number;
  readonly items: readonly T[];
}

export interface Box {
  readonly latMin: number;
  readonly latMax: number;
  readonly lonMin: number;
  readonly lonMax: number;
}

export interface RunChange {
  readonly farmId: string;
  readonly issue: string;
  readonly revision: number;
  /** The run was removed (retention), not published. */
  readonly removed?: boolean;
}

export interface Changes {
  /** The highest revision covered. */
  readonly revision: number;
  readonly farms: readonly Farm[];
  readonly runs: readonly RunChange[];
}

/** What createKey is told: the key's hash and prefix, never the key. */
export interface NewKey {
  readonly name: string;
  /** SHA-256 of the key text, 64 lowercase hex digits. */
  readonly hash: string;
  /** Display prefix (`fcd_` + 4 characters), at most 16 characters. */
  readonly prefix: string;
  /** Sites the key may see; null = every site. */
  readonly farms: readonly string[] | null;
  /** Requests per second; null = the server's default, read at request time. */
  readonly rate: number | null;
  /** Bucket capacity, a whole number; null = the server's default. */
  readonly burst: number | null;
  readonly admin: boolean;
}

export interface StoredKey extends NewKey {
  readonly id: number;
  /** Epoch ms. */
  readonly createdAt: number;
  /** End of the key (set by a roll), epoch ms; null = none. */
  readonly expiresAt: number | null;
  readonly revokedAt: number | null;
  /** Last recorded use (batched, at most about once a minute), epoch ms. */
  readonly lastUsedAt: number | null;
}

export interface KeyChanges {
  /** The store's current revision (the same sequence as Changes.revision). */
  readonly revision: number;
  /** Keys created, revoked or rolled after the revision asked for, by id. */
  readonly keys: readonly StoredKey[];
}

/** The store cannot be reached or did not answer in time; the caller may retry later. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

export class UnknownFarmError extends Error {
  constructor(readonly farmId: string) {
    super(`farm_id "${farmId}" is not registered; import it with "forecastd farms import" first`);
    this.name = 'UnknownFarmError';
  }
}

export class ClaimRecordedError extends Error {
  constructor(readonly claim: string) {
    super(`the file claim "${claim}" is already recorded`);
    this.name = 'ClaimRecordedError';
  }
}

export class KeyNameTakenError extends Error {
  constructor(readonly keyName: string) {
    super(`a live key is already named "${keyName}"; revoke it or choose another name`);
    this.name = 'KeyNameTakenError';
  }
}

/**
 * One entry of the event log (INTERFACE.md section 14), in commit order; ids
 * come from one increasing sequence shared by every process. The log holds
 * facts only: a (site, run) published (written in putRun's transaction), and
 * clock ticks (written by serve processes) at which run deadlines are judged.
 * What clients hear (`run` and `issue` events, per scope) is derived from it
 * (src/events/).
 */
export type EventEntry =
  | {
      readonly id: number;
      readonly kind: 'run';
      readonly farmId: string;
      readonly issue: string;
      readonly revision: number;
      /** When this version was published, epoch ms. */
      readonly at: number;
    }
  | {
      readonly id: number;
      readonly kind: 'tick';
      /** The moment the tick stands for, epoch ms. */
      readonly at: number;
    };

export interface EventBounds {
  /** The oldest id still kept; null when the log is empty. */
  readonly first: number | null;
  /** The highest id ever given (0 when none): kept even when every entry was pruned. */
  readonly last: number;
}

/** A webhook endpoint as `webhooks add` is told it. The secret is needed to sign, so it is stored. */
export interface NewWebhook {
  readonly name: string;
  readonly url: string;
  /** `whsec_` + base64 of 32 random bytes. */
  readonly secret: string;
  /** Sites whose runs it hears of; null = every site. */
  readonly farms: readonly string[] | null;
}

export interface StoredWebhook extends NewWebhook {
  readonly id: number;
  /** Epoch ms. */
  readonly createdAt: number;
  /** The log's last id when the endpoint was added: it hears of state changes after it only. */
  readonly sinceEventId: number;
  /** Set when the endpoint answered 410 Gone (or was disabled otherwise), epoch ms. */
  readonly disabledAt: number | null;
  readonly disabledReason: string | null;
}

export interface WebhookSummary extends StoredWebhook {
  /** The last attempt, epoch ms, and what came of it ("200", "timeout", "refused: ...", ...). */
  readonly lastAttemptAt: number | null;
  readonly lastResult: string | null;
  /** Deliveries neither delivered nor given up. */
  readonly pending: number;
}

export type NoticeType = 'issue.complete' | 'issue.partial';

/** A notice to deliver: one per (endpoint, msgId); enqueueing the same again is a no-op, so every process may enqueue it. */
export interface NewDelivery {
  readonly webhookId: number;
  /** The `webhook-id` header: the same on every attempt, derived from (endpoint, run, type) so that every process derives the same. */
  readonly msgId: string;
  readonly type: NoticeType;
  readonly issue: string;
  /** The exact JSON body sent (and signed) on every attempt. */
  readonly body: string;
  /** Epoch ms; also the first attempt's due time. */
  readonly createdAt: number;
}

export interface Delivery extends NewDelivery {
  readonly id: number;
  /** Attempts made so far. */
  readonly attempts: number;
  readonly nextAttemptAt: number;
  /** The endpoint's address and secret at claim time. */
  readonly url: string;
  readonly secret: string;
}

/** What came of one attempt. */
export interface DeliveryOutcome {
  /** delivered: a 2xx; retry: try again at nextAttemptAt; gave-up: no more attempts; gone: 410, the endpoint is disabled too. */
  readonly result: 'delivered' | 'retry' | 'gave-up' | 'gone';
  /** Short text for `webhooks list` ("200", "503", "timeout", "redirect refused", "private address refused"). */
  readonly detail: string;
  /** Epoch ms of the attempt. */
  readonly at: number;
  /** With retry. */
  readonly nextAttemptAt?: number;
}

export class WebhookNameTakenError extends Error {
  constructor(readonly webhookName: string) {
    super(`a webhook is already named "${webhookName}"; remove it or choose another name`);
    this.name = 'WebhookNameTakenError';
  }
}

export interface Store {
  upsertFarms(farms: readonly Farm[]): Promise<void>;
  getFarm(farmId: string): Promise<Farm | undefined>;
  listFarms(offset: number, limit: number): Promise<Page<Farm>>;
  /** Farms whose coordinates lie in the box (edges included). */
  farmsInBox(box: Box): Promise<readonly Farm[]>;
  countFarms(): Promise<number>;

  /** Publishes the run; with `file`, records that file as taken in the same transaction (ClaimRecordedError: neither). */
  putRun(run: NewRun, options?: PutRunOptions): Promise<Publication>;
  getRun(farmId: string, issue: string): Promise<StoredRun | undefined>;
  /** Newest issue holding data for the farm. */
  latestIssue(farmId: string): Promise<string | undefined>;
  /**
   * Issues newest first; with farmId only those holding data for that farm. With `among`, only issues holding
   * data of one of those farms are listed, and `farms` counts those farms only (a caller's scope).
   */
  listIssues(farmId: string | undefined, offset: number, limit: number, among?: readonly string[]): Promise<Page<IssueSummary>>;
  /**
   * The sites holding data in `issue`, with each run's revision and publication time, sorted by farm_id;
   * with `among`, only those sites (a key's scope). Empty when no (visible) site holds the run.
   */
  runVersions(issue: string, among?: readonly string[]): Promise<readonly RunVersion[]>;

  /** Longest a reader should go without asking changeToken() when no listener fired, ms. */
  readonly changePollMs: number;
  /** Calls the listener after commits it can know of; returns the unsubscribe function. */
  onCommit(listener: () => void): () => void;
  /** A token that changes whenever anything was committed since it was last read. */
  changeToken(): Promise<string>;
  /** The current revision and every farm. */
  snapshot(): Promise<{ revision: number; farms: readonly Farm[] }>;
  /** Farms and runs written with a revision greater than `since`. */
  changesSince(since: number): Promise<Changes>;

  /**
   * Every run, newest first, with its site count and arrival times; with `among`, over those farms only (runs
   * holding none of them are left out). Each (site, run) keeps the time it was first published when replaced.
   */
  runArrivals(among?: readonly string[]): Promise<readonly RunArrival[]>;

  /**
   * Removes every (site, run) whose issue is earlier than `before` (yyyyMMddHH), except each site's newest run,
   * in one transaction taking one revision; changesSince then reports each as removed. Returns what was (with
   * dryRun: what would be) removed, by farm_id then issue. Gives the space back where the adapter can.
   */
  pruneRuns(before: string, dryRun: boolean): Promise<readonly RunKey[]>;

  /** Number of (farm, run) records. */
  countRuns(): Promise<number>;
  /** Runs with their blobs in (farm_id, issue) order (byte order), after `after`, at most `limit`. */
  exportRuns(after: RunKey | undefined, limit: number): Promise<readonly EncodedRun[]>;
  /** Publishes an already encoded run (as exported by any store), keeping its publication time. */
  importRun(run: Omit<EncodedRun, 'revision'>): Promise<Publication>;

  /** Adds a key created at `now`; refuses a name a live key has (KeyNameTakenError). */
  createKey(key: NewKey, now: number): Promise<StoredKey>;
  /** Every key, revoked and expired ones too, by name (byte order), then creation time. */
  listKeys(): Promise<readonly StoredKey[]>;
  /** The key with this SHA-256, whatever its state. */
  findKeyByHash(hash: string): Promise<StoredKey | undefined>;
  /** Revokes every key of that name live at `now`; returns how many (0: no such live key). */
  revokeKey(name: string, now: number): Promise<number>;
  /**
   * Ends the keys of that name live at `now` at graceEndsAt (at once when it is
   * not after `now`) and adds a new key with their attributes; undefined when no
   * key of that name is live.
   */
  rollKey(name: string, next: { readonly hash: string; readonly prefix: string }, graceEndsAt: number, now: number): Promise<StoredKey | undefined>;
  /** Records last use, SHA-256 -> epoch ms, in one transaction; unknown hashes are ignored. */
  touchKeys(lastUsed: ReadonlyMap<string, number>): Promise<void>;
  /** Keys written (created, revoked, rolled) with a revision greater than `since`; since = 0: every key. */
  keysSince(since: number): Promise<KeyChanges>;

  /** Records a watched-folder file that became no run, as rejected (ClaimRecordedError: already recorded). */
  recordRejectedFile(file: FileRecord): Promise<IngestedFile>;
  /** The record of a claim, if any. */
  ingestedFile(claim: string): Promise<IngestedFile | undefined>;
  /** Records with an id greater than `afterId`, by id, at most `limit`. */
  listIngestedFiles(afterId: number, limit: number): Promise<readonly IngestedFile[]>;

  /** Resolves when the store answers; rejects otherwise. */
  // Event log (INTERFACE.md section 14). putRun appends a 'run' entry in its own transaction.
  /** Entries with id > afterId, oldest first, at most limit. */
  eventsAfter(afterId: number, limit: number): Promise<readonly EventEntry[]>;
  eventBounds(): Promise<EventBounds>;
  /** Appends a tick at `at` unless the log already holds one at that moment (several processes tick); its id, or undefined. */
  appendTick(at: number): Promise<number | undefined>;
  /** Removes entries older than `before` (epoch ms), never the newest entry; how many. */
  pruneEvents(before: number): Promise<number>;

  // Webhooks (INTERFACE.md section 14): endpoints and a durable outbox.
  /** Throws WebhookNameTakenError. sinceEventId is set to the log's last id. */
  addWebhook(w: NewWebhook, now: number): Promise<StoredWebhook>;
  listWebhooks(): Promise<readonly WebhookSummary[]>;
  /** Removes the endpoint and its pending deliveries; false when there is none of that name. */
  removeWebhook(name: string): Promise<boolean>;
  /** False when (webhookId, msgId) was enqueued before. */
  enqueueDelivery(d: NewDelivery): Promise<boolean>;
  /**
   * Up to limit deliveries due at `now` (not delivered nor given up, endpoint
   * not disabled, no other owner's lease running), leased to owner until
   * now + leaseMs, so that one process sends each attempt.
   */
  claimDeliveries(now: number, owner: string, leaseMs: number, limit: number): Promise<readonly Delivery[]>;
  /** Records an attempt's outcome and frees the lease (gone also disables the endpoint). */
  finishDelivery(id: number, outcome: DeliveryOutcome): Promise<void>;
  /** Removes the deliveries delivered or given up whose last attempt is older than `before` (epoch ms), never a pending one; how many. */
  pruneDeliveries(before: number): Promise<number>;
  /** Makes the endpoint's pending deliveries due at `now`; how many; undefined when there is no endpoint of that name. */
  retryWebhook(name: string, now: number): Promise<number | undefined>;
  /** A named mark that only moves forward (e.g. how far the webhook notifier has followed the log). */
  readMark(name: string): Promise<number>;
  advanceMark(name: string, value: number): Promise<void>;

  ping(): Promise<void>;
  /**
   * Readies what reading runs takes, so that the first read does not wait for it (SQLite: starts the read
   * thread); returns at once, and anything that fails surfaces on the first read. For a process that serves.
   */
  prepareReads(): void;
  close(): Promise<void>;
}
