/**
 * The thread behind RunReader (runReader.ts): its own connection to the store
 * file, reading the runs it is sent in batches, each batch in one read
 * transaction (one WAL read lock for the batch, and every run of it from the
 * same snapshot). A blob goes back as a transferred buffer, not a copy.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { GET_RUN_SQL, setSharedPragmas } from './connection.js';
import type { ReadBatch, ReadReply } from './runReader.js';

function open(path: string): Database.Database {
  try {
    const db = new Database(path, { fileMustExist: true });
    setSharedPragmas(db);
    return db;
  } catch (err) {
    // Thrown to the parent as a plain Error: the library's error class reaches it without its message.
    throw new Error(`cannot open ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

const port = parentPort!;
const db = open((workerData as { path: string }).path);
/** A row as an array in RUN_COLUMNS order (series, revision, published_at): no object per row here either. */
type RawRun = [Uint8Array, number, number];
const get = db.prepare<[string, string], RawRun>(GET_RUN_SQL).raw(true);

type Columns = Exclude<ReadReply, { readonly error: string }>;

const readAll = db.transaction((batch: ReadBatch): Columns => {
  // Filled by push: an array with holes would be sent as a sparse one, key by key.
  const series: (Uint8Array | null)[] = [];
  const revision: number[] = [];
  const publishedAt: number[] = [];
  for (let i = 0; i < batch.farms.length; i++) {
    const row = get.get(batch.farms[i]!, batch.issues[i]!);
    series.push(row === undefined ? null : row[0]);
    revision.push(row === undefined ? 0 : row[1]);
    publishedAt.push(row === undefined ? 0 : row[2]);
  }
  return { series, revision, publishedAt };
});

port.on('message', (batch: ReadBatch) => {
  let reply: ReadReply;
  const transfer: ArrayBuffer[] = [];
  try {
    const columns = readAll(batch);
    for (const blob of columns.series) {
      // A blob the library copied into a buffer of its own is handed over; anything sharing memory is copied.
      if (blob !== null && blob.byteOffset === 0 && blob.buffer.byteLength === blob.length) transfer.push(blob.buffer as ArrayBuffer);
    }
    reply = columns;
  } catch (err) {
    reply = { error: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(reply, transfer);
});
