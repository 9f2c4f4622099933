/**
 * What every connection to a store file shares, the store's own and its read
 * thread's (runReaderThread.ts): how long it waits for another's lock, how much
 * page cache it keeps, and how it reads a run.
 */
import type Database from 'better-sqlite3';
import { RUN_COLUMNS } from '../rows.js';

export function setSharedPragmas(db: Database.Database): void {
  db.pragma('busy_timeout = 10000');
  // 2 MB of page cache, not the library's 16 MB: runs are cached decoded by the read model and file pages
  // by the OS; a larger page cache made run reads no faster (bench notes in docs/performance.md) and only
  // raised the resident size.
  db.pragma('cache_size = -2000');
}

/** One run by its key: bound to (farm_id, issue). */
export const GET_RUN_SQL = `SELECT ${RUN_COLUMNS} FROM runs WHERE farm_id = ? AND issue = ?`;
