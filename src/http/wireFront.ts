/**
 * The wire front: the server's connections are read here first, and the
 * plainest requests for the direct forecast path are answered without Node's
 * HTTP machinery; everything else is Node's, from the first request this front
 * does not take to the end of the connection.
 *
 * Why: node:http replying with precomputed bytes, the benchmarks' ceiling, spent
 * about half its CPU in Node's request and response objects, its parser's
 * callbacks and its stream bookkeeping, and the kernel the other half. A
 * forecast answer pays that too, before any forecast work. Reading a plain GET
 * head here and writing the answer's bytes straight to the socket leaves the
 * kernel's part and our own (docs/performance.md has the figures).
 *
 * How it stays Node's equal: the head reader (requestHead.ts) takes only plain
 * `GET … HTTP/1.1` heads without a body that arrive whole, and the front only
 * those the direct path takes as they are (`accept`). Anything else — another
 * method or path, a body, an upgrade, a head cut across reads, a pipelined
 * request behind one in progress that is not all there, the server closing —
 * hands the connection to Node's own connection listener, with the bytes not
 * yet read, as if it had just been accepted: Node's parser, limits, timeouts and
 * the framework answer from there on. Answers go out one at a time, in order:
 * the next head is read only once the answer before it has been written. The
 * door, the direct path, request ids, metrics and the access log see a request
 * and a response with the members they use (wireExchange.ts).
 *
 * Timeouts: a connection that sends nothing within the headers timeout, or stays
 * idle past the keep-alive timeout after an answer, is closed, as Node closes
 * an idle keep-alive connection. One sweep of the front's connections, a
 * quarter of the shorter timeout apart, finds them, rather than a timer per
 * socket: setting a socket's timer off for each request and on again after its
 * answer, and its refresh on each read, were about 2 % of a hot answer's CPU. So
 * a connection closes up to half the timeout later than it would by its own
 * timer, never earlier. Shutdown: idle connections close at once, busy ones
 * after their answer.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { AnswerObserver } from '../ops/observedResponse.js';
import { INCOMPLETE, MAX_HEAD_BYTES, OTHER, readRequestHead } from './requestHead.js';
import { WireRequest, WireResponse, type WireLink } from './wireExchange.js';

export interface WireFrontOptions<Q> {
  /** The server is draining: new requests are Node's (the framework answers them 503). */
  closing(): boolean;
  headersTimeoutMs: number;
  observer: AnswerObserver;
  /** What the direct path would answer for this target as it is; undefined: Node's. */
  accept(url: string): Q | undefined;
  /**
   * Answers an accepted request (door first); the response may be ended in this turn or later. It must not
   * throw: it runs inside the socket's data callback.
   */
  dispatch(q: Q, req: IncomingMessage, res: WireResponse): void;
}

/** Unread bytes held while an answer is made; past this the socket is paused. */
const MAX_HELD_BYTES = 4 * MAX_HEAD_BYTES;

/** The idle sweep's interval: a quarter of the shorter timeout, within these bounds (ms). */
const SWEEP_MIN_MS = 25;
const SWEEP_MAX_MS = 1000;

export function sweepIntervalMs(headersTimeoutMs: number, keepAliveTimeoutMs: number): number {
  const limits = [headersTimeoutMs, keepAliveTimeoutMs].filter((ms) => ms > 0);
  if (limits.length === 0) return SWEEP_MAX_MS;
  return Math.min(SWEEP_MAX_MS, Math.max(SWEEP_MIN_MS, Math.floor(Math.min(...limits) / 4)));
}

type Listener = (this: Server, socket: Socket) => void;

/** What the front has done: read by /metrics (forecastd_wire_*) and the tests. */
export interface WireCounts {
  /** Requests read and dispatched by the front. */
  taken: number;
  /** Connections handed to Node's server. */
  handedOff: number;
  /** Open connections the front still reads. */
  readonly open: number;
}

/**
 * Puts the front before Node's connection listener of `server` (a node:http
 * server, not yet listening); closeIdleConnections and closeAllConnections
 * then cover the front's connections too.
 */
export function installWireFront<Q>(server: Server, o: WireFrontOptions<Q>): WireCounts {
  const listeners = server.listeners('connection') as Listener[];
  if (listeners.length !== 1) throw new Error(`expected Node's one connection listener, found ${listeners.length}`);
  const nodeListener = listeners[0]!;
  server.removeListener('connection', nodeListener);
  const open = new Set<Connection<Q>>();
  const counts: WireCounts = {
    taken: 0,
    handedOff: 0,
    get open() {
      return open.size;
    },
  };
  const front: Front<Q> = {
    server,
    now: performance.now(),
    options: o,
    open,
    counts,
    handOff(socket: Socket, rest: Buffer | undefined, ended: boolean): void {
      counts.handedOff++;
      nodeListener.call(server, socket);
      // Node reads what follows straight from the socket's handle; what this front had read is given to its
      // parser first, as if it had just arrived, and so is the client's end of sending if it came already.
      if (rest !== undefined) socket.emit('data', rest);
      if (ended) socket.emit('end');
      else if (socket.isPaused()) socket.resume();
    },
  };
  server.on('connection', (socket: Socket) => open.add(new Connection(front, socket)));
  // From the timeouts the server was made with; each check waits the interval more, whatever the timeouts.
  const every = sweepIntervalMs(o.headersTimeoutMs, server.keepAliveTimeout);
  const sweep = setInterval(() => {
    front.now = performance.now();
    for (const c of open) c.closeIfIdleFor(front.now, every);
  }, every).unref();
  server.once('close', () => clearInterval(sweep));
  const closeIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => {
    closeIdle();
    for (const c of open) c.closeIfIdle();
  };
  const closeAll = server.closeAllConnections.bind(server);
  server.closeAllConnections = () => {
    closeAll();
    for (const c of open) c.socket.destroy();
  };
  return counts;
}

