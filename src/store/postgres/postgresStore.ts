/**
 * The PostgreSQL store (node-postgres). Same semantics as the SQLite store (see
 * ../store.ts), for several processes on several hosts:
 * - every publication (and every key create, revoke or roll) bumps the
 *   `counters` row in its transaction, so revisions follow commit order, and
 *   sends NOTIFY forecastd_changes; each process LISTENs on a dedicated
 *   connection and learns of commits at once;
 * - entries of the event log (a publication's, in its transaction, and
 *   ticks) are inserted one transaction at a time, so their ids become visible
 *   in increasing order; a tick sends NOTIFY too, without a revision;
 * - readers may use a read replica; then the change token is the replica's own
 *   revision (read at most once per changePollMs), so a run appears when the
 *   replica has it;
 * - connection failures and timeouts surface as StoreUnavailableError, and the
 *   pools and the listener reconnect by themselves.
 */
import pg from 'pg';
import { encodedSeries, openSeries } from '../../domain/codec.js';
import {
  KeyNameTakenError,
  StoreUnavailableError,
  UnknownFarmError,
  type Box,
  type Changes,
  type Farm,
  type IssueSummary,
  type KeyChanges,
  type NewKey,
  type Page,
  type Publication,
  type Store,
  type RunArrival,
  type RunKey,
  type RunVersion,
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
import { WebhookNameTakenError, type Delivery, type StoredWebhook } from '../store.js';
import { checkEventPage, EVENT_COLUMNS, toEventBounds, toEventEntry, type EventRow } from '../eventRows.js';
import {
  byAge,
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
import { PG_MIGRATIONS } from './migrations.js';

export interface PgSettings {
  /** Primary: writes, LISTEN, and reads when no replica is given. */
  readonly url: string;
  /** Optional read replica. */
  readonly readUrl?: string;
  readonly poolSize: number;
  readonly connectTimeoutMs: number;
  readonly statementTimeoutMs: number;
}

const CHANNEL = 'forecastd_changes';
/** A key live at $2 among those named $1: not revoked, and no end or an end after $2. */
const LIVE_KEYS = 'name = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)';
/** Key of the advisory lock that serialises schema migrations across processes. */
const MIGRATION_LOCK = 0x66637374; // 'fcst'
/** Key of the advisory lock that serialises inserts into the event log until their commit (see lockEvents). */
const EVENTS_LOCK = 0x66636576; // 'fcev'

/**
 * SQLSTATE classes and client errors that mean "not reachable now", not "bad
 * request". The store's own errors pass as they are (their messages name farms,
 * which may read like anything), and an error the server reports is judged by
 * its SQLSTATE alone; only the client's own connection errors, which carry no
 * SQLSTATE, are recognised by their text.
 */
function isUnavailable(err: unknown): boolean {
  if (err instanceof UnknownFarmError || err instanceof KeyNameTakenError || err instanceof StoreUnavailableError) return false;
  if (err instanceof ClaimRecordedError || err instanceof WebhookNameTakenError) return false;
  const e = err as { code?: string; message?: string };
  const code = e.code ?? '';
  if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH'].includes(code)) return true;
  if (/^[0-9A-Z]{5}$/.test(code)) {
    // connection exception, insufficient resources, operator intervention (incl. statement timeout 57014)
    return /^(08|53|57)/.test(code);
  }
  return /timeout|terminat|Connection terminated|connect ECONNREFUSED|Client has encountered a connection error|not queryable/i.test(
    e.message ?? '',
  );
}

function wrap(err: unknown): never {
  if (isUnavailable(err)) throw new StoreUnavailableError('the PostgreSQL store is not reachable', { cause: err });
  throw err;
}

function makePool(url: string, s: PgSettings): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: s.poolSize,
    connectionTimeoutMillis: s.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    statement_timeout: s.statementTimeoutMs,
    query_timeout: s.statementTimeoutMs + 1000,
    keepAlive: true,
  });
  // An idle client that loses its server emits here; without a handler the process would crash.
  pool.on('error', () => undefined);
  return pool;
}

