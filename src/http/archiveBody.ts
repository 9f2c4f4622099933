/**
 * The body of a bulk download: one zip entry per planned site, each the site's CSV download rendered by the
 * same writer as `format=csv`, stored (not compressed: CSV streams out at hundreds of MB/s this way, where
 * deflate would hold it under a hundred; HTTP clients that want it smaller can ask the transport). Each
 * entry is made whole before its header is written, so its size and CRC-32 are in the header and no data
 * descriptor is needed; sites are pulled while less than SEND_QUEUE_BYTES wait for the client.
 *
 * An entry is the same bytes as the site's single download, so it is kept as that download's rendered answer
 * (a copy on local disk, http/bodyCache.ts) and found there by the next archive of the run: the first
 * customer's archive renders, the next ones read. Rendering is most of an archive's cost.
 *
 * Each entry's bytes are in a pooled buffer, handed back once the socket has taken them (a copy kept on disk
 * is written before), and reused for a later entry. A fresh buffer per entry made V8 count a run of
 * 10,000 sites (1.4 GB of CSV) as that much new memory outside its heap, and start a full collection for
 * about every 64 MB of it: 19 in one such download, a tenth of its CPU (docs/performance.md).
 */
import type { ServerResponse } from 'node:http';
import { crc32 } from 'node:zlib';
import { ByteSink } from '../domain/byteSink.js';
import { csvFileName, writeCsv } from '../domain/csvFormat.js';
import { windowRecords } from '../domain/window.js';
import { centralDirectory, localHeader, type ZipEntry } from '../domain/zipFormat.js';
import type { ArchivePlan } from '../query/archivePlan.js';
import type { Farm, RunVersion, Store, StoredRun } from '../store/store.js';
import type { EntryCopy } from './bodyCache.js';
import { BodyKey } from './bodyKey.js';
import { BufferPool, type Lease } from './bufferPool.js';

/**
 * Runs read ahead of the entry being rendered, at most. A read waits for the store (SQLite's read thread,
 * and the disk when the store's pages are not in memory; PostgreSQL's round trip), and rendering the entries
 * before it is the time to wait in.
 */
export const READ_AHEAD = 32;
/**
 * Once fewer runs than this are ahead, the rest up to READ_AHEAD are asked for at once: reads asked for
 * together go to the store together (one hand-over to SQLite's read thread and back, one transaction), where
 * topping up one run per entry made a hand-over per site. On a fresh server the first archive of 2,000 sites
 * took 11 % less CPU (docs/performance.md).
 */
export const REFILL_BELOW = 8;

/** Where an archive finds and keeps its entries: the rendered answers (BodyCache), keyed as single downloads. */
export interface EntryCopies {
  /** A kept entry in a pooled buffer of its own, or undefined. */
  entry(key: string): EntryCopy | undefined;
  /** Keeps a copy of an entry before it returns: the bytes may be reused once it has. */
  keepEntry(key: string, bytes: Buffer, crc32: number): void;
  /** The site record a single download's key is made from (the read model's). */
  farm(farmId: string): Farm | undefined;
  /**
   * The run in that revision if the server holds it (the read model's memory or copies on disk), its bytes
   * read into what `into` gives; undefined when it does not (the store is read).
   */
  run(farmId: string, issue: string, revision: number, into: (length: number) => Uint8Array): StoredRun | undefined;
  /** Where rendered entries are leased from: the rendered answers' pool, which entries read back come from. */
  readonly pool: BufferPool;
}

/** A piece of an archive's bytes, and how to hand its memory back once nothing reads it any more. */
export interface ArchivePart {
  readonly bytes: Uint8Array;
  release(): void;
}

const NOTHING = (): void => undefined;

/** An entry's run as read, and its records in the planned window. */
type Source =
  | { readonly run: undefined; readonly runBytes?: undefined }
  | {
      readonly run: StoredRun;
      /** The pooled buffer of a run the server held (EntryCopies.run), handed back once the entry is made. */
      readonly runBytes?: Lease;
      readonly from: number;
      readonly to: number;
    };

/**
 * The archive's bytes in order, part by part: each part must be released once its bytes have been taken
 * (sendArchive). Stopped early, it hands back what it read ahead.
 */
