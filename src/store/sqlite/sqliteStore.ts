/** The embedded store: one SQLite file in WAL mode (better-sqlite3). */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { encodeSeries, openSeries } from '../../domain/codec.js';
import {
  UnknownFarmError,
  type Box,
  type Farm,
  type IssueSummary,
  type Page,
  type Publication,
  type Store,
  type StoredRun,
} from '../store.js';
import { extraText, FARM_COLUMNS, RUN_COLUMNS, toEncodedRun, toFarm, toStoredRun, type FarmRow, type RunRow } from '../rows.js';
import { MIGRATIONS } from './migrations.js';

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
  db.pragma('busy_timeout = 10000');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  // 2 MB of page cache, not the library's 16 MB: runs are cached decoded by the read model and file pages
  // by the OS; a larger page cache made run reads no faster (bench notes in docs/performance.md) and only
  // raised the resident size.
  db.pragma('cache_size = -2000');
  migrate(db);

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
    runsSince: db.prepare<[number], { farm_id: string; issue: string; revision: number }>(
      'SELECT farm_id, issue, revision FROM runs WHERE revision > ? ORDER BY revision',
    ),
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
      `INSERT INTO runs (farm_id, issue, records, series, revision, published_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (farm_id, issue) DO UPDATE SET records = excluded.records, series = excluded.series,
         revision = excluded.revision, published_at = excluded.published_at`,
    ),
    getRun: db.prepare<[string, string], RunRow>(
      `SELECT ${RUN_COLUMNS} FROM runs WHERE farm_id = ? AND issue = ?`,
    ),
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
    ping: db.prepare('SELECT 1'),
    countRuns: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM runs'),
    exportFirst: db.prepare<[number], RunRow & { farm_id: string; issue: string }>(
      `SELECT farm_id, issue, ${RUN_COLUMNS} FROM runs ORDER BY farm_id, issue LIMIT ?`,
    ),
    exportAfter: db.prepare<[string, string, number], RunRow & { farm_id: string; issue: string }>(
      `SELECT farm_id, issue, ${RUN_COLUMNS} FROM runs WHERE (farm_id, issue) > (?, ?) ORDER BY farm_id, issue LIMIT ?`,
    ),
  };

  const upsertFarms = db.transaction((farms: readonly Farm[], now: number) => {
    const revision = q.nextRevision.get()!.value;
    for (const f of farms) {
      q.upsertFarm.run(f.farmId, f.lat, f.lon, f.name, extraText(f), now, revision);
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
    runs: q.runsSince.all(since).map((r) => ({ farmId: r.farm_id, issue: r.issue, revision: r.revision })),
  }));

  const putRun = db.transaction((farmId: string, issue: string, blob: Uint8Array, records: number, at: number): Publication => {
    if (q.getFarm.get(farmId) === undefined) throw new UnknownFarmError(farmId);
    const revision = q.nextRevision.get()!.value;
    q.putRun.run(farmId, issue, records, blob, revision, at);
    return { revision, publishedAt: at };
  });

  return {
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
    async putRun(run) {
      const blob = encodeSeries(run.series);
      const pub = putRun.immediate(run.farmId, run.issue, blob, run.series.steps.length, Date.now());
      committed();
      return pub;
    },
    async importRun(run) {
      const records = openSeries(run.blob).length; // also proves the blob decodes
      const pub = putRun.immediate(run.farmId, run.issue, run.blob, records, run.publishedAt);
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
      const row = q.getRun.get(farmId, issue);
      return row && toStoredRun(farmId, issue, row);
    },
    async latestIssue(farmId) {
      return q.latestIssue.get(farmId)?.issue;
    },
    async listIssues(farmId, offset, limit): Promise<Page<IssueSummary>> {
      if (farmId === undefined) {
        return { total: q.countIssues.get()!.n, items: q.listIssues.all(limit, offset) };
      }
      return { total: q.countFarmIssues.get(farmId)!.n, items: q.listFarmIssues.all(farmId, limit, offset) };
    },
    // Other processes' commits are only seen by asking; asking costs a few µs, so at most once per ms.
    changePollMs: 1,
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
    async changesSince(since) {
      return changesSince.deferred(since);
    },
    async ping() {
      q.ping.get();
    },
    async close() {
      if (db.open) db.close();
    },
  };
}