async function migrate(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query('CREATE TABLE IF NOT EXISTS forecastd_schema (version integer NOT NULL)');
    const rows = (await client.query<{ version: number }>('SELECT version FROM forecastd_schema')).rows;
    if (rows.length === 0) await client.query('INSERT INTO forecastd_schema (version) VALUES (0)');
    const version = rows[0]?.version ?? 0;
    if (version > PG_MIGRATIONS.length) {
      throw new Error(`store schema version ${version} is newer than this forecastd (${PG_MIGRATIONS.length})`);
    }
    for (let v = version; v < PG_MIGRATIONS.length; v++) await client.query(PG_MIGRATIONS[v]!);
    await client.query('UPDATE forecastd_schema SET version = $1', [PG_MIGRATIONS.length]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** Pool clients that carry our error listener (added once per client, which the pool reuses). */
const guarded = new WeakSet<pg.PoolClient>();
const ignoreError = (): void => undefined;

/** A client of the pool; whatever keeps us from connecting (refused, timed out, database closed) is unavailability. */
async function connect(pool: pg.Pool): Promise<pg.PoolClient> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw new StoreUnavailableError('the PostgreSQL store is not reachable', { cause: err });
  }
  // The pool listens for errors of idle clients only: a checked-out client whose server goes away between two
  // statements emits 'error', which would crash the process; the statement that fails reports it instead.
  if (!guarded.has(client)) {
    guarded.add(client);
    client.on('error', ignoreError);
  }
  return client;
}

/** Runs fn in one transaction on a client of the pool. */
async function transaction<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>, isolation = ''): Promise<T> {
  const client = await connect(pool);
  try {
    await client.query(`BEGIN${isolation ? ` ISOLATION LEVEL ${isolation}` : ''}`);
    const result = await fn(client);
    await client.query('COMMIT');
    client.release();
    return result;
  } catch (err) {
    const rolledBack = await client.query('ROLLBACK').then(
      () => true,
      () => false,
    );
    // A client that could not even roll back is broken: drop it rather than pool it.
    client.release(!rolledBack);
    return wrap(err);
  }
}

/** Keeps one connection LISTENing, reconnecting after failures; counts what it hears. */
class Listener {
  private client: pg.Client | undefined;
  private stopped = false;
  heard = 0;
  /** Moves each time the listener (re)connects: commits may have been missed before. */
  epoch = 0;
  connected = false;

  constructor(
    private readonly url: string,
    private readonly connectTimeoutMs: number,
    private readonly onNotice: () => void,
  ) {}

  start(): void {
    void this.connect();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: this.connectTimeoutMs, keepAlive: true });
    const lost = (): void => {
      if (this.client !== client) return;
      this.client = undefined;
      // Readers must stop trusting their caches' freshness and ask the store (which may now fail).
      if (this.connected) this.onNotice();
      this.connected = false;
      client.end().catch(() => undefined);
      if (!this.stopped) setTimeout(() => void this.connect(), 500).unref();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', () => {
      this.heard++;
      this.onNotice();
    });
    this.client = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      this.connected = true;
      this.epoch++;
      this.onNotice();
    } catch {
      lost();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const c = this.client;
    this.client = undefined;
    this.connected = false;
    await c?.end().catch(() => undefined);
  }
}

