/**
 * A bounded ring of byte records in a file of its own on local disk: the
 * second tier of a cache whose first is memory (runs: query/readModel.ts;
 * rendered answers: http/bodyCache.ts).
 *
 * Why: a run not in memory costs a store query (SQLite: a B-tree walk and an
 * overflow page chain, about 24 µs for a 13.6 KB run; PostgreSQL: a round
 * trip), and the query is made on a thread or a connection whose hand-over
 * costs the event loop as much again; an answer not in memory costs its
 * rendering (about 300 µs for a whole-run CSV file). The same bytes kept
 * contiguous in a file cost one `pread` of about 5 µs from the OS's page cache
 * (15–25 µs for a CSV file), made on the event loop itself (docs/performance.md,
 * "Where the time goes"). The page cache is the OS's memory, shared and
 * reclaimable, not the process's.
 *
 * The file is private and disposable: created in the given folder and unlinked
 * at once, so nothing is left behind by a crash, and nothing in it is ever the
 * only copy. Records are written at a moving pointer; whatever the pointer
 * reaches is forgotten (first in, first out), so the file never grows past its
 * capacity.
 *
 * A read from the page cache is fast, one from the disk is not, and a
 * synchronous read holds the event loop meanwhile. So reads are synchronous
 * while they are fast; one that took longer than `slowReadMs` per 64 KB begun
 * while the process read from a disk (the OS had let the page go) makes the
 * reads of the next `coolMs` go through libuv's threads instead, where a wait
 * for the disk holds only its own answer. A slow read during which nothing was
 * read from a disk was the machine pausing the process (a virtual machine's
 * host does), which the threads would not have avoided.
 *
 * A read from the disk also means the OS has let go of more of the file (a
 * host that pages out idle memory lets go of whole regions): a ring made with
 * `rewarm` then reads its file once from start to end on a libuv thread, 1 MB
 * at a time, at most once a minute (the host's idle age), so that the pages
 * come back at the disk's sequential speed (456 MB/s on the project's virtual
 * machine) rather than a record at a time (9–15 MB/s).
 *
 * A ring made with `prefill` fills its file with zeros 1 MB at a time ahead of the records (PREFILL), so that
 * the OS keeps its pages in folios of 1 MB rather than a page or a few each, and a read finds a record's bytes
 * in one or two folios: a random 14.7 KB record (a run) took 6.0 instead of 6.75 µs to read, a 142 KB one
 * 10.7 instead of 16.2 µs (`npm run bench:ring`). The first pass of writes costs more: the first download
 * of a 10,000-site run's archive, whose entries the rendered answers' ring keeps, took 30 % more CPU with
 * it, so that ring does without (docs/performance.md).
 *
 * Writes are asynchronous (no answer waits for one) and a record becomes
 * readable once its write has completed, except for bytes that do not outlive
 * the call (putNow). An asynchronous read is used only if its record was still
 * in the ring when the read completed: a record is forgotten before any write
 * to its bytes begins.
 */