interface Front<Q> {
  readonly server: Server;
  /** performance.now() at the last sweep: when a connection fell idle, to within one sweep. */
  now: number;
  readonly options: WireFrontOptions<Q>;
  readonly open: Set<Connection<Q>>;
  readonly counts: WireCounts;
  handOff(socket: Socket, rest: Buffer | undefined, ended: boolean): void;
}

class Connection<Q> implements WireLink {
  /** Bytes read and not yet taken. */
  private held: Buffer | undefined;
  /** The answer in progress: the next head waits for it. */
  private current: WireResponse | undefined;
  private ended = false;
  private handedOff = false;
  /** The sweep's clock when the connection last fell idle or was read from, and whether it has been answered. */
  private idleSince: number;
  private answered = false;

  constructor(
    private readonly front: Front<Q>,
    readonly socket: Socket,
  ) {
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('close', this.onClose);
    socket.on('error', ignore);
    this.idleSince = front.now;
  }

  keepAliveTimeoutMs(): number {
    return this.front.server.keepAliveTimeout;
  }

  closeIfIdle(): void {
    if (this.current === undefined) this.socket.destroy();
  }

  /**
   * Closes the connection if it has been idle past its timeout (the headers timeout before its first answer,
   * the keep-alive timeout after). `now` is the sweep's clock; idleSince may be up to one sweep (`every` ms)
   * older than the moment it stands for, so that much more is waited.
   */
  closeIfIdleFor(now: number, every: number): void {
    if (this.current !== undefined) return;
    const limit = this.answered ? this.keepAliveTimeoutMs() : this.front.options.headersTimeoutMs;
    if (limit > 0 && now - this.idleSince >= limit + every) this.socket.destroy();
  }

  private readonly onData = (chunk: Buffer): void => {
    this.idleSince = this.front.now;
    this.held = this.held === undefined ? chunk : Buffer.concat([this.held, chunk]);
    if (this.current === undefined) this.next();
    else if (this.held.length > MAX_HELD_BYTES) this.socket.pause();
  };

  private readonly onEnd = (): void => {
    this.ended = true;
    if (this.current === undefined) this.next();
  };

  private readonly onClose = (): void => {
    this.front.open.delete(this);
    this.current?.close();
  };

  /** Takes the next request held, hands the connection to Node, or waits. */
  private next(): void {
    const socket = this.socket;
    // Requests held for a connection that has gone are not answered.
    if (this.handedOff || socket.destroyed) return;
    const held = this.held;
    if (held === undefined) {
      // Reached after an answer, or at the client's end of sending: idle, closed when draining.
      if (this.ended || this.front.options.closing()) socket.end();
      this.idleSince = this.front.now;
      return;
    }
    if (this.front.options.closing()) return this.handOff();
    const head = readRequestHead(held);
    if (head === INCOMPLETE || head === OTHER) return this.handOff();
    const q = this.front.options.accept(head.url);
    if (q === undefined) return this.handOff();
    this.held = head.end < held.length ? held.subarray(head.end) : undefined;
    if (socket.isPaused()) socket.resume();
    const req = new WireRequest(head, socket);
    const res = new WireResponse(req, this, this.front.options.observer, head.close || this.ended);
    this.current = res;
    this.front.counts.taken++;
    this.front.options.dispatch(q, req.asNode(), res);
  }

  send(res: WireResponse, head: string, body: Buffer | string | undefined): void {
    const socket = this.socket;
    if (socket.destroyed) {
      this.done(res);
      return;
    }
    socket.cork();
    socket.write(head, 'latin1');
    if (body !== undefined && body.length > 0) socket.write(body);
    socket.uncork();
    // The write's own callback would come a turn later even when the kernel took everything at once.
    if (socket.writableLength === 0) this.done(res);
    else socket.write(EMPTY, () => this.done(res));
  }

  private done(res: WireResponse): void {
    if (this.current !== res) return;
    this.current = undefined;
    this.answered = true;
    res.close();
    if (res.last) {
      this.socket.end();
      return;
    }
    // Bytes the kernel has not taken hold the next request back until they drain. A body over the socket's
    // high-water mark (16 KB: the default page is 21 KB) leaves Node's needDrain set even when the kernel took it
    // all in the write; waiting for that 'drain' (a listener per answer, emitted a tick later) was about 1.5 %
    // of a hot answer's CPU.
    if (this.socket.writableLength > 0) this.socket.once('drain', () => this.current === undefined && this.next());
    else this.next();
  }

  private handOff(): void {
    this.handedOff = true;
    const socket = this.socket;
    socket.removeListener('data', this.onData);
    socket.removeListener('end', this.onEnd);
    socket.removeListener('close', this.onClose);
    socket.removeListener('error', ignore);
    this.front.open.delete(this);
    const rest = this.held;
    this.held = undefined;
    this.front.handOff(socket, rest, this.ended);
  }
}

const EMPTY = Buffer.alloc(0);
const ignore = (): void => undefined;
