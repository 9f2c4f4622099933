/**
 * The thread behind RunReader (runReader.ts): its own connection to the store
 * file, reading the runs it is sent in batches, each batch in one read
 * transaction (one WAL read lock for the batch, and every run of it from the
 * same snapshot). A blob goes back as a transferred buffer, not a copy.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { RunRow } from '../rows.js';
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
const get = db.prepare<[string, string], RunRow>(GET_RUN_SQL);
const readAll = db.transaction((batch: ReadBatch) => batch.farms.map((farmId, i) => get.get(farmId, batch.issues[i]!) ?? null));

port.on('message', (batch: ReadBatch) => {
  let reply: ReadReply;
  const transfer: ArrayBuffer[] = [];
  try {
    const rows = readAll(batch);
    for (const r of rows) {
      // A blob the library copied into a buffer of its own is handed over; anything sharing memory is copied.
      if (r !== null && r.series.byteOffset === 0 && r.series.buffer.byteLength === r.series.length) transfer.push(r.series.buffer as ArrayBuffer);
    }
    reply = { rows };
  } catch (err) {
    reply = { error: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(reply, transfer);
});
