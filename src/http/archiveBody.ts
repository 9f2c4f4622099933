/**
 * The body of a bulk download: one zip entry per planned site, each the site's CSV download rendered by the
 * same writer as `format=csv`, stored (not compressed: CSV streams out at hundreds of MB/s this way, where
 * deflate would hold it under a hundred; HTTP clients that want it smaller can ask the transport). Each
 * entry is made whole before its header is written, so its size and CRC-32 are in the header and no data
 * descriptor is needed; the stream pulls the next site only when the client has taken the last.
 *
 * An entry is the same bytes as the site's single download, so it is kept as that download's rendered answer
 * (a copy on local disk, http/bodyCache.ts) and found there by the next archive of the run: the first
 * customer's archive renders, the next ones read. Rendering is most of an archive's cost.
 */
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { ByteSink } from '../domain/byteSink.js';
import { csvFileName, writeCsv } from '../domain/csvFormat.js';
import { windowRecords } from '../domain/window.js';
import { centralDirectory, localHeader, type ZipEntry } from '../domain/zipFormat.js';
import type { ArchivePlan } from '../query/archivePlan.js';
import type { Farm, RunVersion, Store, StoredRun } from '../store/store.js';
import type { EntryCopy } from './bodyCache.js';
import { BodyKey } from './bodyKey.js';

/**
 * Runs read ahead of the entry being rendered. A read waits for the store (SQLite's read thread, and the
 * disk when the store's pages are not in memory; PostgreSQL's round trip), and rendering the entries before
 * it is the time to wait in; the reads asked for in one turn also go to the store together.
 */
export const READ_AHEAD = 4;

/** Where an archive finds and keeps its entries: the rendered answers (BodyCache), keyed as single downloads. */
export interface EntryCopies {
  entry(key: string): EntryCopy | undefined;
  keepEntry(key: string, bytes: Buffer, crc32: number): void;
  /** The site record a single download's key is made from (the read model's). */
  farm(farmId: string): Farm | undefined;
}

export function archiveBody(store: Store, plan: ArchivePlan, copies?: EntryCopies): Readable {
  return Readable.from(entries(store, plan, copies), { objectMode: false, highWaterMark: 1024 * 1024 });
}

/** An entry's run as read, and what is known of its bytes before rendering. */
interface Source {
  readonly run: StoredRun | undefined;
  readonly from?: number;
  readonly to?: number;
  /** Its single download's body key, when copies are kept. */
  readonly key?: string;
  readonly copy?: EntryCopy;
}

async function* entries(store: Store, plan: ArchivePlan, copies: EntryCopies | undefined): AsyncGenerator<Buffer> {
  const written: (ZipEntry & { offset: number })[] = [];
  const sink = new ByteSink(512 * 1024);
  let offset = 0;
  // Cleared once a kept entry came from the disk (the ring tells a disk read from a pause of the process):
  // from a virtual machine's disk a whole-run file takes longer to read than to render, so the rest are
  // rendered, and not kept either.
  let useCopies = copies !== undefined;

  // Read from the store, not the read model: a download of every site would push the hot runs out of its cache.
  const source = async (version: RunVersion): Promise<Source> => {
    const run = await store.getRun(version.farmId, plan.issue);
    // Removed by retention since the plan was made: the archive holds what exists as it is written.
    if (run === undefined) return { run };
    const { from, to } = windowRecords(run.view.steps, plan.issueMs, plan.window);
    const farm = useCopies ? copies!.farm(version.farmId) : undefined;
    if (farm === undefined) return { run, from, to };
    const key = new BodyKey({ farm, run, issueMs: plan.issueMs, elements: plan.elements, from, to }, true, 0, 0).text;
    const copy = copies!.entry(key);
    if (copy?.slow === true) useCopies = false;
    return { run, from, to, key, copy };
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
  for (let i = 0; i < READ_AHEAD; i++) readNext();
  for (const version of plan.runs) {
    const { run, from, to, key, copy } = await sources.shift()!;
    readNext();
    if (run === undefined) continue;
    let data: Buffer;
    let crc: number;
    if (copy !== undefined) {
      data = copy.bytes;
      crc = copy.crc32 ?? crc32(data);
    } else {
      writeCsv(sink.reset(), run.view, plan.issueMs, plan.elements, from, to);
      // A copy: the sink is reused for the next entry while this one may still wait in the socket's queue.
      data = Buffer.from(sink.buf.subarray(0, sink.len));
      crc = crc32(data);
      if (key !== undefined && useCopies) copies!.keepEntry(key, data, crc);
    }
    const entry = { name: csvFileName(version.farmId, plan.issue), crc32: crc, size: data.length, mtimeMs: run.publishedAt, offset };
    const header = localHeader(entry);
    written.push(entry);
    offset += header.length + data.length;
    yield header;
    yield data;
  }
  yield centralDirectory(written, offset);
}
