/**
 * The body of a bulk download: one zip entry per planned site, each the site's CSV download rendered by the
 * same writer as `format=csv`, stored (not compressed: CSV streams out at hundreds of MB/s this way, where
 * deflate would hold it under a hundred; HTTP clients that want it smaller can ask the transport). Each
 * entry is rendered whole before its header is written, so its size and CRC-32 are in the header and no
 * data descriptor is needed; the stream pulls the next site only when the client has taken the last.
 */
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { ByteSink } from '../domain/byteSink.js';
import { csvFileName, writeCsv } from '../domain/csvFormat.js';
import { windowRecords } from '../domain/window.js';
import { centralDirectory, localHeader, type ZipEntry } from '../domain/zipFormat.js';
import type { ArchivePlan } from '../query/archivePlan.js';
import type { Store, StoredRun } from '../store/store.js';

/**
 * Runs read ahead of the entry being rendered. A read waits for the store (SQLite's read thread, and the
 * disk when the store's pages are not in memory; PostgreSQL's round trip), and rendering the entries before
 * it is the time to wait in; the reads asked for in one turn also go to the store together.
 */
export const READ_AHEAD = 4;

export function archiveBody(store: Store, plan: ArchivePlan): Readable {
  return Readable.from(entries(store, plan), { objectMode: false, highWaterMark: 1024 * 1024 });
}

async function* entries(store: Store, plan: ArchivePlan): AsyncGenerator<Buffer> {
  const written: (ZipEntry & { offset: number })[] = [];
  const sink = new ByteSink(512 * 1024);
  let offset = 0;
  // Read from the store, not the read model: a download of every site would push the hot runs out of its cache.
  const reads: Promise<StoredRun | undefined>[] = [];
  let asked = 0;
  const readNext = (): void => {
    if (asked >= plan.runs.length) return;
    const read = store.getRun(plan.runs[asked++]!.farmId, plan.issue);
    // Awaited in turn below; until then a failed read must not count as an unhandled rejection.
    read.catch(() => undefined);
    reads.push(read);
  };
  for (let i = 0; i < READ_AHEAD; i++) readNext();
  for (const version of plan.runs) {
    const run = await reads.shift()!;
    readNext();
    // Removed by retention since the plan was made: the archive holds what exists as it is written.
    if (run === undefined) continue;
    const { from, to } = windowRecords(run.view.steps, plan.issueMs, plan.window);
    writeCsv(sink.reset(), run.view, plan.issueMs, plan.elements, from, to);
    // A copy: the sink is reused for the next entry while this one may still wait in the socket's queue.
    const data = Buffer.from(sink.buf.subarray(0, sink.len));
    const entry = { name: csvFileName(version.farmId, plan.issue), crc32: crc32(data), size: data.length, mtimeMs: run.publishedAt, offset };
    const header = localHeader(entry);
    written.push(entry);
    offset += header.length + data.length;
    yield header;
    yield data;
  }
  yield centralDirectory(written, offset);
}
