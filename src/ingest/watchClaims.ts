/**
 * The folders of a watched folder and the names of claims. A file is claimed by
 * renaming it into its watcher's claims folder under a name that is unique per
 * delivery and still tells where it came from:
 * `<token>_<size>_<mtime ms>_<relative path>`, the path with `%` and `/`
 * percent-encoded so that it is one file name.
 */
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';

export interface WatchLayout {
  /** The watched folder, absolute. */
  readonly root: string;
  /** DIR/.forecastd: the watchers' own files. */
  readonly state: string;
  /** DIR/.forecastd/claims: one folder per running watcher, holding the files it has claimed. */
  readonly claims: string;
  /** DIR/.forecastd/tmp: files written before they are renamed into place. */
  readonly tmp: string;
  readonly done: string;
  readonly rejected: string;
}

export function watchLayout(root: string): WatchLayout {
  const state = join(root, '.forecastd');
  return {
    root,
    state,
    claims: join(state, 'claims'),
    tmp: join(state, 'tmp'),
    done: join(root, 'done'),
    rejected: join(root, 'rejected'),
  };
}

export interface Claim {
  /** Where the file was delivered, relative to the watched folder, `/`-separated. */
  readonly path: string;
  readonly size: number;
  /** Whole milliseconds. */
  readonly mtimeMs: number;
}

/** Longest claim name in bytes: file names may have 255, and a few are kept for the watcher's own use. */
const MAX_NAME_BYTES = 240;

const encode = (s: string): string => s.replace(/%/g, '%25').replace(/\//g, '%2F');
const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** The last characters of s whose encoding fits in n bytes, encoded (whole characters and escapes only). */
function encodedTail(s: string, n: number): string {
  const chars = [...s];
  let out = '';
  for (let i = chars.length - 1; i >= 0; i--) {
    const next = encode(chars[i]!) + out;
    if (bytes(next) > n) break;
    out = next;
  }
  return out;
}

/** The file name of a watched path (relative, `/`-separated). */
export const baseName = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

/**
 * A new claim name for a file at `path` (relative, `/`-separated). A path too
 * long for one file name keeps its base name and, for its folders, a hash of
 * them (`~<hash>/name.csv`); a base name too long on its own keeps its end.
 */
export function claimName(path: string, size: number, mtimeMs: number, token = randomBytes(8).toString('hex')): string {
  const head = `${token}_${size}_${Math.trunc(mtimeMs)}_`;
  const room = MAX_NAME_BYTES - bytes(head);
  let rest = encode(path);
  if (bytes(rest) > room) {
    const slash = path.lastIndexOf('/');
    const base = baseName(path);
    const folders = slash < 0 ? '' : `~${createHash('sha256').update(path.slice(0, slash)).digest('hex').slice(0, 16)}%2F`;
    rest = folders + encodedTail(base, room - folders.length);
  }
  return head + rest;
}

/** What a claim name tells; undefined for a name that is not one. */
export function parseClaimName(name: string): Claim | undefined {
  // s: a delivered name may hold a line break, which `.` would not match.
  const m = /^[0-9a-f]+_(\d+)_(\d+)_(.+)$/s.exec(name);
  if (m === null) return undefined;
  let path: string;
  try {
    path = decodeURIComponent(m[3]!);
  } catch {
    return undefined;
  }
  return { path, size: Number(m[1]), mtimeMs: Number(m[2]) };
}
