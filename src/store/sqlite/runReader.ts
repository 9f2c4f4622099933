/**
 * Run reads of the SQLite store, made on a thread of their own so that the
 * event loop never waits for the disk.
 *
 * better-sqlite3 reads synchronously. A run whose pages are in the OS's cache
 * takes tens of microseconds, but a page that is not (a store larger than the
 * memory, pages the OS reclaimed while they were idle, a server just started)
 * is read from the disk while every other request waits: on this project's
 * machine, mixed load at 10,000 sites on a partly cold store had a p99 of
 * 326 ms (docs/performance.md). Here the read thread waits instead, and answers
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

export interface ReadRow {
  readonly series: Uint8Array;
  readonly revision: number;
  readonly publishedAt: number;
}

/** What the thread answers: a row (or null: no such run) per position, or why the batch failed. */
export type ReadReply = { readonly rows: (ReadRow | null)[]; readonly error?: undefined } | { readonly rows?: undefined; readonly error: string };

interface Waiting {
  resolve: (row: RunRow | undefined) => void;
  reject: (err: Error) => void;
}

export class RunReader {
  private worker: Worker | undefined;
  private closed = false;
  /** Reads not yet sent, and those of the batch out (at most one). */
  private next: { batch: ReadBatch; waiting: Waiting[] } = RunReader.empty();
  private out: Waiting[] | undefined;
  private sendScheduled = false;
  /** Batches sent, for the tests and diagnostics. */
  batches = 0;

  constructor(private readonly path: string) {}

  private static empty(): { batch: ReadBatch; waiting: Waiting[] } {
    return { batch: { farms: [], issues: [] }, waiting: [] };
  }

  read(farmId: string, issue: string): Promise<RunRow | undefined> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    return new Promise((resolve, reject) => {
      const next = this.next;
      next.batch.farms.push(farmId);
      next.batch.issues.push(issue);
      next.waiting.push({ resolve, reject });
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

  private send(): void {
    const { batch, waiting } = this.next;
    if (waiting.length === 0) return;
    this.next = RunReader.empty();
    const worker = this.worker ?? this.start();
    this.out = waiting;
    this.batches++;
    worker.ref();
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
    return worker;
  }

  private received(reply: ReadReply): void {
    const waiting = this.out ?? [];
    this.out = undefined;
    if (reply.error !== undefined) {
      const err = new Error(reply.error);
      for (const w of waiting) w.reject(err);
    } else {
      waiting.forEach((w, i) => {
        const r = reply.rows[i];
        w.resolve(
          r == null
            ? undefined
            : { series: Buffer.from(r.series.buffer, r.series.byteOffset, r.series.byteLength), revision: r.revision, published_at: r.publishedAt },
        );
      });
    }
    if (this.next.waiting.length > 0) this.send();
    else this.worker?.unref();
  }

  /**
   * The thread failed or stopped: every read it held fails with err, and the next read starts a new thread
   * (a store that cannot be read answers errors, never silence).
   */
  private fail(err: Error): void {
    const waiting = [...(this.out ?? []), ...this.next.waiting];
    this.out = undefined;
    this.next = RunReader.empty();
    this.worker = undefined;
    for (const w of waiting) w.reject(err);
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.fail(new Error('the store is closed'));
    if (worker !== undefined) await worker.terminate();
  }
}
