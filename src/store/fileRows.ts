/**
 * How watched-folder file records are laid out in store rows, the same in every
 * adapter, and the checks both make before writing one. Integer columns may
 * arrive as text (PostgreSQL's bigint).
 */
import type { FileRecord, IngestedFile } from './store.js';

export interface FileRow {
  id: number | string;
  claim: string;
  path: string;
  size: number | string;
  mtime: number | string;
  sha256: string;
  result: string;
  message: string;
  farm_id: string | null;
  issue: string | null;
  at: number | string;
}

export const FILE_COLUMNS = 'id, claim, path, size, mtime, sha256, result, message, farm_id, issue, at';

export const toIngestedFile = (r: FileRow): IngestedFile => ({
  id: Number(r.id),
  claim: r.claim,
  path: r.path,
  size: Number(r.size),
  mtimeMs: Number(r.mtime),
  sha256: r.sha256,
  result: r.result === 'taken' ? 'taken' : 'rejected',
  message: r.message,
  farmId: r.farm_id,
  issue: r.issue,
  at: Number(r.at),
});

/** The values of an insert, in FILE_COLUMNS order without id. */
export const fileValues = (f: FileRecord, result: IngestedFile['result'], at: number): unknown[] => [
  f.claim,
  f.path,
  f.size,
  Math.trunc(f.mtimeMs),
  f.sha256,
  result,
  f.message,
  f.farmId,
  f.issue,
  at,
];

/** Refuses a record that would not read back as given. */
export function checkFileRecord(f: FileRecord): void {
  if (typeof f.claim !== 'string' || f.claim === '') throw new Error('a file record needs its claim name');
  if (typeof f.path !== 'string' || f.path === '') throw new Error('a file record needs its path');
  if (!Number.isSafeInteger(f.size) || f.size < 0) throw new Error(`a file's size must be a whole number >= 0, got ${f.size}`);
  if (!Number.isFinite(f.mtimeMs)) throw new Error(`a file's modification time must be epoch ms, got ${f.mtimeMs}`);
  if (!/^[0-9a-f]{64}$/.test(f.sha256)) throw new Error('a file record needs the SHA-256 of its bytes as 64 lowercase hex digits');
}
