/**
 * Watchers of one folder, in one or several processes on one or several hosts.
 * Each running watcher owns a folder DIR/.forecastd/claims/<id>/ holding the
 * files it has claimed and a heartbeat file `.alive` (JSON: host, process id,
 * process start, a beat count rewritten every few seconds).
 *
 * A watcher whose process is gone leaves its folder behind; another watcher (or
 * the same one started again) finishes its claims. An owner is judged gone when
 * its `.alive` is missing, when it ran on this host (same host name, boot and
 * process namespace) and its process no longer exists, or when its beat has not
 * changed for the lease (measured on this host's clock, so hosts need no common
 * clock). A wrong judgement costs work, not correctness: claims move only by
 * rename, the store records each claim once, and the one who holds the claim
 * last finishes it.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { WatchLayout } from './watchClaims.js';

export const ALIVE = '.alive';

interface Beat {
  readonly host: string;
  readonly pid: number;
  /** The process's start time as the OS counts it (Linux: clock ticks since boot); null where unknown. */
  readonly start: string | null;
  readonly beat: number;
}

/** This host as far as process ids mean the same: host name, and on Linux its boot and process namespace. */
function hostKey(): string {
  let key = hostname();
  try {
    key += `/${readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()}/${readlinkSync('/proc/self/ns/pid')}`;
  } catch {
    // No /proc: the host name alone.
  }
  return key;
}

/**
 * The start time of a live process (Linux), null when alive but /proc says
 * nothing, undefined when there is no such live process (also a zombie).
 */
function processStart(pid: number): string | null | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the command name: state is field 3 (index 0 here), starttime field 22 (index 19).
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    return fields[19] ?? null;
  } catch {
    try {
      process.kill(pid, 0);
      return null;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EPERM' ? null : undefined;
    }
  }
}

const HOST = hostKey();

const isMissing = (err: unknown): boolean => ['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '');

/** Writes a file under tmp and renames it into place, so that readers see the old or the new content. */
export async function writeAtomically(layout: WatchLayout, tmpPrefix: string, path: string, text: string): Promise<void> {
  const tmp = join(layout.tmp, `${tmpPrefix}.${randomBytes(6).toString('hex')}`);
  await writeFile(tmp, text);
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** This process's watcher: its claims folder and heartbeat. */
export class Owner {
  private beats = 0;

  private constructor(
    private readonly layout: WatchLayout,
    readonly id: string,
  ) {}

  /** The claims folder, created whole (with its heartbeat) by one rename, so that nobody sees it half made. */
  get dir(): string {
    return join(this.layout.claims, this.id);
  }

  static async start(layout: WatchLayout): Promise<Owner> {
    await mkdir(layout.claims, { recursive: true });
    await mkdir(layout.tmp, { recursive: true });
    const owner = new Owner(layout, `${process.pid}-${randomBytes(6).toString('hex')}`);
    await owner.create();
    return owner;
  }

  private beatText(): string {
    const b: Beat = { host: HOST, pid: process.pid, start: processStart(process.pid) ?? null, beat: this.beats++ };
    return JSON.stringify(b) + '\n';
  }

  private async create(): Promise<void> {
    const fresh = join(this.layout.tmp, `${this.id}.dir`);
    await rm(fresh, { recursive: true, force: true });
    await mkdir(fresh);
    await writeFile(join(fresh, ALIVE), this.beatText());
    await rename(fresh, this.dir);
  }

  /** Rewrites the heartbeat; makes the folder again if another watcher took it for gone. */
  async beat(): Promise<void> {
    try {
      await writeAtomically(this.layout, this.id, join(this.dir, ALIVE), this.beatText());
    } catch (err) {
      if (!isMissing(err)) throw err;
      await this.create();
    }
  }

  /** On a clean stop: the heartbeat goes, and the folder with it when it is empty (else others finish what is left). */
  async release(): Promise<void> {
    await rm(join(this.dir, ALIVE), { force: true });
    await rmdir(this.dir).catch(() => undefined);
  }
}

/** Judges the other watchers of a folder, remembering when each one's beat last changed. */
export class Peers {
  private readonly seen = new Map<string, { beat: string; since: number }>();

  constructor(
    private readonly layout: WatchLayout,
    private readonly selfId: string,
    private readonly leaseMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Ids of the claims folders whose owners are gone. */
  async gone(): Promise<string[]> {
    let ids: string[];
    try {
      ids = (await readdir(this.layout.claims, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
    } catch (err) {
      if (isMissing(err)) return [];
      throw err;
    }
    const present = new Set(ids);
    for (const id of this.seen.keys()) if (!present.has(id)) this.seen.delete(id);
    const gone: string[] = [];
    for (const id of ids) {
      if (id === this.selfId) continue;
      if (await this.isGone(id)) gone.push(id);
    }
    return gone;
  }

  private async isGone(id: string): Promise<boolean> {
    let text: string;
    try {
      text = await readFile(join(this.layout.claims, id, ALIVE), 'utf8');
    } catch (err) {
      if (isMissing(err)) return true;
      throw err;
    }
    let beat: Beat | undefined;
    try {
      beat = JSON.parse(text) as Beat;
    } catch {
      beat = undefined;
    }
    if (beat !== undefined && beat.host === HOST && typeof beat.pid === 'number') {
      const start = processStart(beat.pid);
      if (start === undefined || (start !== null && beat.start !== null && start !== beat.start)) return true;
    }
    const now = this.now();
    const last = this.seen.get(id);
    if (last === undefined || last.beat !== text) {
      this.seen.set(id, { beat: text, since: now });
      return false;
    }
    return now - last.since > this.leaseMs;
  }

  /**
   * Takes over a gone owner's claims: each is renamed into `into` (exactly one
   * watcher's rename succeeds); then its heartbeat, temporary files and folder go.
   * Returns the claim names taken.
   */
  async takeOver(id: string, into: string): Promise<string[]> {
    const from = join(this.layout.claims, id);
    const taken: string[] = [];
    let names: string[];
    try {
      names = await readdir(from);
    } catch (err) {
      if (isMissing(err)) return taken;
      throw err;
    }
    for (const name of names) {
      if (name.startsWith('.')) continue;
      try {
        await rename(join(from, name), join(into, name));
        taken.push(name);
      } catch (err) {
        if (!isMissing(err)) throw err;
      }
    }
    await rm(join(from, ALIVE), { force: true });
    await rmdir(from).catch(() => undefined);
    this.seen.delete(id);
    for (const name of await readdir(this.layout.tmp).catch(() => [] as string[])) {
      if (name.startsWith(`${id}.`)) await rm(join(this.layout.tmp, name), { recursive: true, force: true });
    }
    return taken;
  }
}
