/**
 * The event streams of one process (GET /api/v1/events, INTERFACE.md section
 * 14), written straight to Node's response: the route admits a stream (the
 * door has already checked its key, scope and rate), this file counts it
 * against the limits, writes the stream's head and its events, keeps it
 * alive, drops it when its client stops reading, and ends every stream when
 * the server shuts down.
 *
 * A stream is `retry: 3000` once, then events as `id: N`, `event: E`,
 * `data: JSON` and a blank line, and a comment line (`: keep-alive`) every
 * keepaliveMs. Nothing is buffered per client beyond what the socket holds:
 * when more than bufferBytes from earlier writes are still queued at the next
 * write, the client is not keeping up and its connection is destroyed, so a
 * slow client holds at most the bound and one batch, and never delays the
 * others (each write to the others goes on at once).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Principal } from '../access/principal.js';
import type { FeedEvent } from './feed.js';
import type { EventHub, StreamStart, Subscriber } from './hub.js';

/** What a client's EventSource waits before reconnecting, ms. */
export const RETRY_MS = 3000;
/** Queued bytes beyond which a client is taken to be gone. */
export const DEFAULT_BUFFER_BYTES = 1 << 20;

export const STREAM_HEADERS: readonly string[] = [
  'content-type', 'text/event-stream; charset=utf-8',
  'cache-control', 'no-cache',
  'x-accel-buffering', 'no',
  'x-content-type-options', 'nosniff',
];

export const RESET_DATA = JSON.stringify({
  message: 'The events after the given Last-Event-ID are no longer kept; read the current state (GET /api/v1/forecast/issues) and go on from here.',
});

export interface StreamLimits {
  /** Streams open at once in this process. */
  readonly maxClients: number;
  /** Streams open at once per key (by name) in this process. */
  readonly maxClientsPerKey: number;
  readonly keepaliveMs: number;
  readonly bufferBytes: number;
}

/**
 * How often open streams are asked whether their caller may still read (StreamAccess): a revoked key stops
 * working everywhere within 2 s (INTERFACE.md section 10), an open stream included.
 */
export const ACCESS_CHECK_MS = 1000;

/** Whether the caller a stream was admitted as may still read it: its key still works, or no key is asked for. */
export type StreamAccess = (principal: Principal) => boolean;

/** Counters for the metrics. */
export interface StreamCounts {
  /** Events written to clients. */
  sent: number;
  /** Clients disconnected for not reading. */
  dropped: number;
}

class Stream implements Subscriber {
  detach: (() => void) | undefined;
  private ended = false;
  /** Queued bytes tolerated: the bound, plus a catch-up until the socket first drains. */
  private allowance: number;

  constructor(
    private readonly res: ServerResponse,
    private readonly head: readonly string[],
    private readonly owner: EventStreams,
    readonly principal: Principal,
  ) {
    this.allowance = owner.limits.bufferBytes;
  }

  begin(start: StreamStart): void {
    this.res.writeHead(200, [...this.head, ...STREAM_HEADERS]);
    let text = `retry: ${RETRY_MS}\n\n`;
    if (start.reset) text += `id: ${start.resetId}\nevent: reset\ndata: ${RESET_DATA}\n\n`;
    else text += start.text;
    // A long catch-up is the client's own backlog, not a sign that it stopped reading: it is tolerated on top
    // of the bound until the socket first drains.
    this.allowance += Buffer.byteLength(text);
    if (this.write(text, start.reset ? 1 : start.catchUp.length)) this.allowance = this.owner.limits.bufferBytes;
    else this.res.once('drain', () => (this.allowance = this.owner.limits.bufferBytes));
  }

  deliver(events: readonly FeedEvent[], text: string): void {
    this.write(text, events.length);
  }

  keepAlive(): void {
    this.write(': keep-alive\n\n', 0);
  }

