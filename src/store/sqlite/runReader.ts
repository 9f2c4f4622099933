/**
 * Run reads of the SQLite store, made on a thread of their own so that the
 * event loop never waits for the disk.
 *
 * better-sqlite3 reads synchronously. A run whose pages are in the OS's cache
 * takes tens of microseconds, but a page that is not (a store larger than the
 * memory, pages the OS reclaimed while they were idle, a server just started)
 * is read from the disk while every other request waits: on this project's
 * machine, mixed load at 10,000 sites on a store 5 % cached had a p99 of
 * 373-401 ms and answers held up to 928 ms (docs/performance.md, "What each
 * design choice buys"). Here the read thread waits instead, and answers
 * from memory go on meanwhile. One thread: a second, reading another batch
 * while the first waits for the disk, measured no better on that machine.
 *
 * Reads asked for in one turn of the event loop go together, in one message
 * and one read transaction; reads asked for while a batch is out wait for it
 * to come back and then go as the next batch. So a thread hand-over is paid per
 * batch, not per run, and a busy server sends larger batches.
 *
 * The thread starts on the first read, so commands that never read runs start
 * none, and it keeps the process alive only while reads are outstanding.
 */
import { Worker } from 'node:worker_threads';
import type { RunRow } from '../rows.js';

/** What the thread is sent: the runs to read, by position. */
export interface ReadBatch {
  readonly farms: string[];
  readonly issues: string[];
}

/**
 * What the thread answers, by position: each run's blob (null: no such run), revision and publication time;
 * or why the batch failed. Columns, not a row object per run: the message is rebuilt on this side, and a
 * plain object is rebuilt property by property through V8's slow paths, which at 10,000 sites cost the
 * event loop several µs per store read in a profile; arrays of numbers and typed arrays are not
 * (docs/performance.md, "What each design choice buys").
 */
export type ReadReply =
  | { readonly series: (Uint8Array | null)[]; readonly revision: number[]; readonly publishedAt: number[] }
  | { readonly error: string };

interface Read {
  readonly farmId: string;
  readonly issue: string;
  readonly resolve: (row: RunRow | undefined) => void;
  readonly reject: (err: Error) => void;
}

export class RunReader {
  private worker: Worker | undefined;
  private closed = false;
  /** Reads not yet sent. */
  private queued: Read[] = [];
  /** The reads of the batch out, if any (at most one). */
  private out: Read[] | undefined;
  private sendScheduled = false;
  /** Batches sent, and threads started, for the tests and diagnostics. */
  batches = 0;
  starts = 0;

  constructor(private readonly path: string) {}

  read(farmId: string, issue: string): Promise<RunRow | undefined> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    return new Promise((resolve, reject) => {
      this.queued.push({ farmId, issue, resolve, reject });
      if (this.out === undefined && !this.sendScheduled) {
        this.sendScheduled = true;
        // After the turn's I/O callbacks: the reads of every request parsed in this turn go together.
        setImmediate(() => {
          this.sendScheduled = false;
          if (this.out === undefined) this.send();
        });
      }
    });
  }

  /**
   * Starts the thread now, if none runs, rather than on the first read: its start (a JavaScript environment,
   * the SQLite library, the file opened and the statement prepared) took about 0.1 s, which the first read
   * after it waited for. It keeps the process alive only while reads are outstanding, as always.
   */
  prepare(): void {
    if (this.closed || this.worker !== undefined) return;
    this.start().unref();
  }

  private send(): void {
    const reads = this.queued;
    if (reads.length === 0) return;
    this.queued = [];
    const worker = this.worker ?? this.start();
    this.out = reads;
    this.batches++;
    worker.ref();
    const batch: ReadBatch = { farms: reads.map((r) => r.farmId), issues: reads.map((r) => r.issue) };
    worker.postMessage(batch);
  }

  private start(): Worker {
    const worker = new Worker(new URL('./runReaderThread.js', import.meta.url), { workerData: { path: this.path } });
    worker.on('message', (reply: ReadReply) => this.received(reply));
    worker.on('error', (err: unknown) => this.fail(new Error(`store read thread failed: ${err instanceof Error ? err.message : String(err)}`)));
    worker.on('exit', (code) => {
      if (this.worker === worker) this.fail(new Error(`store read thread stopped (exit code ${code})`));
    });
    this.worker = worker;
    this.starts++;
    return worker;
  }

  private received(reply: ReadReply): void {
    const reads = this.out ?? [];
    this.out = undefined;
    if ('error' in reply) {
      const err = new Error(reply.error);
      for (const r of reads) r.reject(err);
    } else {
      const { series, revision, publishedAt } = reply;
      for (let i = 0; i < reads.length; i++) {
        const blob = series[i];
        reads[i]!.resolve(blob === null || blob === undefined ? undefined : { series: blob, revision: revision[i]!, published_at: publishedAt[i]! });
      }
    }
    if (this.queued.length > 0) this.send();
    else this.worker?.unref();
  }

  /**
   * The thread failed or stopped: its batch and the reads waiting for it fail with err, and the next read
   * starts a new thread (a store that cannot be read answers errors, never silence).
   */
  private fail(err: Error): void {
    const reads = [...(this.out ?? []), ...this.queued];
    this.out = undefined;
    this.queued = [];
    this.worker = undefined;
    for (const r of reads) r.reject(err);
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.fail(new Error('the store is closed'));
    if (worker !== undefined) await worker.terminate();
  }
}
