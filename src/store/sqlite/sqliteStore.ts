/** The embedded store: one SQLite file in WAL mode (better-sqlite3). */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { encodedSeries, openSeries } from '../../domain/codec.js';
import {
  KeyNameTakenError,
  UnknownFarmError,
  type Box,
  type Farm,
  type IssueSummary,
  type NewKey,
  type Page,
  type Publication,
  type RunArrival,
  type RunKey,
  type RunVersion,
  type Store,
  type StoredKey,
  type StoredRun,
} from '../store.js';
import {
  extraText,
  FARM_COLUMNS,
  RUN_COLUMNS,
  toArrival,
  toEncodedRun,
  toFarm,
  toRunVersion,
  toStoredRun,
  type FarmRow,
  type RunArrivalRow,
  type RunRow,
  type RunVersionRow,
} from '../rows.js';
import { checkKeyText, checkNewKey, checkTime, farmsText, KEY_COLUMNS, toStoredKey, type KeyRow } from '../keyRows.js';
import { ClaimRecordedError, type FileRecord, type IngestedFile } from '../store.js';
import { checkFileRecord, FILE_COLUMNS, fileValues, toIngestedFile, type FileRow } from '../fileRows.js';
import { WebhookNameTakenError, type DeliveryOutcome, type NewWebhook, type StoredWebhook } from '../store.js';
import { checkEventPage, EVENT_COLUMNS, toEventBounds, toEventEntry, type EventRow } from '../eventRows.js';
import {
  checkClaim,
  checkMark,
  checkNewDelivery,
  checkNewWebhook,
  checkOutcome,
  DELIVERY_COLUMNS,
  FINISHED,
  FINISHED_AT,
  GONE_REASON,
  listWebhooksSql,
  PENDING,
  toDelivery,
  toStoredWebhook,
  toWebhookSummary,
  webhookColumns,
  webhookFarmsText,
  type DeliveryRow,
  type WebhookRow,
  type WebhookSummaryRow,
} from '../webhookRows.js';
import { GET_RUN_SQL, RUN_ARRIVALS_AMONG_SQL, RUN_ARRIVALS_SQL, RUN_VERSIONS_AMONG_SQL, RUN_VERSIONS_SQL, RUNS_SINCE_SQL, setSharedPragmas } from './connection.js';
import { MIGRATIONS } from './migrations.js';
import { RunReader } from './runReader.js';

/** A key live at @now: not revoked, and no end or an end after @now. */
const LIVE = '(revoked_at IS NULL AND (expires_at IS NULL OR expires_at > @now))';

function migrate(db: Database.Database): void {
  // IMMEDIATE takes the write lock first, so two processes opening a new file
  // at once apply each migration exactly once.
  db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > MIGRATIONS.length) {
      throw new Error(`store schema version ${version} is newer than this forecastd (${MIGRATIONS.length})`);
    }
    for (let v = version; v < MIGRATIONS.length; v++) {
      db.exec(MIGRATIONS[v]!);
    }
    db.pragma(`user_version = ${MIGRATIONS.length}`);
  }).immediate();
}