export async function* archiveParts(
  store: Store,
  plan: ArchivePlan,
  copies?: EntryCopies,
  pool: BufferPool = copies?.pool ?? new BufferPool(),
): AsyncGenerator<ArchivePart> {
  const written: (ZipEntry & { offset: number })[] = [];
  const sink = new ByteSink(512 * 1024);
  let offset = 0;
  // Cleared once a kept entry came from the disk (the ring tells a disk read from a pause of the process):
  // from a virtual machine's disk a whole-run file takes longer to read than to render, so the rest are
  // rendered, and not kept either.
  let useCopies = copies !== undefined;

  // The run as the server holds it, in the planned revision, else from the store; never through the read
  // model's caches, which a download of every site would fill with runs single answers do not ask for.
  const source = async (version: RunVersion): Promise<Source> => {
    let runBytes: Lease | undefined;
    const held = copies?.run(version.farmId, plan.issue, version.revision, (length) => (runBytes = pool.lease(length)).bytes);
    if (held === undefined) {
      runBytes?.release();
      runBytes = undefined;
    }
    const run = held ?? (await store.getRun(version.farmId, plan.issue));
    // Removed by retention since the plan was made: the archive holds what exists as it is written.
    if (run === undefined) return { run };
    const { from, to } = windowRecords(run.view.steps, plan.issueMs, plan.window);
    return { run, runBytes, from, to };
  };

  // The entry's kept copy, looked up when its turn comes rather than read ahead: a copy is a whole CSV file
  // in a pooled buffer, where a run read ahead is a tenth of that.
  const keptCopy = (farmId: string, run: StoredRun, from: number, to: number): { key?: string; copy?: EntryCopy } => {
    const farm = useCopies ? copies!.farm(farmId) : undefined;
    if (farm === undefined) return {};
    const key = new BodyKey({ farm, run, issueMs: plan.issueMs, elements: plan.elements, from, to }, true, 0, 0).text;
    const copy = copies!.entry(key);
    if (copy?.slow === true) useCopies = false;
    return { key, copy };
  };

  const sources: Promise<Source>[] = [];
  let asked = 0;
  const readNext = (): void => {
    if (asked >= plan.runs.length) return;
    const read = source(plan.runs[asked++]!);
    // Awaited in turn below; until then a failed read must not count as an unhandled rejection.
    read.catch(() => undefined);
    sources.push(read);
  };
  const topUp = (): void => {
    while (sources.length < READ_AHEAD && asked < plan.runs.length) readNext();
  };
  topUp();
  try {
    for (const version of plan.runs) {
      const source = await sources.shift()!;
      if (sources.length < REFILL_BELOW) topUp();
      if (source.run === undefined) continue;
      const { run, runBytes, from, to } = source;
      const { key, copy } = keptCopy(version.farmId, run, from, to);
      let data: ArchivePart;
      let crc: number;
      if (copy !== undefined) {
        data = copy;
        crc = copy.crc32 ?? crc32(copy.bytes);
      } else {
        writeCsv(sink.reset(), run.view, plan.issueMs, plan.elements, from, to);
        // A copy: the sink is reused for the next entry while this one may still wait in the socket's queue.
        const lease = pool.copyOf(sink.buf.subarray(0, sink.len));
        crc = crc32(lease.bytes);
        if (key !== undefined && useCopies) copies!.keepEntry(key, lease.bytes, crc);
        data = lease;
      }
      runBytes?.release();
      const size = data.bytes.length;
      const entry = { name: csvFileName(version.farmId, plan.issue), crc32: crc, size, mtimeMs: run.publishedAt, offset };
      const header = localHeader(entry);
      written.push(entry);
      offset += header.length + size;
      yield { bytes: header, release: NOTHING };
      yield data;
    }
    yield { bytes: centralDirectory(written, offset), release: NOTHING };
  } finally {
    // Stopped early (the client left, a read failed): the runs read ahead go back to their pool.
    for (const read of sources) {
      read.then((s) => s.runBytes?.release(), NOTHING);
    }
  }
}

/**
 * The parts of an archive whose first was taken ahead (the route makes the first entry before it sends
 * anything). Stopped at any point, even before the rest were asked for, it stops the rest too, which then
 * hands back what it read ahead.
 */
export async function* startingWith(first: IteratorResult<ArchivePart>, rest: AsyncGenerator<ArchivePart>): AsyncGenerator<ArchivePart> {
  try {
    if (first.done === true) return;
    yield first.value;
    yield* rest;
  } finally {
    await rest.return(undefined);
  }
}

/** Resolves once the response may take more, or is closed. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Bytes of an archive queued for the socket before the next part waits for them to be taken. Parts made in
 * one turn go to the kernel in one write, and each write wakes a client that is waiting to read: waiting
 * whenever the stream's 16 KB mark was passed made a write, and a wake-up, per entry (docs/performance.md).
 */
export const SEND_QUEUE_BYTES = 2 * 1024 * 1024;

/**
 * Writes an archive's parts to a response whose head is written, handing each back once the socket has taken
 * it, and waiting whenever SEND_QUEUE_BYTES are queued; then ends the response. A client that leaves stops the
 * archive. Rejects with a part's error: the caller destroys the response, whose client then sees a cut
 * download (the status was sent with the first bytes).
 */
export async function sendArchive(parts: AsyncIterable<ArchivePart>, res: ServerResponse): Promise<void> {
  for await (const part of parts) {
    if (res.destroyed) {
      part.release();
      return;
    }
    // The callback runs once the bytes are in the kernel, or the write failed: either way no longer read.
    // Past the queue's bound a write has returned false, so 'drain' follows once the queue is empty.
    res.write(part.bytes, () => part.release());
    if (res.writableLength >= SEND_QUEUE_BYTES) await drained(res);
  }
  if (!res.destroyed) res.end();
}
