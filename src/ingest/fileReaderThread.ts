/**
 * A thread of FileReaders (fileReaders.ts): prepares the files it is sent, in
 * the order sent, and answers each with its prepared run (the blob handed over,
 * not copied) or its fault.
 */
import { parentPort } from 'node:worker_threads';
import type { FileJob, FileReply } from './fileReaders.js';
import { prepareRunFile } from './preparedFile.js';

const port = parentPort!;

port.on('message', (job: FileJob) => {
  let reply: FileReply;
  const transfer: ArrayBuffer[] = [];
  try {
    const prepared = prepareRunFile(job.file, job.options);
    if (prepared.ok) {
      const blob = prepared.series.blob;
      if (blob.byteOffset === 0 && blob.buffer.byteLength === blob.length) transfer.push(blob.buffer as ArrayBuffer);
    }
    reply = { id: job.id, prepared };
  } catch (err) {
    reply = { id: job.id, error: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(reply, transfer);
});