export function openSqliteStore(path: string): Store {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  setSharedPragmas(db);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  migrate(db);
  // A database in memory exists only for this connection: its runs are read here.
  const reader = path === ':memory:' ? undefined : new RunReader(path);

  const q = {
    upsertFarm: db.prepare(
      `INSERT INTO farms (farm_id, lat, lon, name, extra, updated_at, revision) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (farm_id) DO UPDATE SET lat = excluded.lat, lon = excluded.lon, name = excluded.name,
         extra = excluded.extra, updated_at = excluded.updated_at, revision = excluded.revision`,
    ),
    allFarms: db.prepare<[], FarmRow>(`SELECT ${FARM_COLUMNS} FROM farms ORDER BY farm_id`),
    farmsSince: db.prepare<[number], FarmRow>(
      `SELECT ${FARM_COLUMNS} FROM farms WHERE revision > ? ORDER BY farm_id`,
    ),
    runsSince: db.prepare<[number], { farm_id: string; issue: string; revision: number }>(RUNS_SINCE_SQL),
    removedSince: db.prepare<[number], { farm_id: string; issue: string; revision: number }>(
      'SELECT farm_id, issue, revision FROM removed_runs WHERE revision > ? ORDER BY revision',
    ),
    // Runs before the cutoff that are not their site's newest.
    prunable: db.prepare<[string], { farm_id: string; issue: string }>(
      `SELECT farm_id, issue FROM runs r WHERE issue < ?
         AND issue < (SELECT max(issue) FROM runs n WHERE n.farm_id = r.farm_id)
       ORDER BY farm_id, issue`,
    ),
    removeRun: db.prepare<[string, string], unknown>('DELETE FROM runs WHERE farm_id = ? AND issue = ?'),
    recordRemoved: db.prepare<[string, string, number], unknown>('INSERT INTO removed_runs (farm_id, issue, revision) VALUES (?, ?, ?)'),
    revision: db.prepare<[], { value: number }>(`SELECT value FROM counters WHERE name = 'revision'`),
    dataVersion: db.prepare('PRAGMA data_version').pluck(),
    getFarm: db.prepare<[string], FarmRow>(`SELECT ${FARM_COLUMNS} FROM farms WHERE farm_id = ?`),
    listFarms: db.prepare<[number, number], FarmRow>(
      `SELECT ${FARM_COLUMNS} FROM farms ORDER BY farm_id LIMIT ? OFFSET ?`,
    ),
    countFarms: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM farms'),
    farmsInBox: db.prepare<[number, number, number, number], FarmRow>(
      `SELECT ${FARM_COLUMNS} FROM farms
       WHERE lat BETWEEN ? AND ? AND lon BETWEEN ? AND ? ORDER BY farm_id`,
    ),
    nextRevision: db.prepare<[], { value: number }>(
      `UPDATE counters SET value = value + 1 WHERE name = 'revision' RETURNING value`,
    ),
    putRun: db.prepare(
      `INSERT INTO runs (farm_id, issue, records, series, revision, published_at, first_published_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (farm_id, issue) DO UPDATE SET records = excluded.records, series = excluded.series,
         revision = excluded.revision, published_at = excluded.published_at`,
    ),
    getRun: db.prepare<[string, string], RunRow>(GET_RUN_SQL),
    latestIssue: db.prepare<[string], { issue: string }>(
      'SELECT issue FROM runs WHERE farm_id = ? ORDER BY issue DESC LIMIT 1',
    ),
    listIssues: db.prepare<[number, number], IssueSummary>(
      'SELECT issue, count(*) AS farms FROM runs GROUP BY issue ORDER BY issue DESC LIMIT ? OFFSET ?',
    ),
    countIssues: db.prepare<[], { n: number }>('SELECT count(DISTINCT issue) AS n FROM runs'),
    listFarmIssues: db.prepare<[string, number, number], IssueSummary>(
      `SELECT r.issue AS issue, (SELECT count(*) FROM runs a WHERE a.issue = r.issue) AS farms
       FROM runs r WHERE r.farm_id = ? ORDER BY r.issue DESC LIMIT ? OFFSET ?`,
    ),
    countFarmIssues: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM runs WHERE farm_id = ?'),
    runArrivals: db.prepare<[], RunArrivalRow>(RUN_ARRIVALS_SQL),
    runArrivalsAmong: db.prepare<[string], RunArrivalRow>(RUN_ARRIVALS_AMONG_SQL),
    runVersions: db.prepare<[string], RunVersionRow>(RUN_VERSIONS_SQL),
    runVersionsAmong: db.prepare<[string, string], RunVersionRow>(RUN_VERSIONS_AMONG_SQL),
    // The same three among a set of farms, given as a JSON array (one parameter whatever the set's size).
    listIssuesAmong: db.prepare<[string, number, number], IssueSummary>(
      `SELECT issue, count(*) AS farms FROM runs WHERE farm_id IN (SELECT value FROM json_each(?))
       GROUP BY issue ORDER BY issue DESC LIMIT ? OFFSET ?`,
    ),
    countIssuesAmong: db.prepare<[string], { n: number }>(
      'SELECT count(DISTINCT issue) AS n FROM runs WHERE farm_id IN (SELECT value FROM json_each(?))',
    ),
    listFarmIssuesAmong: db.prepare<[string, string, number, number], IssueSummary>(
      `SELECT r.issue AS issue,
              (SELECT count(*) FROM runs a WHERE a.issue = r.issue AND a.farm_id IN (SELECT value FROM json_each(?))) AS farms
       FROM runs r WHERE r.farm_id = ? ORDER BY r.issue DESC LIMIT ? OFFSET ?`,
    ),
    ping: db.prepare('SELECT 1'),
    countRuns: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM runs'),
    exportFirst: db.prepare<[number], RunRow & { farm_id: string; issue: string }>(
      `SELECT farm_id, issue, ${RUN_COLUMNS} FROM runs ORDER BY farm_id, issue LIMIT ?`,
    ),
    exportAfter: db.prepare<[string, string, number], RunRow & { farm_id: string; issue: string }>(
      `SELECT farm_id, issue, ${RUN_COLUMNS} FROM runs WHERE (farm_id, issue) > (?, ?) ORDER BY farm_id, issue LIMIT ?`,
    ),
    liveKeys: db.prepare<{ name: string; now: number }, KeyRow>(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE name = @name AND ${LIVE} ORDER BY id DESC`,
    ),
    insertKey: db.prepare<unknown[], KeyRow>(
      `INSERT INTO api_keys (name, hash, prefix, farms, rate, burst, admin, created_at, revision)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${KEY_COLUMNS}`,
    ),
    revokeKeys: db.prepare<{ name: string; now: number; revision: number }>(
      `UPDATE api_keys SET revoked_at = @now, revision = @revision WHERE name = @name AND ${LIVE}`,
    ),
    // An end already earlier (a roll within a roll's grace) stays; an end not after now revokes at once.
    endKeys: db.prepare<{ name: string; now: number; ends: number; revision: number }>(
      `UPDATE api_keys SET
         expires_at = CASE WHEN expires_at IS NOT NULL AND expires_at < @ends THEN expires_at ELSE @ends END,
         revoked_at = CASE WHEN @ends <= @now THEN @now END,
         revision = @revision
       WHERE name = @name AND ${LIVE}`,
    ),
    touchKey: db.prepare<{ hash: string; at: number }>(
      'UPDATE api_keys SET last_used_at = @at WHERE hash = @hash AND (last_used_at IS NULL OR last_used_at < @at)',
    ),
    listKeys: db.prepare<[], KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY name, created_at, id`),
    keyByHash: db.prepare<[string], KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = ?`),
    keysSince: db.prepare<[number], KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE revision > ? ORDER BY id`),
  };

  const upsertFarms = db.transaction((farms: readonly Farm[], now: number) => {
    const revision = q.nextRevision.get()!.value;
    for (const f of farms) {
      q.upsertFarm.run(f.farmId, f.lat, f.lon, f.name, extraText(f), f.updatedAt ?? now, revision);
    }
  });
  // PRAGMA data_version only moves for other connections' commits; count our own.
  let ownWrites = 0;
  const listeners = new Set<() => void>();
  const committed = (): void => {
    ownWrites++;
    for (const l of listeners) l();
  };
  // A read snapshot across two statements, so the revision matches the rows.
  const snapshot = db.transaction(() => ({ revision: q.revision.get()!.value, farms: q.allFarms.all().map(toFarm) }));
  const changesSince = db.transaction((since: number) => ({
    revision: q.revision.get()!.value,
    farms: q.farmsSince.all(since).map(toFarm),
    runs: [
      ...q.runsSince.all(since).map((r) => ({ farmId: r.farm_id, issue: r.issue, revision: r.revision })),
      ...q.removedSince.all(since).map((r) => ({ farmId: r.farm_id, issue: r.issue, revision: r.revision, removed: true })),
    ],
  }));

  const prune = db.transaction((before: string, dryRun: boolean): RunKey[] => {
    const runs = q.prunable.all(before).map((r) => ({ farmId: r.farm_id, issue: r.issue }));
    if (dryRun || runs.length === 0) return runs;
    const revision = q.nextRevision.get()!.value;
    for (const r of runs) {
      q.removeRun.run(r.farmId, r.issue);
      q.recordRemoved.run(r.farmId, r.issue, revision);
    }
    return runs;
  });

  /**
   * Gives freed pages back to the file system. A file made before incremental vacuum was switched on is
   * rewritten once (VACUUM) to switch it on; later prunes free pages incrementally.
   */
  const shrink = (): void => {
    if (db.pragma('auto_vacuum', { simple: true }) !== 2) {
      db.pragma('auto_vacuum = INCREMENTAL');
      db.exec('VACUUM');
    } else {
      db.pragma('incremental_vacuum');
    }
    db.pragma('wal_checkpoint(TRUNCATE)');
  };

  // The event log (INTERFACE.md section 14). SQLite has one writer at a time, so ids are given in commit order.
  const eq = {
    appendRun: db.prepare<[string, string, number, number], unknown>(
      `INSERT INTO events (kind, farm_id, issue, revision, at) VALUES ('run', ?, ?, ?, ?)`,
    ),
    appendTick: db.prepare<[number], { id: number }>(
      `INSERT INTO events (kind, at) VALUES ('tick', ?) ON CONFLICT (at) WHERE kind = 'tick' DO NOTHING RETURNING id`,
    ),
    after: db.prepare<[number, number], EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE id > ? ORDER BY id LIMIT ?`),
    // AUTOINCREMENT keeps the highest id ever given in sqlite_sequence, also once its entry is pruned.
    bounds: db.prepare<[], { first: number | null; last: number | null }>(
      `SELECT (SELECT min(id) FROM events) AS first,
              max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0), coalesce((SELECT max(id) FROM events), 0)) AS last`,
    ),
    prune: db.prepare<[number], unknown>('DELETE FROM events WHERE at < ? AND id < (SELECT max(id) FROM events)'),
  };

  const putRun = db.transaction((farmId: string, issue: string, blob: Uint8Array, records: number, at: number, event: boolean): Publication => {
    if (q.getFarm.get(farmId) === undefined) throw new UnknownFarmError(farmId);
    const revision = q.nextRevision.get()!.value;
    // The first publication is kept when the run is replaced (ON CONFLICT does not set it).
    q.putRun.run(farmId, issue, records, blob, revision, at, at);
    // In the same transaction: a reader of the log never hears of a run it cannot read, nor misses one.
    if (event) eq.appendRun.run(farmId, issue, revision, at);
    return { revision, publishedAt: at };
  });

  // Watched-folder file records. A claim recorded before is refused, so the transaction it is part of
  // (a run's publication) changes nothing.
  const fq = {
    insert: db.prepare<unknown[], FileRow>(
      `INSERT INTO ingested_files (claim, path, size, mtime, sha256, result, message, farm_id, issue, at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (claim) DO NOTHING RETURNING ${FILE_COLUMNS}`,
    ),
    byClaim: db.prepare<[string], FileRow>(`SELECT ${FILE_COLUMNS} FROM ingested_files WHERE claim = ?`),
    after: db.prepare<[number, number], FileRow>(`SELECT ${FILE_COLUMNS} FROM ingested_files WHERE id > ? ORDER BY id LIMIT ?`),
  };
  const recordFile = db.transaction((f: FileRecord, result: IngestedFile['result'], at: number): IngestedFile => {
    const row = fq.insert.get(...fileValues(f, result, at));
    if (row === undefined) throw new ClaimRecordedError(f.claim);
    return toIngestedFile(row);
  });
  // The record first: a claim recorded before leaves the run as it was.
  const putRunWithFile = db.transaction(
    (farmId: string, issue: string, blob: Uint8Array, records: number, at: number, file: FileRecord): Publication => {
      recordFile(file, 'taken', at);
      return putRun(farmId, issue, blob, records, at, true);
    },
  );

  // Key writes run as IMMEDIATE transactions: the write lock is taken before the live-name check, so
  // two processes cannot both find a name free.
  const insertKey = (k: NewKey, now: number, revision: number): StoredKey =>
    toStoredKey(q.insertKey.get(k.name, k.hash, k.prefix, farmsText(k), k.rate, k.burst, k.admin ? 1 : 0, now, revision)!);
  const createKey = db.transaction((k: NewKey, now: number): StoredKey => {
    if (q.liveKeys.get({ name: k.name, now }) !== undefined) throw new KeyNameTakenError(k.name);
    return insertKey(k, now, q.nextRevision.get()!.value);
  });
  const revokeKey = db.transaction((name: string, now: number): number => {
    if (q.liveKeys.get({ name, now }) === undefined) return 0;
    return q.revokeKeys.run({ name, now, revision: q.nextRevision.get()!.value }).changes;
  });
  const rollKey = db.transaction((name: string, next: { hash: string; prefix: string }, ends: number, now: number) => {
    const newest = q.liveKeys.get({ name, now });
    if (newest === undefined) return undefined;
    const revision = q.nextRevision.get()!.value;
    q.endKeys.run({ name, now, ends, revision });
    return insertKey({ ...toStoredKey(newest), hash: next.hash, prefix: next.prefix }, now, revision);
  });
  const touchKeys = db.transaction((lastUsed: ReadonlyMap<string, number>) => {
    for (const [hash, at] of lastUsed) q.touchKey.run({ hash, at });
  });
  const keysSince = db.transaction((since: number) => ({
    revision: q.revision.get()!.value,
    keys: q.keysSince.all(since).map(toStoredKey),
  }));

  // Webhook endpoints and the outbox. Writes are IMMEDIATE transactions, so two processes claiming at once
  // are serialised and never lease one delivery twice.
  const wq = {
    insert: db.prepare<[string, string, string, string | null, number, number], WebhookRow>(
      `INSERT INTO webhooks (name, url, secret, farms, created_at, since_event_id) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (name) DO NOTHING RETURNING ${webhookColumns()}`,
    ),
    list: db.prepare<[], WebhookSummaryRow>(listWebhooksSql('w.name')),
    byName: db.prepare<[string], WebhookRow>(`SELECT ${webhookColumns()} FROM webhooks WHERE name = ?`),
    remove: db.prepare<[string], unknown>('DELETE FROM webhooks WHERE name = ?'),
    // Nothing for an endpoint removed meanwhile.
    enqueue: db.prepare<[string, string, string, string, number, number, number], unknown>(
      `INSERT INTO webhook_deliveries (webhook_id, msg_id, type, issue, body, created_at, next_attempt_at)
       SELECT id, ?, ?, ?, ?, ?, ? FROM webhooks WHERE id = ?
       ON CONFLICT (webhook_id, msg_id) DO NOTHING`,
    ),
    due: db.prepare<{ now: number; limit: number }, DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
       WHERE ${PENDING} AND d.next_attempt_at <= @now AND w.disabled_at IS NULL
         AND (d.lease_until IS NULL OR d.lease_until < @now)
       ORDER BY d.created_at, d.id LIMIT @limit`,
    ),
    lease: db.prepare<[string, number, number], unknown>('UPDATE webhook_deliveries SET lease_owner = ?, lease_until = ? WHERE id = ?'),
    // A late outcome (after its lease ran out and another attempt ended) never undoes a delivery.
    finish: db.prepare<{ id: number; result: string; detail: string; at: number; next: number | null }, { webhook_id: number }>(
      `UPDATE webhook_deliveries SET
         attempts = attempts + 1, last_attempt_at = @at, last_detail = @detail, lease_owner = NULL, lease_until = NULL,
         delivered_at = CASE WHEN @result = 'delivered' THEN coalesce(delivered_at, @at) ELSE delivered_at END,
         next_attempt_at = CASE WHEN @result = 'retry' THEN @next ELSE next_attempt_at END,
         gave_up_at = CASE WHEN @result IN ('gave-up', 'gone') AND delivered_at IS NULL THEN coalesce(gave_up_at, @at) ELSE gave_up_at END
       WHERE id = @id RETURNING webhook_id`,
    ),
    disable: db.prepare<[number, string, number], unknown>(
      'UPDATE webhooks SET disabled_at = ?, disabled_reason = ? WHERE id = ? AND disabled_at IS NULL',
    ),
    prune: db.prepare<[number], unknown>(`DELETE FROM webhook_deliveries AS d WHERE ${FINISHED} AND ${FINISHED_AT} < ?`),
    retry: db.prepare<[number, number], unknown>(
      `UPDATE webhook_deliveries AS d SET next_attempt_at = ?, lease_owner = NULL, lease_until = NULL
       WHERE d.webhook_id = ? AND ${PENDING}`,
    ),
    readMark: db.prepare<[string], { value: number }>('SELECT value FROM marks WHERE name = ?'),
    advanceMark: db.prepare<[string, number], unknown>(
      'INSERT INTO marks (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)',
    ),
  };
  const addWebhook = db.transaction((w: NewWebhook, now: number): StoredWebhook => {
    const since = toEventBounds(eq.bounds.get()).last;
    const row = wq.insert.get(w.name, w.url, w.secret, webhookFarmsText(w), now, since);
    if (row === undefined) throw new WebhookNameTakenError(w.name);
    return toStoredWebhook(row);
  });
  const claim = db.transaction((now: number, owner: string, leaseMs: number, limit: number) => {
    const rows = wq.due.all({ now, limit });
    for (const r of rows) wq.lease.run(owner, now + leaseMs, Number(r.id));
    return rows.map(toDelivery);
  });
  const finish = db.transaction((id: number, o: DeliveryOutcome, next: number | null) => {
    const row = wq.finish.get({ id, result: o.result, detail: o.detail, at: o.at, next });
    if (row !== undefined && o.result === 'gone') wq.disable.run(o.at, GONE_REASON, row.webhook_id);
  });
  const retry = db.transaction((name: string, now: number): number | undefined => {
    const w = wq.byName.get(name);
    return w === undefined ? undefined : wq.retry.run(now, Number(w.id)).changes;
  });

  return {
    async eventsAfter(afterId, limit) {
      checkEventPage(afterId, limit);
      return eq.after.all(afterId, limit).map(toEventEntry);
    },
    async eventBounds() {
      return toEventBounds(eq.bounds.get());
    },
    // A commit like others: this handle's token moves and its listeners run; other processes see data_version
    // move. No revision is taken, so the run caches have nothing to re-read.
    async appendTick(at) {
      checkTime('a tick', at);
      const row = eq.appendTick.get(at);
      if (row === undefined) return undefined;
      committed();
      return row.id;
    },
    async pruneEvents(before) {
      checkTime('the cutoff', before);
      return eq.prune.run(before).changes;
    },
    async addWebhook(w, now) {
      checkNewWebhook(w);
      checkTime('now', now);
      return addWebhook.immediate(w, now);
    },
    async listWebhooks() {
      return wq.list.all().map(toWebhookSummary);
    },
    async removeWebhook(name) {
      return wq.remove.run(name).changes > 0;
    },
    async enqueueDelivery(d) {
      checkNewDelivery(d);
      return wq.enqueue.run(d.msgId, d.type, d.issue, d.body, d.createdAt, d.createdAt, d.webhookId).changes > 0;
    },
    async claimDeliveries(now, owner, leaseMs, limit) {
      checkClaim(now, owner, leaseMs, limit);
      return claim.immediate(now, owner, leaseMs, limit);
    },
    async finishDelivery(id, outcome) {
      const next = checkOutcome(outcome);
      finish.immediate(id, outcome, next);
    },
    async pruneDeliveries(before) {
      checkTime('the cutoff', before);
      return wq.prune.run(before).changes;
    },
    async retryWebhook(name, now) {
      checkTime('now', now);
      return retry.immediate(name, now);
    },
    async readMark(name) {
      checkMark(name);
      return wq.readMark.get(name)?.value ?? 0;
    },
    async advanceMark(name, value) {
      checkMark(name, value);
      wq.advanceMark.run(name, value);
    },
    async createKey(k, now) {
      checkNewKey(k);
      checkTime('now', now);
      const key = createKey.immediate(k, now);
      committed();
      return key;
    },
    async listKeys() {
      return q.listKeys.all().map(toStoredKey);
    },
    async findKeyByHash(hash) {
      const row = q.keyByHash.get(hash);
      return row && toStoredKey(row);
    },
    async revokeKey(name, now) {
      checkTime('now', now);
      const n = revokeKey.immediate(name, now);
      if (n > 0) committed();
      return n;
    },
    async rollKey(name, next, graceEndsAt, now) {
      checkKeyText(next);
      checkTime('now', now);
      checkTime('the grace end', graceEndsAt);
      const key = rollKey.immediate(name, next, graceEndsAt, now);
      if (key !== undefined) committed();
      return key;
    },
    // Not a change readers need: no revision, no listener, no move of this handle's token.
    async touchKeys(lastUsed) {
      for (const at of lastUsed.values()) checkTime('a last use', at);
      if (lastUsed.size > 0) touchKeys.immediate(lastUsed);
    },
    async keysSince(since) {
      return keysSince.deferred(since);
    },
    async upsertFarms(farms) {
      upsertFarms.immediate(farms, Date.now());
      committed();
    },
    async getFarm(farmId) {
      const row = q.getFarm.get(farmId);
      return row && toFarm(row);
    },
    async listFarms(offset, limit) {
      return { total: q.countFarms.get()!.n, items: q.listFarms.all(limit, offset).map(toFarm) };
    },
    async farmsInBox(box: Box) {
      return q.farmsInBox.all(box.latMin, box.latMax, box.lonMin, box.lonMax).map(toFarm);
    },
    async countFarms() {
      return q.countFarms.get()!.n;
    },
    async putRun(run, options) {
      const file = options?.file;
      if (file !== undefined) checkFileRecord(file);
      const { blob, records } = encodedSeries(run.series);
      const pub =
        file === undefined
          ? putRun.immediate(run.farmId, run.issue, blob, records, Date.now(), true)
          : putRunWithFile.immediate(run.farmId, run.issue, blob, records, Date.now(), file);
      committed();
      return pub;
    },
    // Not a change readers need: no revision, no listener, no move of this handle's token.
    async recordRejectedFile(file) {
      checkFileRecord(file);
      return recordFile.immediate(file, 'rejected', Date.now());
    },
    async ingestedFile(claim) {
      const row = fq.byClaim.get(claim);
      return row && toIngestedFile(row);
    },
    async listIngestedFiles(afterId, limit) {
      return fq.after.all(afterId, limit).map(toIngestedFile);
    },
    async importRun(run) {
      const records = openSeries(run.blob).length; // also proves the blob decodes
      // A copy between stores is no news: no event.
      const pub = putRun.immediate(run.farmId, run.issue, run.blob, records, run.publishedAt, false);
      committed();
      return pub;
    },
    async countRuns() {
      return q.countRuns.get()!.n;
    },
    async exportRuns(after, limit) {
      const rows = after === undefined ? q.exportFirst.all(limit) : q.exportAfter.all(after.farmId, after.issue, limit);
      return rows.map(toEncodedRun);
    },
    async getRun(farmId, issue): Promise<StoredRun | undefined> {
      const row = reader !== undefined ? await reader.read(farmId, issue) : q.getRun.get(farmId, issue);
      return row && toStoredRun(farmId, issue, row);
    },
    async latestIssue(farmId) {
      return q.latestIssue.get(farmId)?.issue;
    },
    async runArrivals(among): Promise<readonly RunArrival[]> {
      const rows = among === undefined ? q.runArrivals.all() : q.runArrivalsAmong.all(JSON.stringify(among));
      return rows.map(toArrival);
    },
    async runVersions(issue, among): Promise<readonly RunVersion[]> {
      const rows = among === undefined ? q.runVersions.all(issue) : q.runVersionsAmong.all(issue, JSON.stringify(among));
      return rows.map(toRunVersion);
    },
    async listIssues(farmId, offset, limit, among): Promise<Page<IssueSummary>> {
      if (among !== undefined) {
        const set = JSON.stringify(among);
        if (farmId === undefined) {
          return { total: q.countIssuesAmong.get(set)!.n, items: q.listIssuesAmong.all(set, limit, offset) };
        }
        return { total: q.countFarmIssues.get(farmId)!.n, items: q.listFarmIssuesAmong.all(set, farmId, limit, offset) };
      }
      if (farmId === undefined) {
        return { total: q.countIssues.get()!.n, items: q.listIssues.all(limit, offset) };
      }
      return { total: q.countFarmIssues.get(farmId)!.n, items: q.listFarmIssues.all(farmId, limit, offset) };
    },
    // Other processes' commits are only seen by asking. An ask is a read transaction, whose WAL read lock
    // costs two fcntl calls: once per 10 ms, not per ms, spares the hot path about 1 µs an answer at 17,000
    // answers a second, and 10 ms is far inside the time a client takes to hear of a run (events: 300 ms).
    changePollMs: 10,
    onCommit(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async changeToken() {
      return `${String(q.dataVersion.get())}:${ownWrites}`;
    },
    async snapshot() {
      return snapshot.deferred();
    },
    async pruneRuns(before, dryRun) {
      const removed = prune.immediate(before, dryRun);
      if (!dryRun && removed.length > 0) {
        committed();
        shrink();
      }
      return removed;
    },
    async changesSince(since) {
      return changesSince.deferred(since);
    },
    async ping() {
      q.ping.get();
    },
    prepareReads() {
      reader?.prepare();
    },

    async close() {
      await reader?.close();
      if (db.open) db.close();
    },
  };
}
