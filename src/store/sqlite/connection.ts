/**
 * What every connection to a store file shares, the store's own and its read
 * thread's (runReaderThread.ts): how long it waits for another's lock, how much
 * page cache it keeps, and how it reads a run. Also the store's query for the
 * runs changed since a revision, whose plan a test checks (connection.test.ts).
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
