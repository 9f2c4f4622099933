/**
 * Moves a finished claim to where it ends: DIR/done/<yyyy-mm-dd>/NAME (the UTC
 * date the store recorded it) or DIR/rejected/NAME with NAME.error.txt beside it.
 * NAME is the delivered name, or NAME-1, NAME-2 … (before the extension) when
 * that is taken.
 *
 * The move is a hard link to the free name (which fails when the name exists,
 * so two watchers never take one name) and then the claim's removal. Killed in
 * between, the claim is still there and linked: the next attempt finds the name
 * it was linked to (same device and inode) instead of linking it again. So the
 * file leaves the claims folder only once it is whole in its place.
 */
import { link, lstat, mkdir, opendir, unlink } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { IngestedFile } from '../store/store.js';
import { baseName, type WatchLayout } from './watchClaims.js';
import { writeAtomically } from './watchOwners.js';

/** The folder a recorded file ends in. */
export function placeFolder(layout: WatchLayout, rec: Pick<IngestedFile, 'result' | 'at'>): string {
  return rec.result === 'taken' ? join(layout.done, new Date(rec.at).toISOString().slice(0, 10)) : layout.rejected;
}

/** NAME, or NAME-k with the suffix before the extension. */
function nameWith(base: string, k: number): string {
  if (k === 0) return base;
  const ext = extname(base);
  return `${base.slice(0, base.length - ext.length)}-${k}${ext}`;
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The name in folder that is the same file as the claim (a link made before a crash), if any. */
async function linkedName(folder: string, base: string, claim: { dev: number; ino: number }): Promise<string | undefined> {
  const ext = extname(base);
  const pattern = new RegExp(`^${escapeRe(base.slice(0, base.length - ext.length))}(-\\d+)?${escapeRe(ext)}$`);
  let dir;
  try {
    dir = await opendir(folder);
  } catch {
    return undefined;
  }
  for await (const e of dir) {
    if (!pattern.test(e.name)) continue;
    const st = await lstat(join(folder, e.name)).catch(() => undefined);
    // Leaving the loop closes the folder.
    if (st !== undefined && st.dev === claim.dev && st.ino === claim.ino) return e.name;
  }
  return undefined;
}

/** Links the claim under the first free name in folder; returns that name. */
async function linkFree(claimPath: string, folder: string, base: string): Promise<string> {
  for (let k = 0; ; k++) {
    const name = nameWith(base, k);
    try {
      await link(claimPath, join(folder, name));
      return name;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

/** Folders of done/ and rejected/ made by this process: made once, not asked of the disk for every file. */
const madeFolders = new Set<string>();

/**
 * Moves the claim to its place; returns the path it ends at, relative to the
 * watched folder, or undefined when the claim is no longer there (another
 * watcher took it over and finishes it). `maybeLinked`: the claim may have been
 * linked into place before (it was recorded before this attempt).
 */
export async function placeClaim(
  layout: WatchLayout,
  owner: string,
  claimPath: string,
  rec: Pick<IngestedFile, 'result' | 'at' | 'path' | 'message'>,
  maybeLinked: boolean,
): Promise<string | undefined> {
  let st;
  try {
    // The claim itself (a delivered symbolic link is moved as the link): the inode its links into place share.
    st = await lstat(claimPath);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const folder = placeFolder(layout, rec);
  const base = baseName(rec.path);
  if (!madeFolders.has(folder)) {
    await mkdir(folder, { recursive: true });
    madeFolders.add(folder);
  }
  let name = maybeLinked && st.nlink > 1 ? await linkedName(folder, base, st) : undefined;
  for (let attempt = 0; name === undefined; attempt++) {
    try {
      name = await linkFree(claimPath, folder, base);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      // The claim went (taken over), or the folder did (removed by hand since it was made): make it and try once more.
      madeFolders.delete(folder);
      if (attempt > 0) return undefined;
      await mkdir(folder, { recursive: true });
    }
  }
  const target = join(folder, name);
  if (rec.result === 'rejected') await writeAtomically(layout, owner, `${target}.error.txt`, `${rec.message}\n`);
  await unlink(claimPath).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
  return target.slice(layout.root.length + 1).split('\\').join('/');
}
