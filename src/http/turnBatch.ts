/**
 * Forecast answers sent together at the end of the event loop's turn.
 *
 * When the reader of an answer is on the same host (a reverse proxy in front of
 * forecastd, a local client, a load generator), the kernel delivers the bytes and
 * wakes the reader inside the sender's write. Waking a reader whose core has gone
 * idle costs an inter-processor interrupt, and on a virtual machine that is a
 * trip through the hypervisor: at 200 sites the wake-up was a tenth of a mixed
 * answer's CPU (`sock_def_readable` under `writev`, perf). Answers written one
 * at a time, each after its own rendering, leave the reader time to fall idle
 * between them, so each pays that wake-up. Answers made in one turn of the loop
 * (node:http reads every request that arrived before the turn) are instead
 * written back to back once the turn's I/O callbacks are done (setImmediate):
 * the first wakes the reader, the rest find it awake.
 *
 * A queue holds at most MAX_BATCH answers: the first answer of a batch waits for
 * the rendering of the others, so the bound caps what batching adds to an
 * answer's latency (32 mixed answers, about 1.1 ms at 35 µs each). 32, not 16:
 * with 32 clients each turn's answers go in one batch and wake the reader once,
 * and that cost less per answer and gave a shorter tail, hot and mixed
 * (docs/performance.md, "What each design choice buys").
 *
 * Only the writing waits: status, headers and body are fixed when an answer is
 * queued, so nothing read from a cache or the read model is needed after the turn
 * that planned it.
 */
import type { ServerResponse } from 'node:http';
import { WireResponse } from './wireExchange.js';

export const MAX_BATCH = 32;
/**
 * A queue holding this many bytes of bodies is written at once: sixteen whole-run files (about 250 KB each)
 * would be 4 MB handed to the kernel in one go, more than a loopback socket takes, and the rest would trickle
 * out while the next batch renders.
 */
export const MAX_BATCH_BYTES = 1024 * 1024;

interface Pending {
  res: ServerResponse;
  status: number;
  headers: string[];
  /** Headers after those (the door's for this caller), or undefined. */
  more: readonly string[] | undefined;
  body: Buffer | undefined;
  /** Called once the body has been sent: hands a pooled body back, or ends a kept body's lease (BodyCache.lease). */
  release: (() => void) | undefined;
}

let queue: Pending[] = [];
let queuedBytes = 0;

/**
 * Writes an answer whole at the end of this turn (or at once, with those queued, when the batch is full), its
 * `headers` followed by `more`: a remembered answer's list is sent as it is, not copied per caller.
 */
export function sendAtTurnEnd(
  res: ServerResponse,
  status: number,
  headers: string[],
  more: readonly string[] | undefined,
  body: Buffer | undefined,
  release: (() => void) | undefined,
): void {
  queue.push({ res, status, headers, more, body, release });
  if (body !== undefined) queuedBytes += body.length;
  if (queue.length === 1) setImmediate(flush);
  if (queue.length >= MAX_BATCH || queuedBytes >= MAX_BATCH_BYTES) flush();
}

/** Writes every queued answer; a later answer of this turn starts a new queue. */
function flush(): void {
  const batch = queue;
  if (batch.length === 0) return;
  queue = [];
  queuedBytes = 0;
  for (const p of batch) write(p);
}

function write(p: Pending): void {
  try {
    const res: unknown = p.res;
    if (res instanceof WireResponse) res.writeHeadWith(p.status, p.headers, p.more);
    else p.res.writeHead(p.status, p.more === undefined ? p.headers : [...p.headers, ...p.more]);
    p.res.end(p.body);
  } catch {
    // Thrown out of the loop's check phase this would end the process; the client sees its connection closed,
    // as when an answer fails half-written, and the other answers of the batch are still sent.
    p.res.destroy();
  }
  if (p.release !== undefined) releaseWhenSent(p.res, p.release);
}

/**
 * Tells the body's owner that nothing needs its bytes any more: at once when the kernel took the whole answer
 * within end() (nearly always), else when the response closes (a slow reader, an answer queued behind
 * another on its connection). Spares a close listener per one-off answer.
 */
function releaseWhenSent(res: ServerResponse, release: () => void): void {
  const socket = res.socket;
  if (socket !== null && socket.writableLength === 0) release();
  else res.once('close', release);
}
