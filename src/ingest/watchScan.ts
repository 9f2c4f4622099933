/**
 * Finds the run files of a watched folder that are complete: every `*.csv` in
 * the folder or its subfolders (but `done/`, `rejected/` and folders whose name
 * starts with `.`), except names that start with `.` or end in `.part`, `.tmp`
 * or `.filepart`, whose size and modification time have not changed for the
 * settle time. Folders are read as streams (opendir), one open at a time per
 * level, so a large folder costs neither handles nor a listing in memory.
 */
import type { Dirent } from 'node:fs';
import { opendir, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface Candidate {
  /** Relative to the watched folder, `/`-separated. */
  readonly rel: string;
  readonly abs: string;
  readonly size: number;
  readonly mtimeMs: number;
}

/** Top-level folders the watcher moves files into, never scanned. */
const OWN_FOLDERS = new Set(['done', 'rejected']);
const LEFT_ALONE = /\.(part|tmp|filepart)$/i;
const RUN_FILE = /\.csv$/i;

export const isRunFileName = (name: string): boolean => !name.startsWith('.') && !LEFT_ALONE.test(name) && RUN_FILE.test(name);

const skipsFolder = (name: string, top: boolean): boolean => name.startsWith('.') || (top && OWN_FOLDERS.has(name));

interface Seen {
  size: number;
  mtimeMs: number;
  /** When this size and time were first seen (monotonic ms). */
  since: number;
  /** The scan that last saw it. */
  scan: number;
}

export class SettleTracker {
  private readonly seen = new Map<string, Seen>();
  private scans = 0;

  constructor(
    private readonly settleMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Number of files being watched for completeness (bounded by the files present). */
  get size(): number {
    return this.seen.size;
  }

  /**
   * Walks the folder once: returns the files complete now, in walk order, and
   * when the next file being watched would be complete (monotonic ms; undefined: none).
   */
  async scan(root: string): Promise<{ ready: Candidate[]; nextAt: number | undefined }> {
    const scan = ++this.scans;
    const ready: Candidate[] = [];
    let nextAt: number | undefined;
    const visit = async (rel: string, abs: string): Promise<void> => {
      const st = await stat(abs).catch(() => undefined);
      if (st === undefined || !st.isFile()) return;
      const now = this.now();
      let s = this.seen.get(rel);
      if (s === undefined || s.size !== st.size || s.mtimeMs !== st.mtimeMs) {
        s = { size: st.size, mtimeMs: st.mtimeMs, since: now, scan };
        this.seen.set(rel, s);
      }
      s.scan = scan;
      const at = s.since + this.settleMs;
      if (at <= now) ready.push({ rel, abs, size: st.size, mtimeMs: st.mtimeMs });
      else nextAt = nextAt === undefined ? at : Math.min(nextAt, at);
    };
    const walk = async (relDir: string, absDir: string): Promise<void> => {
      let dir;
      try {
        dir = await opendir(absDir);
      } catch {
        return; // gone or unreadable: the next scan tries again
      }
      const folders: Dirent[] = [];
      for await (const e of dir) {
        const rel = relDir === '' ? e.name : `${relDir}/${e.name}`;
        if (e.isDirectory()) {
          if (!skipsFolder(e.name, relDir === '')) folders.push(e);
        } else if ((e.isFile() || e.isSymbolicLink()) && isRunFileName(e.name)) {
          // A symbolic link is taken as the file it names (visit follows it); the link itself is what moves.
          await visit(rel, join(absDir, e.name));
        }
      }
      // Subfolders after the folder's handle is closed: one handle open at a time.
      for (const e of folders) await walk(relDir === '' ? e.name : `${relDir}/${e.name}`, join(absDir, e.name));
    };
    await walk('', root);
    for (const [rel, s] of this.seen) if (s.scan !== scan) this.seen.delete(rel);
    return { ready, nextAt };
  }

  /** Forgets a file (claimed, or gone). */
  forget(rel: string): void {
    this.seen.delete(rel);
  }
}