export async function openPostgresStore(settings: PgSettings): Promise<Store> {
  const primary = makePool(settings.url, settings);
  const reader = settings.readUrl ? makePool(settings.readUrl, settings) : primary;
  try {
    await migrate(primary);
  } catch (err) {
    await primary.end().catch(() => undefined);
    if (reader !== primary) await reader.end().catch(() => undefined);
    if (isUnavailable(err)) throw new Error(`cannot reach PostgreSQL: ${(err as Error).message}`);
    throw err;
  }

  const listeners = new Set<() => void>();
  const notify = (): void => {
    for (const l of listeners) l();
  };
  let ownWrites = 0;
  const listener = new Listener(settings.url, settings.connectTimeoutMs, notify);
  listener.start();

  /** One statement on a client of the pool (reads go to the replica, if any, through `read`). */
  async function readFrom<R extends pg.QueryResultRow>(pool: pg.Pool, sql: string, params: unknown[] = []): Promise<R[]> {
    const client = await connect(pool);
    try {
      const rows = (await client.query<R>(sql, params)).rows;
      client.release();
      return rows;
    } catch (err) {
      // A client that failed may be broken: drop it rather than pool it.
      client.release(true);
      return wrap(err);
    }
  }

  function read<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
    return readFrom<R>(reader, sql, params);
  }

  async function nextRevision(c: pg.PoolClient): Promise<number> {
    const r = await c.query<{ value: string }>(`UPDATE counters SET value = value + 1 WHERE name = 'revision' RETURNING value`);
    return Number(r.rows[0]!.value);
  }

  const committed = (): void => {
    ownWrites++;
    notify();
  };

  /**
   * One key write. The counters row is locked first, as every publication does, so key writes are
   * serialised with each other (two processes cannot both find a name free) and take revisions in
   * commit order. Then the live keys of the name are locked in id order (touchKeys locks in that
   * order too, so the two cannot deadlock); `write` gets them, newest first, and returns undefined
   * when it changes nothing: then no revision is taken and nobody is told.
   */
  async function keyWrite<T>(
    name: string,
    now: number,
    write: (c: pg.PoolClient, live: KeyRow[], revision: () => Promise<number>) => Promise<T | undefined>,
  ): Promise<T | undefined> {
    let revision: number | undefined;
    const result = await transaction(primary, async (c) => {
      await c.query(`SELECT value FROM counters WHERE name = 'revision' FOR UPDATE`);
      const live = await c.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE ${LIVE_KEYS} ORDER BY id FOR UPDATE`, [name, now]);
      const out = await write(c, live.rows.reverse(), async () => (revision = await nextRevision(c)));
      if (revision !== undefined) await c.query('SELECT pg_notify($1, $2)', [CHANNEL, String(revision)]);
      return out;
    });
    if (revision !== undefined) committed();
    return result;
  }

  async function insertKey(c: pg.PoolClient, k: NewKey, now: number, revision: number): Promise<StoredKey> {
    const r = await c.query<KeyRow>(
      `INSERT INTO api_keys (name, hash, prefix, farms, rate, burst, admin, created_at, revision)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${KEY_COLUMNS}`,
      [k.name, k.hash, k.prefix, farmsText(k), k.rate, k.burst, k.admin, now, revision],
    );
    return toStoredKey(r.rows[0]!);
  }

  /**
   * Records a watched-folder file; a claim recorded before is refused (ClaimRecordedError), which rolls
   * back the transaction it is part of. A concurrent insert of the same claim waits for the other to end.
   */
  async function insertFile(c: pg.PoolClient, f: FileRecord, result: IngestedFile['result'], at: number): Promise<IngestedFile> {
    const r = await c.query<FileRow>(
      `INSERT INTO ingested_files (claim, path, size, mtime, sha256, result, message, farm_id, issue, at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (claim) DO NOTHING RETURNING ${FILE_COLUMNS}`,
      fileValues(f, result, at),
    );
    if (r.rows.length === 0) throw new ClaimRecordedError(f.claim);
    return toIngestedFile(r.rows[0]!);
  }

  /**
   * Makes this transaction the only one inserting into the event log until it commits or rolls back.
   * Readers follow the log by asking for the entries after the last id they saw, so ids must become
   * visible in increasing order. An identity value is drawn when the row is inserted, not when its
   * transaction commits: two transactions inserting at once could commit out of id order, and a reader
   * that saw the later id first would never ask for the earlier one. With this lock held from just before
   * the insert until commit, each insert draws its id only after the previous inserter has committed.
   * (Publications are already serialised by the counters row; ticks take no revision, hence the lock.)
   * Held only for the end of the transaction, after the heavy writes.
   */
  async function lockEvents(c: pg.PoolClient): Promise<void> {
    await c.query('SELECT pg_advisory_xact_lock($1)', [EVENTS_LOCK]);
  }

  /**
   * One publication: refuse an unknown farm, take the next revision, write, append its entry to the event
   * log (unless `event` is false: a copy between stores), notify, commit.
   */
  async function publish(
    farmId: string,
    issue: string,
    blob: Uint8Array,
    records: number,
    at: number,
    event: boolean,
    file?: FileRecord,
  ): Promise<Publication> {
    const pub = await transaction(primary, async (c) => {
      const farm = await c.query('SELECT 1 FROM farms WHERE farm_id = $1', [farmId]);
      if (farm.rowCount === 0) throw new UnknownFarmError(farmId);
      const revision = await nextRevision(c);
      // The file's record before the run (a claim recorded before fails the transaction: the run stays as it
      // was), and after the revision: the counters row lock serialises publications, so records of taken
      // files draw their ids in the order their runs are published, and the newest record of a run is the
      // file it holds. Drawn before the lock, two watchers publishing one run at once could commit in the
      // other order than their ids.
      if (file !== undefined) await insertFile(c, file, 'taken', at);
      await c.query(
        `INSERT INTO runs (farm_id, issue, records, series, revision, published_at, first_published_at)
         VALUES ($1, $2, $3, $4, $5, $6, $6)
         ON CONFLICT (farm_id, issue) DO UPDATE SET records = excluded.records, series = excluded.series,
           revision = excluded.revision, published_at = excluded.published_at`,
        [farmId, issue, records, Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength), revision, at],
      );
      if (event) {
        await lockEvents(c);
        await c.query(`INSERT INTO events (kind, farm_id, issue, revision, at) VALUES ('run', $1, $2, $3, $4)`, [farmId, issue, revision, at]);
      }
      await c.query('SELECT pg_notify($1, $2)', [CHANNEL, String(revision)]);
      return { revision, publishedAt: at };
    });
    committed();
    return pub;
  }

  return {
    // NOTIFY tells this process of every commit at once; the poll only guards a lost listener or a lagging replica.
    changePollMs: 1000,

    async createKey(k, now) {
      checkNewKey(k);
      checkTime('now', now);
      const key = await keyWrite(k.name, now, async (c, live, revision) => {
        if (live.length > 0) throw new KeyNameTakenError(k.name);
        return insertKey(c, k, now, await revision());
      });
      return key!;
    },

    async revokeKey(name, now) {
      checkTime('now', now);
      const n = await keyWrite(name, now, async (c, live, revision) => {
        if (live.length === 0) return undefined;
        const r = await c.query(`UPDATE api_keys SET revoked_at = $2, revision = $3 WHERE ${LIVE_KEYS}`, [name, now, await revision()]);
        return r.rowCount ?? 0;
      });
      return n ?? 0;
    },

    async rollKey(name, next, graceEndsAt, now) {
      checkKeyText(next);
      checkTime('now', now);
      checkTime('the grace end', graceEndsAt);
      return keyWrite(name, now, async (c, live, revision) => {
        const newest = live[0];
        if (newest === undefined) return undefined;
        const rev = await revision();
        // An end already earlier (a roll within a roll's grace) stays; an end not after now revokes at once.
        await c.query(
          `UPDATE api_keys SET
             expires_at = CASE WHEN expires_at IS NOT NULL AND expires_at < $3 THEN expires_at ELSE $3 END,
             revoked_at = CASE WHEN $3 <= $2 THEN $2::bigint END,
             revision = $4
           WHERE ${LIVE_KEYS}`,
          [name, now, graceEndsAt, rev],
        );
        return insertKey(c, { ...toStoredKey(newest), hash: next.hash, prefix: next.prefix }, now, rev);
      });
    },

    // Not a change readers need: no revision, no NOTIFY, no move of this handle's token. One statement;
    // rows are locked in id order, as keyWrite locks them.
    async touchKeys(lastUsed) {
      if (lastUsed.size === 0) return;
      const hashes: string[] = [];
      const times: number[] = [];
      for (const [hash, at] of lastUsed) {
        checkTime('a last use', at);
        hashes.push(hash);
        times.push(at);
      }
      await transaction(primary, (c) =>
        c.query(
          `WITH v (hash, at) AS (SELECT * FROM unnest($1::text[], $2::bigint[])),
           locked AS (
             SELECT k.id, v.at FROM api_keys k JOIN v ON k.hash = v.hash
             WHERE k.last_used_at IS NULL OR k.last_used_at < v.at
             ORDER BY k.id FOR UPDATE OF k
           )
           UPDATE api_keys SET last_used_at = GREATEST(api_keys.last_used_at, locked.at)
           FROM locked WHERE api_keys.id = locked.id`,
          [hashes, times],
        ),
      );
    },

    async listKeys() {
      const rows = await read<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY name COLLATE "C", created_at, id`);
      return rows.map(toStoredKey);
    },

    async findKeyByHash(hash) {
      const rows = await read<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = $1`, [hash]);
      return rows[0] && toStoredKey(rows[0]);
    },

    async keysSince(since): Promise<KeyChanges> {
      return transaction(
        reader,
        async (c) => {
          const rev = await c.query<{ value: string }>(`SELECT value FROM counters WHERE name = 'revision'`);
          const keys = await c.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE revision > $1 ORDER BY id`, [since]);
          return { revision: Number(rev.rows[0]!.value), keys: keys.rows.map(toStoredKey) };
        },
        'REPEATABLE READ READ ONLY',
      );
    },

    onCommit(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },

    async changeToken() {
      if (listener.connected && reader === primary) return `n${listener.epoch}:${listener.heard}:${ownWrites}`;
      const rows = await read<{ value: string }>(`SELECT value FROM counters WHERE name = 'revision'`);
      return `r${rows[0]?.value ?? 0}:${ownWrites}`;
    },

    async upsertFarms(farms) {
      await transaction(primary, async (c) => {
        const revision = await nextRevision(c);
        const now = Date.now();
        for (const f of farms) {
          await c.query(
            `INSERT INTO farms (farm_id, lat, lon, name, extra, updated_at, revision) VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (farm_id) DO UPDATE SET lat = excluded.lat, lon = excluded.lon, name = excluded.name,
               extra = excluded.extra, updated_at = excluded.updated_at, revision = excluded.revision`,
            [f.farmId, f.lat, f.lon, f.name, extraText(f), f.updatedAt ?? now, revision],
          );
        }
        await c.query('SELECT pg_notify($1, $2)', [CHANNEL, String(revision)]);
      });
      committed();
    },

    async getFarm(farmId) {
      const rows = await read<FarmRow>(`SELECT ${FARM_COLUMNS} FROM farms WHERE farm_id = $1`, [farmId]);
      return rows[0] && toFarm(rows[0]);
    },

    async listFarms(offset, limit) {
      const [count, rows] = await Promise.all([
        read<{ n: string }>('SELECT count(*) AS n FROM farms'),
        read<FarmRow>(`SELECT ${FARM_COLUMNS} FROM farms ORDER BY farm_id COLLATE "C" LIMIT $1 OFFSET $2`, [limit, offset]),
      ]);
      return { total: Number(count[0]!.n), items: rows.map(toFarm) };
    },

    async farmsInBox(box: Box) {
      const rows = await read<FarmRow>(
        `SELECT ${FARM_COLUMNS} FROM farms WHERE lat BETWEEN $1 AND $2 AND lon BETWEEN $3 AND $4 ORDER BY farm_id COLLATE "C"`,
        [box.latMin, box.latMax, box.lonMin, box.lonMax],
      );
      return rows.map(toFarm);
    },

    async countFarms() {
      const rows = await read<{ n: string }>('SELECT count(*) AS n FROM farms');
      return Number(rows[0]!.n);
    },

    async putRun(run, options): Promise<Publication> {
      const file = options?.file;
      if (file !== undefined) checkFileRecord(file);
      const { blob, records } = encodedSeries(run.series);
      return publish(run.farmId, run.issue, blob, records, Date.now(), true, file);
    },

    // Not a change readers need: no revision, no NOTIFY, no move of this handle's token.
    async recordRejectedFile(file) {
      checkFileRecord(file);
      return transaction(primary, (c) => insertFile(c, file, 'rejected', Date.now()));
    },

    // From the primary: a watcher asks right after a commit (a replica may not have it yet).
    async ingestedFile(claim) {
      const r = await transaction(primary, (c) => c.query<FileRow>(`SELECT ${FILE_COLUMNS} FROM ingested_files WHERE claim = $1`, [claim]));
      return r.rows[0] && toIngestedFile(r.rows[0]);
    },

    async listIngestedFiles(afterId, limit) {
      const rows = await read<FileRow>(`SELECT ${FILE_COLUMNS} FROM ingested_files WHERE id > $1 ORDER BY id LIMIT $2`, [afterId, limit]);
      return rows.map(toIngestedFile);
    },

    async importRun(run) {
      // A copy between stores is no news: no event.
      return publish(run.farmId, run.issue, run.blob, openSeries(run.blob).length, run.publishedAt, false);
    },

    async countRuns() {
      const rows = await read<{ n: string }>('SELECT count(*) AS n FROM runs');
      return Number(rows[0]!.n);
    },

    async exportRuns(after, limit) {
      const rows = await read<RunRow & { farm_id: string; issue: string }>(
        after === undefined
          ? `SELECT farm_id, issue, ${RUN_COLUMNS} FROM runs ORDER BY farm_id COLLATE "C", issue COLLATE "C" LIMIT $1`
          : `SELECT farm_id, issue, ${RUN_COLUMNS} FROM runs
             WHERE (farm_id COLLATE "C", issue COLLATE "C") > ($2 COLLATE "C", $3 COLLATE "C")
             ORDER BY farm_id COLLATE "C", issue COLLATE "C" LIMIT $1`,
        after === undefined ? [limit] : [limit, after.farmId, after.issue],
      );
      return rows.map(toEncodedRun);
    },

    async getRun(farmId, issue): Promise<StoredRun | undefined> {
      const rows = await read<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE farm_id = $1 AND issue = $2`, [farmId, issue]);
      const row = rows[0];
      return row && toStoredRun(farmId, issue, row);
    },

    async latestIssue(farmId) {
      const rows = await read<{ issue: string }>('SELECT issue FROM runs WHERE farm_id = $1 ORDER BY issue DESC LIMIT 1', [farmId]);
      return rows[0]?.issue;
    },

    async runArrivals(among): Promise<readonly RunArrival[]> {
      const rows = await read<RunArrivalRow>(
        `SELECT issue, count(*) AS farms, min(first_published_at) AS first, max(first_published_at) AS "lastFirst",
                max(published_at) AS last
         FROM runs ${among === undefined ? '' : 'WHERE farm_id = ANY($1::text[])'} GROUP BY issue ORDER BY issue DESC`,
        among === undefined ? [] : [among],
      );
      return rows.map(toArrival);
    },

    async runVersions(issue, among): Promise<readonly RunVersion[]> {
      // Among a set of farms: one array parameter, whatever the set's size. Byte order, as SQLite sorts.
      const rows = await read<RunVersionRow>(
        `SELECT farm_id, revision, published_at FROM runs
         WHERE issue = $1 ${among === undefined ? '' : 'AND farm_id = ANY($2::text[])'} ORDER BY farm_id COLLATE "C"`,
        among === undefined ? [issue] : [issue, among],
      );
      return rows.map(toRunVersion);
    },

    async listIssues(farmId, offset, limit, among): Promise<Page<IssueSummary>> {
      const toItem = (r: { issue: string; farms: string }): IssueSummary => ({ issue: r.issue, farms: Number(r.farms) });
      // Among a set of farms: one array parameter, whatever the set's size.
      const inSet = (column: string, n: number): string => (among === undefined ? 'TRUE' : `${column} = ANY($${n}::text[])`);
      const set = among === undefined ? [] : [among];
      if (farmId === undefined) {
        const [count, rows] = await Promise.all([
          read<{ n: string }>(`SELECT count(DISTINCT issue) AS n FROM runs WHERE ${inSet('farm_id', 1)}`, set),
          read<{ issue: string; farms: string }>(
            `SELECT issue, count(*) AS farms FROM runs WHERE ${inSet('farm_id', 3)}
             GROUP BY issue ORDER BY issue DESC LIMIT $1 OFFSET $2`,
            [limit, offset, ...set],
          ),
        ]);
        return { total: Number(count[0]!.n), items: rows.map(toItem) };
      }
      const [count, rows] = await Promise.all([
        read<{ n: string }>('SELECT count(*) AS n FROM runs WHERE farm_id = $1', [farmId]),
        read<{ issue: string; farms: string }>(
          `SELECT r.issue AS issue, (SELECT count(*) FROM runs a WHERE a.issue = r.issue AND ${inSet('a.farm_id', 4)}) AS farms
           FROM runs r WHERE r.farm_id = $1 ORDER BY r.issue DESC LIMIT $2 OFFSET $3`,
          [farmId, limit, offset, ...set],
        ),
      ]);
      return { total: Number(count[0]!.n), items: rows.map(toItem) };
    },

    async snapshot() {
      return transaction(
        reader,
        async (c) => {
          const rev = await c.query<{ value: string }>(`SELECT value FROM counters WHERE name = 'revision'`);
          const farms = await c.query<FarmRow>(`SELECT ${FARM_COLUMNS} FROM farms ORDER BY farm_id COLLATE "C"`);
          return { revision: Number(rev.rows[0]!.value), farms: farms.rows.map(toFarm) };
        },
        'REPEATABLE READ READ ONLY',
      );
    },

    async changesSince(since): Promise<Changes> {
      return transaction(
        reader,
        async (c) => {
          const rev = await c.query<{ value: string }>(`SELECT value FROM counters WHERE name = 'revision'`);
          const farms = await c.query<FarmRow>(`SELECT ${FARM_COLUMNS} FROM farms WHERE revision > $1 ORDER BY farm_id COLLATE "C"`, [since]);
          const runs = await c.query<{ farm_id: string; issue: string; revision: string }>(
            'SELECT farm_id, issue, revision FROM runs WHERE revision > $1 ORDER BY revision',
            [since],
          );
          const removed = await c.query<{ farm_id: string; issue: string; revision: string }>(
            'SELECT farm_id, issue, revision FROM removed_runs WHERE revision > $1 ORDER BY revision',
            [since],
          );
          return {
            revision: Number(rev.rows[0]!.value),
            farms: farms.rows.map(toFarm),
            runs: [
              ...runs.rows.map((r) => ({ farmId: r.farm_id, issue: r.issue, revision: Number(r.revision) })),
              ...removed.rows.map((r) => ({ farmId: r.farm_id, issue: r.issue, revision: Number(r.revision), removed: true })),
            ],
          };
        },
        'REPEATABLE READ READ ONLY',
      );
    },

    async pruneRuns(before, dryRun): Promise<readonly RunKey[]> {
      // Runs before the cutoff that are not their site's newest. Their space is reused by PostgreSQL once
      // (auto)vacuum has passed; the file does not shrink.
      const select = `SELECT farm_id, issue FROM runs r WHERE issue < $1
          AND issue < (SELECT max(issue) FROM runs n WHERE n.farm_id = r.farm_id)
        ORDER BY farm_id COLLATE "C", issue`;
      if (dryRun) {
        const rows = await read<{ farm_id: string; issue: string }>(select, [before]);
        return rows.map((r) => ({ farmId: r.farm_id, issue: r.issue }));
      }
      const removed = await transaction(primary, async (c) => {
        const rows = (await c.query<{ farm_id: string; issue: string }>(`${select} FOR UPDATE`, [before])).rows;
        if (rows.length === 0) return rows;
        const revision = await nextRevision(c);
        await c.query(
          `WITH gone AS (
             DELETE FROM runs WHERE (farm_id, issue) IN (SELECT * FROM unnest($1::text[], $2::text[])) RETURNING farm_id, issue
           )
           INSERT INTO removed_runs (farm_id, issue, revision) SELECT farm_id, issue, $3 FROM gone`,
          [rows.map((r) => r.farm_id), rows.map((r) => r.issue), revision],
        );
        await c.query('SELECT pg_notify($1, $2)', [CHANNEL, String(revision)]);
        return rows;
      });
      // A commit like any other: this handle's token moves at once, so a reader that syncs right after the
      // prune reads the removals, rather than waiting for its own NOTIFY to come back over the listener.
      if (removed.length > 0) committed();
      return removed.map((r) => ({ farmId: r.farm_id, issue: r.issue }));
    },

    // The log is read where runs are read (the replica, if any): a reader that has an entry can read its run.
    async eventsAfter(afterId, limit) {
      checkEventPage(afterId, limit);
      const rows = await read<EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE id > $1 ORDER BY id LIMIT $2`, [afterId, limit]);
      return rows.map(toEventEntry);
    },

    // pruneEvents never removes the newest entry, so max(id) is the highest id ever given.
    async eventBounds() {
      const rows = await read<{ first: string | null; last: string | null }>('SELECT min(id) AS first, max(id) AS last FROM events');
      return toEventBounds(rows[0]);
    },

    // A commit like others: NOTIFY tells every process (their listeners run and their tokens move), but no
    // revision is taken, so the run caches find nothing to re-read.
    async appendTick(at) {
      checkTime('a tick', at);
      const id = await transaction(primary, async (c) => {
        await lockEvents(c);
        const r = await c.query<{ id: string }>(
          `INSERT INTO events (kind, at) VALUES ('tick', $1) ON CONFLICT (at) WHERE kind = 'tick' DO NOTHING RETURNING id`,
          [at],
        );
        const row = r.rows[0];
        if (row === undefined) return undefined;
        await c.query('SELECT pg_notify($1, $2)', [CHANNEL, `tick ${row.id}`]);
        return Number(row.id);
      });
      if (id !== undefined) committed();
      return id;
    },

    async pruneEvents(before) {
      checkTime('the cutoff', before);
      const r = await transaction(primary, (c) =>
        c.query('DELETE FROM events WHERE at < $1 AND id < (SELECT max(id) FROM events)', [before]),
      );
      return r.rowCount ?? 0;
    },

    // Endpoints, the outbox and marks are read and written on the primary: `webhooks list` right after
    // `webhooks add`, and a claim right after an enqueue, must see them.
    async addWebhook(w, now): Promise<StoredWebhook> {
      checkNewWebhook(w);
      checkTime('now', now);
      return transaction(primary, async (c) => {
        const last = Number((await c.query<{ last: string }>('SELECT coalesce(max(id), 0) AS last FROM events')).rows[0]!.last);
        // A concurrent add of the same name waits for the other to end, then inserts nothing.
        const r = await c.query<WebhookRow>(
          `INSERT INTO webhooks (name, url, secret, farms, created_at, since_event_id) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (name) DO NOTHING RETURNING ${webhookColumns()}`,
          [w.name, w.url, w.secret, webhookFarmsText(w), now, last],
        );
        if (r.rows.length === 0) throw new WebhookNameTakenError(w.name);
        return toStoredWebhook(r.rows[0]!);
      });
    },

    async listWebhooks() {
      const rows = await readFrom<WebhookSummaryRow>(primary, listWebhooksSql('w.name COLLATE "C"'));
      return rows.map(toWebhookSummary);
    },

    async removeWebhook(name) {
      const r = await transaction(primary, (c) => c.query('DELETE FROM webhooks WHERE name = $1', [name]));
      return (r.rowCount ?? 0) > 0;
    },

    // Nothing for an endpoint removed meanwhile.
    async enqueueDelivery(d) {
      checkNewDelivery(d);
      const r = await transaction(primary, (c) =>
        c.query(
          `INSERT INTO webhook_deliveries (webhook_id, msg_id, type, issue, body, created_at, next_attempt_at)
           SELECT id, $2, $3, $4, $5, $6, $6 FROM webhooks WHERE id = $1
           ON CONFLICT (webhook_id, msg_id) DO NOTHING`,
          [d.webhookId, d.msgId, d.type, d.issue, d.body, d.createdAt],
        ),
      );
      return r.rowCount === 1;
    },

    /**
     * The due rows are locked as they are chosen and rows another claimer holds are skipped; a row whose lease
     * another claimer committed meanwhile is re-checked on its new version (its lease now runs) and left out.
     * So two claimers never lease one delivery.
     */
    async claimDeliveries(now, owner, leaseMs, limit): Promise<readonly Delivery[]> {
      checkClaim(now, owner, leaseMs, limit);
      const r = await transaction(primary, (c) =>
        c.query<DeliveryRow>(
          `WITH due AS MATERIALIZED (
             SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
             WHERE ${PENDING} AND d.next_attempt_at <= $1 AND w.disabled_at IS NULL
               AND (d.lease_until IS NULL OR d.lease_until < $1)
             ORDER BY d.created_at, d.id LIMIT $4
             FOR UPDATE OF d SKIP LOCKED
           )
           UPDATE webhook_deliveries d SET lease_owner = $2, lease_until = $3
           FROM due, webhooks w
           WHERE d.id = due.id AND w.id = d.webhook_id
           RETURNING ${DELIVERY_COLUMNS}`,
          [now, owner, now + leaseMs, limit],
        ),
      );
      return r.rows.map(toDelivery).sort(byAge);
    },

    // A late outcome (after its lease ran out and another attempt ended) never undoes a delivery.
    async finishDelivery(id, outcome) {
      const next = checkOutcome(outcome);
      await transaction(primary, async (c) => {
        const r = await c.query<{ webhook_id: string }>(
          `UPDATE webhook_deliveries SET
             attempts = attempts + 1, last_attempt_at = $3, last_detail = $4, lease_owner = NULL, lease_until = NULL,
             delivered_at = CASE WHEN $2::text = 'delivered' THEN coalesce(delivered_at, $3) ELSE delivered_at END,
             next_attempt_at = CASE WHEN $2::text = 'retry' THEN $5::bigint ELSE next_attempt_at END,
             gave_up_at = CASE WHEN $2::text IN ('gave-up', 'gone') AND delivered_at IS NULL THEN coalesce(gave_up_at, $3) ELSE gave_up_at END
           WHERE id = $1 RETURNING webhook_id`,
          [id, outcome.result, outcome.at, outcome.detail, next],
        );
        const row = r.rows[0];
        if (row !== undefined && outcome.result === 'gone') {
          await c.query('UPDATE webhooks SET disabled_at = $1, disabled_reason = $2 WHERE id = $3 AND disabled_at IS NULL', [
            outcome.at,
            GONE_REASON,
            row.webhook_id,
          ]);
        }
      });
    },

    async pruneDeliveries(before) {
      checkTime('the cutoff', before);
      const r = await transaction(primary, (c) =>
        c.query(`DELETE FROM webhook_deliveries d WHERE ${FINISHED} AND ${FINISHED_AT} < $1`, [before]),
      );
      return r.rowCount ?? 0;
    },

    async retryWebhook(name, now) {
      checkTime('now', now);
      return transaction(primary, async (c) => {
        const w = await c.query<{ id: string }>('SELECT id FROM webhooks WHERE name = $1', [name]);
        if (w.rows.length === 0) return undefined;
        const r = await c.query(
          `UPDATE webhook_deliveries d SET next_attempt_at = $2, lease_owner = NULL, lease_until = NULL
           WHERE d.webhook_id = $1 AND ${PENDING}`,
          [w.rows[0]!.id, now],
        );
        return r.rowCount ?? 0;
      });
    },

    async readMark(name) {
      checkMark(name);
      const rows = await readFrom<{ value: string }>(primary, 'SELECT value FROM marks WHERE name = $1', [name]);
      return rows.length === 0 ? 0 : Number(rows[0]!.value);
    },

    async advanceMark(name, value) {
      checkMark(name, value);
      await transaction(primary, (c) =>
        c.query('INSERT INTO marks (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = GREATEST(marks.value, excluded.value)', [
          name,
          value,
        ]),
      );
    },

    async ping() {
      await read('SELECT 1');
    },

    prepareReads() {
      // One connection made now, rather than by the first read; a failure surfaces there instead.
      reader.connect().then(
        (client) => client.release(),
        () => undefined,
      );
    },

    async close() {
      await listener.stop();
      await primary.end().catch(() => undefined);
      if (reader !== primary) await reader.end().catch(() => undefined);
    },
  };
}
