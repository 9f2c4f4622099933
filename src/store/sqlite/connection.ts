/**
 * What every connection to a store file shares, the store's own and its read
 * thread's (runReaderThread.ts): how long it waits for another's lock, how much
 * page cache it keeps, and how it reads a run. Also the store's queries over
 * many runs, whose plans a test checks (connection.test.ts).
 */
import type Database from 'better-sqlite3';
import { RUN_COLUMNS } from '../rows.js';

export function setSharedPragmas(db: Database.Database): void {
  db.pragma('busy_timeout = 10000');
  // 2 MB of page cache, not the library's 16 MB: runs are cached by the read model and file pages by the
  // OS, and a run read touches about five pages that are rarely the ones read before (docs/performance.md,
  // "Where the time goes"), so a larger page cache would mostly raise the resident size.
  db.pragma('cache_size = -2000');
}

/** One run by its key: bound to (farm_id, issue). */
export const GET_RUN_SQL = `SELECT ${RUN_COLUMNS} FROM runs WHERE farm_id = ? AND issue = ?`;

/**
 * The runs written after a revision (bound to it), oldest first. The revision comes from its index (with the
 * rowid) and the row is read only for farm_id and issue: a row's revision lies after its blob, and reading it
 * there walks the blob's overflow pages. While another process delivers runs, every reader asks this every
 * few ms: 76 against 13 µs a call (docs/performance.md).
 */
export const RUNS_SINCE_SQL = `SELECT r.farm_id, r.issue, c.revision
  FROM (SELECT rowid AS id, revision FROM runs WHERE revision > ?) AS c JOIN runs AS r ON r.rowid = c.id
  ORDER BY c.revision`;

/**
 * A run's version at every site holding it (bound to the issue; the second form also to a JSON array of
 * farm_ids), by farm_id, and every run's arrival times (none bound; the second form bound to such an array).
 * All from the index by issue (migration 8), which holds every column they read: from the table, each row's
 * revision and publication times are read past its blob.
 */
export const RUN_VERSIONS_SQL = 'SELECT farm_id, revision, published_at FROM runs WHERE issue = ? ORDER BY farm_id';
export const RUN_VERSIONS_AMONG_SQL = `SELECT farm_id, revision, published_at FROM runs
  WHERE issue = ? AND farm_id IN (SELECT value FROM json_each(?)) ORDER BY farm_id`;
const ARRIVAL_COLUMNS = `issue, count(*) AS farms, min(first_published_at) AS first, max(first_published_at) AS lastFirst,
  max(published_at) AS last`;
export const RUN_ARRIVALS_SQL = `SELECT ${ARRIVAL_COLUMNS} FROM runs GROUP BY issue ORDER BY issue DESC`;
/** Named: left to choose, the planner reads the scope's rows by farm_id, from the table. */
export const RUN_ARRIVALS_AMONG_SQL = `SELECT ${ARRIVAL_COLUMNS}
  FROM runs INDEXED BY runs_by_issue WHERE farm_id IN (SELECT value FROM json_each(?)) GROUP BY issue ORDER BY issue DESC`;
