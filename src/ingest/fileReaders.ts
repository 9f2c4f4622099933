/**
 * Threads that read, validate and encode run files (prepareRunFile) while the
 * ingesting thread commits the files before them to the store.
 *
 * Reading a file's rows and encoding its series are four fifths of ingest's
 * work and need no store; the commits need one connection and must keep the
 * files' order (a later file of the same run replaces an earlier one). So the
 * files are prepared on these threads, a few ahead, and committed one at a
 * time in order on the store's thread, each in a transaction of its own as
 * before: a file is still taken whole or not at all.
 */
import { Worker } from 'node:worker_threads';
import type { PrepareOptions, PreparedFile } from './preparedFile.js';

/** What a thread is sent. */
export interface FileJob {
  readonly id: number;
  readonly file: string;
  readonly options: PrepareOptions;
}

/** What a thread answers: the prepared file, or why preparing it failed (not a fault of the file: a bug). */
export type FileReply = { readonly id: number; readonly prepared: PreparedFile } | { readonly id: number; readonly error: string };

interface Job {
  readonly resolve: (p: PreparedFile) => void;
  readonly reject: (err: Error) => void;
}

interface Lane {
  readonly worker: Worker;
  /** Jobs sent and not yet answered. */
  outstanding: number;
}

export class FileReaders {
  private readonly lanes: Lane[] = [];
  private readonly jobs = new Map<number, Job>();
  private nextId = 0;
  private failure: Error | undefined;

  constructor(threads: number) {
    for (let i = 0; i < threads; i++) {
      const worker = new Worker(new URL('./fileReaderThread.js', import.meta.url));
      worker.unref();
      const lane: Lane = { worker, outstanding: 0 };
      worker.on('message', (reply: FileReply) => this.received(lane, reply));
      worker.on('error', (err: unknown) => this.fail(new Error(`a file reading thread failed: ${err instanceof Error ? err.message : String(err)}`)));
      worker.on('exit', (code) => this.fail(new Error(`a file reading thread stopped (exit code ${code})`)));
      this.lanes.push(lane);
    }
  }

  /** Prepares a file on the thread with the fewest files in hand. */
  prepare(file: string, options: PrepareOptions = {}): Promise<PreparedFile> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    let lane = this.lanes[0]!;
    for (const l of this.lanes) if (l.outstanding < lane.outstanding) lane = l;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.jobs.set(id, { resolve, reject });
      lane.outstanding++;
      // Only while files are in hand does a thread keep the process alive (a watcher's stay while it waits).
      if (lane.outstanding === 1) lane.worker.ref();
      lane.worker.postMessage({ id, file, options } satisfies FileJob);
    });
  }

  private received(lane: Lane, reply: FileReply): void {
    const job = this.jobs.get(reply.id);
    if (job === undefined) return;
    this.jobs.delete(reply.id);
    if (--lane.outstanding === 0) lane.worker.unref();
    if ('error' in reply) job.reject(new Error(reply.error));
    else job.resolve(reply.prepared);
  }

  /** A thread failed or stopped: every file in hand fails with err, and so does every later one. */
  private fail(err: Error): void {
    this.failure ??= err;
    for (const job of this.jobs.values()) job.reject(this.failure);
    this.jobs.clear();
  }

  async close(): Promise<void> {
    this.fail(new Error('the file reading threads are closed'));
    await Promise.all(this.lanes.map((l) => l.worker.terminate()));
  }
}