import { closeSync, openSync, read, readSync, unlinkSync, write, writeSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

export interface DiskRingOptions {
  /** The folder of the file; it must be on a disk, not in memory (a tmpfs would hold the bytes in RAM). */
  readonly dir: string;
  readonly capacityBytes: number;
  /**
   * A synchronous read taking longer than this, ms, per 64 KB begun, sends the reads of the next coolMs to
   * libuv's threads: from the OS's memory a read costs about 0.02 ms per 64 KB into a buffer in use and 0.1
   * ms into a fresh one, from the disk of a virtual machine 4 ms or more.
   */
  readonly slowReadMs?: number;
  readonly coolMs?: number;
  /**
   * The process's count of reads from block devices (default: `process.resourceUsage().fsRead`, which the
   * kernel moves as a read is sent to the disk, on whichever of the process's threads): sampled before a read
   * made at once when the last sample is DISK_READS_EVERY_MS old, and again after a slow read.
   */
  readonly diskReads?: () => number;
  /** Read the whole file back after a read from the disk (default no). */
  readonly rewarm?: boolean;
  /**
   * Zero-fill the file 1 MB ahead of the records (default no; PREFILL): reads cost less, first writes more.
   * For a ring read far more often than written (runs' copies), not one written in bulk (a run's archive).
   */
  readonly prefill?: boolean;
}

/** The file is read back whole at most once in this long, ms. */
const REWARM_EVERY_MS = 60_000;
/** The size of each read of that pass. */
const REWARM_CHUNK = 1 << 20;

/** The bytes a read may take slowReadMs for. */
const SLOW_READ_UNIT = 64 * 1024;
/**
 * How old, ms, the count of disk reads a slow read is compared with may be. Counted once per turn of the event
 * loop (about 360 times a second under mixed load at 10,000 sites, where nearly every turn reads runs'
 * copies), process.resourceUsage() took 35-120 µs a call (getrusage sums every thread of the process; 2.5 µs
 * idle): 1-2 % of the serving thread's time, and 4-5 % of its profile. A disk read by another of the process's
 * threads within this long before a slow read only sends reads to libuv's threads for one coolMs.
 */
const DISK_READS_EVERY_MS = 50;

/**
 * The file is zero-filled this far ahead of the records, in writes of this size at multiples of it: a write
 * of 1 MB has the OS cache the range in large folios, which later writes of records keep.
 */
const PREFILL = 1 << 20;
let zeros: Buffer | undefined;

/** The reads of one turn that land in the slab: about 70 runs of 15 fields. */
const SLAB_BYTES = 1 << 20;

interface Slot<M> {
  readonly key: string;
  readonly offset: number;
  readonly length: number;
  readonly meta: M;
  /** Written and not forgotten: readable. */
  readable: boolean;
  /** Forgotten (overwritten, deleted or cleared): never readable again. */
  gone: boolean;
}

/** What a ring holds and how it was read: for /metrics (forecastd_disk_cache_*) and the tests. */
export interface DiskCacheStats {
  readonly counts: { readonly syncReads: number; readonly asyncReads: number; readonly slowReads: number; readonly errors: number };
  readonly bytes: number;
  readonly capacity: number;
}

/** What get() finds: the bytes and what was kept with them. */
export interface RingRecord<M> {
  readonly bytes: Uint8Array;
  readonly meta: M;
  /** Read at once, but slowly: from the disk, not the OS's memory (reads go through libuv's threads for a while). */
  readonly slow?: boolean;
}

export class DiskRing<M> {
  private fd: number | undefined;
  /** Readable slots by key. */
  private readonly map = new Map<string, Slot<M>>();
  /** Slots whose write has not completed, by key: delete() must reach them too. */
  private readonly pending = new Map<string, Slot<M>>();
  /** Reads and writes under way on libuv's threads: the file is closed only once there are none. */
  private io = 0;
  /** Called once no read or write is under way (settled(), close()). */
  private idle: (() => void)[] = [];
  /** Slots in write order, oldest first, from `head`: that is address order, cyclically, from the pointer. */
  private queue: Slot<M>[] = [];
  private head = 0;
  private pointer = 0;
  private coolUntil = -Infinity;
  private readonly slowReadMs: number;
  private readonly coolMs: number;
  private readonly diskReads: () => number;
  /** diskReads() at diskReadsAt (performance.now()): the count a slow read is compared with. */
  private diskReadsSeen = 0;
  private diskReadsAt = -Infinity;
  readonly capacity: number;
  /** Bytes of the records written and not forgotten. */
  bytes = 0;
  /** Reads by the way they went, and I/O errors (each forgets its record); for the metrics and the tests. */
  readonly counts = { syncReads: 0, asyncReads: 0, slowReads: 0, errors: 0 };
  /** Passes that read the file back whole after a read from the disk, and their bytes (for the tests). */
  readonly rewarms = { passes: 0, bytes: 0 };
  private rewarmStarted = -Infinity;
  private readonly rewarmAfterDiskRead: boolean;
  /** The end of the furthest record written: what a pass reads back. */
  private extent = 0;
  /** The file is zero-filled up to here (PREFILL); infinite for a ring made without prefill. */
  private prefilled: number;

  constructor(options: DiskRingOptions) {
    this.capacity = options.capacityBytes;
    this.slowReadMs = options.slowReadMs ?? 1;
    this.coolMs = options.coolMs ?? 250;
    this.diskReads = options.diskReads ?? (() => process.resourceUsage().fsRead);
    this.rewarmAfterDiskRead = options.rewarm === true;
    this.prefilled = options.prefill === true ? 0 : Infinity;
    const path = join(options.dir, `.forecastd-copies-${process.pid}-${randomBytes(6).toString('hex')}`);
    this.fd = openSync(path, 'wx+', 0o600);
    unlinkSync(path);
  }

  /**
   * Where reads made at once by get() land, handed out until the current turn of the event loop ends and
   * reused from the next: a fresh buffer per read cost a malloc, page faults on its fresh memory, and
   * external memory that V8 answers with collections. Made on first use: readNow() reads into the caller's.
   */
  private slab: Buffer | undefined;
  private slabUsed = 0;
  private turnScheduled = false;
  private readonly nextTurn = (): void => {
    this.slabUsed = 0;
    this.turnScheduled = false;
  };

  /** Resets the slab once this turn ends. */
  private inThisTurn(): void {
    if (!this.turnScheduled) {
      this.turnScheduled = true;
      setImmediate(this.nextTurn);
    }
  }

  /** Records readable now. */
  get size(): number {
    return this.map.size;
  }

  stats(): DiskCacheStats {
    return { counts: this.counts, bytes: this.bytes, capacity: this.capacity };
  }

  /**
   * The record under key: its bytes at once when the read was fast, a promise when reads go through libuv's
   * threads for now, undefined when there is none (or it could not be read: then it is forgotten). Bytes
   * found at once are valid until the current turn of the event loop ends: use them (or copy them) before
   * any I/O wait. Those of a promise are the caller's.
   */
  get(key: string): RingRecord<M> | Promise<RingRecord<M> | undefined> | undefined {
    const slot = this.map.get(key);
    if (slot === undefined || this.fd === undefined) return undefined;
    const now = performance.now();
    return now < this.coolUntil ? this.readLater(slot) : this.readAtOnce(slot, this.scratch(slot.length), now);
  }

  /**
   * The record under key read at once into the buffer `into` gives for its length (the caller's), or undefined:
   * none, it could not be read, or reads go through libuv's threads for now (the caller then does without).
   */
  readNow(key: string, into: (length: number) => Uint8Array): RingRecord<M> | undefined {
    const slot = this.map.get(key);
    if (slot === undefined || this.fd === undefined) return undefined;
    const now = performance.now();
    return now < this.coolUntil ? undefined : this.readAtOnce(slot, into(slot.length), now);
  }

  /** Whether a record under key is readable or being written. */
  has(key: string): boolean {
    return this.map.has(key) || this.pending.has(key);
  }

  /** A synchronous read begun at `started` (performance.now()), timed to tell a read from the page cache from one from the disk. */
  private readAtOnce(slot: Slot<M>, bytes: Uint8Array, started: number): RingRecord<M> | undefined {
    if (started - this.diskReadsAt >= DISK_READS_EVERY_MS) {
      this.diskReadsSeen = this.diskReads();
      this.diskReadsAt = started;
    }
    try {
      if (readSync(this.fd!, bytes, 0, slot.length, slot.offset) !== slot.length) throw new Error('short read');
    } catch {
      this.failed(slot);
      return undefined;
    }
    this.counts.syncReads++;
    const done = performance.now();
    let slow = false;
    if (done - started > this.slowReadMs * Math.ceil(slot.length / SLOW_READ_UNIT)) {
      const diskReads = this.diskReads();
      slow = diskReads !== this.diskReadsSeen;
      this.diskReadsSeen = diskReads;
      this.diskReadsAt = done;
      if (slow) {
        this.counts.slowReads++;
        this.coolUntil = done + this.coolMs;
        if (this.rewarmAfterDiskRead && done - this.rewarmStarted > REWARM_EVERY_MS) this.rewarm(done);
      }
    }
    return { bytes, meta: slot.meta, slow };
  }

  /** Reads the file back from start to end, one chunk at a time on libuv's threads, into one buffer. */
  private rewarm(now: number): void {
    this.rewarmStarted = now;
    this.rewarms.passes++;
    const end = this.extent;
    const chunk = Buffer.allocUnsafeSlow(Math.min(REWARM_CHUNK, Math.max(1, end)));
    // One I/O under way for the whole pass (settled() waits for it); close() ends it after its current chunk.
    this.io++;
    const next = (at: number): void => {
      const fd = this.fd;
      if (fd === undefined || at >= end) return this.ioDone();
      read(fd, chunk, 0, Math.min(chunk.length, end - at), at, (err, n) => {
        if (err !== null || n === 0) return this.ioDone();
        this.rewarms.bytes += n;
        next(at + n);
      });
    };
    next(0);
  }

  /** Room for length bytes in the slab for this turn, or a buffer of their own when the slab is full. */
  private scratch(length: number): Buffer {
    const at = this.slabUsed;
    if (at + length > SLAB_BYTES) return Buffer.allocUnsafeSlow(length);
    this.slab ??= Buffer.allocUnsafeSlow(SLAB_BYTES);
    this.slabUsed = at + ((length + 7) & ~7);
    this.inThisTurn();
    return this.slab.subarray(at, at + length);
  }

  private readLater(slot: Slot<M>): Promise<RingRecord<M> | undefined> {
    const fd = this.fd!;
    this.counts.asyncReads++;
    this.io++;
    return new Promise((resolve) => {
      const bytes = Buffer.allocUnsafeSlow(slot.length);
      read(fd, bytes, 0, slot.length, slot.offset, (err, n) => {
        this.ioDone();
        if (err !== null || n !== slot.length) {
          if (!slot.gone) this.failed(slot);
          resolve(undefined);
        } else resolve(slot.gone ? undefined : { bytes, meta: slot.meta });
      });
    });
  }

  /** Keeps bytes under key (replacing what it held); readable once written. Bytes must not change meanwhile. */
  put(key: string, bytes: Uint8Array, meta: M): void {
    const slot = this.place(key, bytes.length, meta);
    if (slot === undefined) return;
    const length = slot.length;
    this.pending.set(key, slot);
    this.io++;
    write(this.fd!, bytes, 0, length, slot.offset, (err, n) => {
      this.ioDone();
      if (slot.gone) return;
      this.pending.delete(key);
      if (err !== null || n !== length) {
        this.failed(slot);
        return;
      }
      this.readable(slot);
    });
  }

  /**
   * Keeps bytes under key, written before this returns and readable at once: for bytes that will not outlive
   * the call (a body whose memory is handed back as it leaves the memory cache, a bulk download's entry whose
   * buffer the next entry reuses).
   */
  putNow(key: string, bytes: Uint8Array, meta: M): void {
    const slot = this.place(key, bytes.length, meta);
    if (slot === undefined) return;
    try {
      if (writeSync(this.fd!, bytes, 0, slot.length, slot.offset) !== slot.length) throw new Error('short write');
    } catch {
      this.failed(slot);
      return;
    }
    this.readable(slot);
  }

  private readable(slot: Slot<M>): void {
    slot.readable = true;
    this.bytes += slot.length;
    this.map.set(slot.key, slot);
  }

  /** A slot of length bytes at the pointer, the records in its way forgotten; undefined if none is to be kept. */
  private place(key: string, length: number, meta: M): Slot<M> | undefined {
    if (this.fd === undefined || length === 0 || length > this.capacity) return undefined;
    this.delete(key);
    if (this.pointer + length > this.capacity) {
      // The rest of the file up to its end is the oldest part of the ring: forgotten as the pointer wraps.
      while (this.head < this.queue.length && this.queue[this.head]!.offset >= this.pointer) this.forgetHead();
      this.pointer = 0;
    }
    const end = this.pointer + length;
    while (this.head < this.queue.length) {
      const oldest = this.queue[this.head]!;
      if (oldest.offset < this.pointer || oldest.offset >= end) break;
      this.forgetHead();
    }
    const slot: Slot<M> = { key, offset: this.pointer, length, meta, readable: false, gone: false };
    this.pointer = end;
    if (end > this.extent) this.extent = end;
    if (end > this.prefilled) this.prefill(end);
    this.queue.push(slot);
    return slot;
  }

  /**
   * Zero-fills the file from where it was filled to past `end`, PREFILL at a time. The range is beyond every
   * record placed so far, so no write is under way there. On a failure (a full disk) it stops trying: the
   * records' own writes then fail and are forgotten as before.
   */
  private prefill(end: number): void {
    zeros ??= Buffer.alloc(PREFILL);
    try {
      while (this.prefilled < end) {
        const n = Math.min(PREFILL, this.capacity - this.prefilled);
        if (writeSync(this.fd!, zeros, 0, n, this.prefilled) !== n) throw new Error('short write');
        this.prefilled += n;
      }
    } catch {
      this.prefilled = this.capacity;
    }
  }

  /** Forgets the record under key, if any (its bytes are stale). */
  delete(key: string): void {
    const slot = this.map.get(key) ?? this.pending.get(key);
    if (slot !== undefined) this.forget(slot);
  }

  private forgetHead(): void {
    this.forget(this.queue[this.head++]!);
    // Compact now and then rather than shifting on every forget.
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  private forget(slot: Slot<M>): void {
    if (slot.gone) return;
    slot.gone = true;
    if (this.map.get(slot.key) === slot) this.map.delete(slot.key);
    if (this.pending.get(slot.key) === slot) this.pending.delete(slot.key);
    if (slot.readable) this.bytes -= slot.length;
    slot.readable = false;
  }

  private failed(slot: Slot<M>): void {
    this.counts.errors++;
    this.forget(slot);
  }

  private ioDone(): void {
    if (--this.io === 0) for (const done of this.idle.splice(0)) done();
  }

  /** Resolves once no read or write is under way: every record put before is then readable or forgotten. */
  settled(): Promise<void> {
    return this.io === 0 ? Promise.resolve() : new Promise((resolve) => this.idle.push(resolve));
  }

  /**
   * Forgets everything and closes the file (its blocks are freed, as it was unlinked) once no read or write
   * is under way: a descriptor closed under a pending write could be reused by another file meanwhile.
   */
  async close(): Promise<void> {
    for (const slot of this.queue) this.forget(slot);
    this.queue = [];
    this.head = 0;
    const fd = this.fd;
    this.fd = undefined;
    if (fd === undefined) return;
    await this.settled();
    closeSync(fd);
  }
}