  /**
   * Writes unless the client is behind: what is still queued from earlier
   * writes (the socket took none of it) is measured before this one, so that
   * one large batch (a catch-up, many events at once) never counts against a
   * client that reads. False when the text was not all taken by the socket.
   */
  write(text: string, events: number): boolean {
    if (this.ended || this.res.destroyed) return false;
    if (this.res.writableLength > this.allowance) {
      this.owner.counts.dropped++;
      this.ended = true;
      this.res.destroy();
      return false;
    }
    this.owner.counts.sent += events;
    return this.res.write(text);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.res.end();
  }
}

export type Admission = { readonly ok: true; readonly release: () => void } | { readonly ok: false; readonly why: 'process' | 'key' };

export class EventStreams {
  readonly counts: StreamCounts = { sent: 0, dropped: 0 };
  private readonly open = new Set<Stream>();
  /** Streams admitted (opening or open), in all and per key name. */
  private admitted = 0;
  private readonly perKey = new Map<string, number>();
  private readonly keepalive: NodeJS.Timeout;
  private readonly accessCheck: NodeJS.Timeout;
  private closing = false;

  constructor(
    readonly hub: EventHub,
    readonly limits: StreamLimits,
    /** Told the number of streams admitted whenever it changes (the gauge). */
    private readonly onCount: (n: number) => void = () => undefined,
    access: StreamAccess = () => true,
  ) {
    this.keepalive = setInterval(() => {
      for (const s of this.open) s.keepAlive();
    }, limits.keepaliveMs);
    this.keepalive.unref();
    // Ended, not sent an error: the client's reconnection then meets the door, which answers it as any request.
    this.accessCheck = setInterval(() => {
      for (const s of this.open) if (!access(s.principal)) s.end();
    }, ACCESS_CHECK_MS);
    this.accessCheck.unref();
  }

  /** Counts a new stream against the limits, before anything is awaited; release when it ends. */
  admit(keyName: string | undefined): Admission {
    if (this.admitted >= this.limits.maxClients) return { ok: false, why: 'process' };
    if (keyName !== undefined) {
      const n = this.perKey.get(keyName) ?? 0;
      if (n >= this.limits.maxClientsPerKey) return { ok: false, why: 'key' };
      this.perKey.set(keyName, n + 1);
    }
    this.admitted++;
    this.onCount(this.admitted);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        this.admitted--;
        if (keyName !== undefined) {
          const n = this.perKey.get(keyName)! - 1;
          if (n === 0) this.perKey.delete(keyName);
          else this.perKey.set(keyName, n);
        }
        this.onCount(this.admitted);
      },
    };
  }

  /**
   * Starts the stream of an admitted request: its head (with `headers`, name,
   * value, …), the catch-up or a reset, then live events until the client
   * leaves or the server closes. The caller has synced the hub.
   */
  stream(
    req: IncomingMessage,
    res: ServerResponse,
    principal: Principal,
    lastEventId: number | undefined | 'invalid',
    headers: readonly string[],
    release: () => void,
  ): void {
    const s = new Stream(res, headers, this, principal);
    const done = (): void => {
      s.detach?.();
      this.open.delete(s);
      release();
      // A stream nearly always ends by its client leaving (or being dropped): ended here, so that it is
      // counted and access-logged as every other answer is (ops/observedResponse.ts), with its duration.
      if (!res.writableEnded) res.end();
    };
    if (this.closing || res.destroyed) {
      done();
      if (!res.destroyed) res.destroy();
      return;
    }
    // A stream lives as long as its client: no idle timeout on its socket.
    req.socket.setTimeout(0);
    req.socket.setNoDelay(true);
    req.socket.setKeepAlive(true, 60_000);
    res.once('close', done);
    this.open.add(s);
    s.detach = this.hub.attach(principal.scope, lastEventId, s);
  }

  /** Streams open now. */
  size(): number {
    return this.open.size;
  }

  /** Ends every stream (the server is shutting down) and refuses new ones. */
  endAll(): void {
    this.closing = true;
    clearInterval(this.keepalive);
    clearInterval(this.accessCheck);
    for (const s of this.open) s.end();
  }
}
