/**
 * The request and response of an exchange the wire front (wireFront.ts) answers
 * itself: the members of Node's IncomingMessage and ServerResponse that the
 * door, the forecast service, the answer batcher and the error writers use, and
 * nothing else. The response writes the bytes Node's own would write for the
 * same calls (status line, the headers in Node's order, Date, Connection,
 * Keep-Alive, Content-Length), adds X-Request-Id and tells the answer observer,
 * as the server's response class does (ops/observedResponse.ts).
 *
 * Only a whole answer is written: writeHead with a flat header list, then end
 * with the whole body (or none), which is how every writer on the direct path
 * answers.
 */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { AnswerObserver } from '../ops/observedResponse.js';
import { assignRequestId, REQUEST_ID_HEADER, requestIdOf } from '../ops/requestId.js';
import { decimalHeader } from './headerNumber.js';
import type { RequestHead } from './requestHead.js';

/** What the response needs of its connection. */
export interface WireLink {
  readonly socket: Socket;
  /** Node's keep-alive timeout of the server, ms (named in the Keep-Alive header). */
  keepAliveTimeoutMs(): number;
  /** Writes a whole answer, then calls res.close() once it has left (or the connection has gone). */
  send(res: WireResponse, head: string, body: Buffer | string | undefined): void;
}

export class WireRequest {
  readonly method = 'GET';
  readonly url: string;
  readonly headers: Record<string, string>;

  constructor(
    head: RequestHead,
    readonly socket: Socket,
  ) {
    this.url = head.url;
    this.headers = head.headers;
  }

  /** As Node's, to the door, the service and the observers: they read only the members above. */
  asNode(): IncomingMessage {
    return this as unknown as IncomingMessage;
  }
}

/**
 * Node's check of a header value (ERR_INVALID_CHAR): no CR, LF or other control character may reach the
 * wire. A loop rather than Node's regular expression: two tests a header were 2 % of a hot answer's CPU.
 */
function validValue(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if ((c < 32 && c !== 9) || c === 127 || c > 255) return false;
  }
  return true;
}
/** Node's check of a header name (ERR_INVALID_HTTP_TOKEN). */
const TOKEN = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
/** Names already checked: answers name the same few headers over and over. */
const checkedNames = new Set<string>();
function validName(name: string): boolean {
  if (checkedNames.has(name)) return true;
  if (!TOKEN.test(name)) return false;
  if (checkedNames.size < 1024) checkedNames.add(name);
  return true;
}

/** The Date header's text, made once a second as Node makes its own. */
let dateText: string | undefined;
function httpDate(): string {
  if (dateText === undefined) {
    const d = new Date();
    dateText = d.toUTCString();
    setTimeout(() => (dateText = undefined), 1000 - d.getMilliseconds()).unref();
  }
  return dateText;
}

export class WireResponse {
  statusCode = 200;
  headersSent = false;
  writableEnded = false;
  /** Whether the connection closes after this answer (the client asked, or an answer said so). */
  last: boolean;
  /** Headers set before writeHead, by lower-case name: the name as set and its values. */
  private set: Map<string, [string, string[]]> | undefined;
  /** The answer's headers as name, value pairs, once writeHead has been called. */
  private pairs: readonly string[] = [];
  /** Headers written after those (the door's for this caller), given apart so that neither list is copied. */
  private more: readonly string[] | undefined;
  /** The request id, written last; undefined when the pairs place it themselves. */
  private id: string | undefined;
  /** Which of Date, Connection and Content-Length the headers written so far name (the *_NAMED bits). */
  private named = 0;
  private closeListeners: (() => void)[] | undefined;
  private closed = false;
  private readonly startedAt = performance.now();

  constructor(
    readonly req: WireRequest,
    private readonly link: WireLink,
    private readonly observer: AnswerObserver,
    close: boolean,
  ) {
    this.last = close;
    assignRequestId(req.asNode(), observer.ids);
  }

  get socket(): Socket {
    return this.link.socket;
  }

  /** As Node's, to the door, the service and the answer batcher: they use only the members below. */
  asNode(): ServerResponse {
    return this as unknown as ServerResponse;
  }

  setHeader(name: string, value: string): this {
    if (this.headersSent) throw new Error('headers already sent');
    // As Node's: a name set again keeps its place, with the new spelling and value.
    (this.set ??= new Map()).set(name.toLowerCase(), [name, [value]]);
    return this;
  }

  hasHeader(name: string): boolean {
    return this.set !== undefined && this.set.has(name.toLowerCase());
  }

  appendHeader(name: string, value: string): this {
    const field = this.set?.get(name.toLowerCase());
    if (field === undefined) return this.setHeader(name, value);
    if (this.headersSent) throw new Error('headers already sent');
    field[1].push(value);
    return this;
  }

  writeHead(status: number, headers?: readonly string[]): this {
    if (headers !== undefined && !Array.isArray(headers)) throw new Error('the wire front writes flat header lists only');
    return this.writeHeadWith(status, headers ?? [], undefined);
  }

  /**
   * writeHead with `more` headers after the list (a remembered answer's list, then the caller's rate limit),
   * neither copied; as the server's response class does, the request id goes last.
   */
  writeHeadWith(status: number, headers: readonly string[], more: readonly string[] | undefined): this {
    const id = requestIdOf(this.req.asNode())!;
    if (this.set !== undefined) return this.writeHeadPlaced(status, [...headers, ...(more ?? []), REQUEST_ID_HEADER, id]);
    this.place(status, headers);
    this.more = more;
    this.id = id;
    return this;
  }

  /** writeHead for a list that places X-Request-Id itself (the framework's error answers do). */
  writeHeadPlaced(status: number, list: readonly string[]): this {
    return this.place(status, this.set === undefined ? list : merged(this.set, list));
  }

  private place(status: number, pairs: readonly string[]): this {
    if (this.headersSent) throw new Error('headers already sent');
    this.statusCode = status;
    this.pairs = pairs;
    this.headersSent = true;
    return this;
  }

  end(body?: Buffer | string): this {
    if (this.writableEnded) return this;
    if (!this.headersSent) this.writeHead(this.statusCode);
    this.writableEnded = true;
    this.observer.answered(this.req.asNode(), this.statusCode, performance.now() - this.startedAt);
    const sent = this.statusCode === 204 || this.statusCode === 304 ? undefined : body;
    const length = sent === undefined ? 0 : typeof sent === 'string' ? Buffer.byteLength(sent) : sent.length;
    this.link.send(this, this.headText(this.statusCode, length), sent);
    return this;
  }

  destroy(): void {
    this.link.socket.destroy();
  }

  on(event: 'close', listener: () => void): this {
    if (event !== 'close') throw new Error(`the wire front emits only close, not ${String(event)}`);
    if (this.closed) return this;
    (this.closeListeners ??= []).push(listener);
    return this;
  }

  once(event: 'close', listener: () => void): this {
    return this.on(event, listener);
  }

  /** The answer has left, or the connection has gone: 'close', once, as Node's response emits it. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const listeners = this.closeListeners;
    this.closeListeners = undefined;
    if (listeners !== undefined) for (const l of listeners) l();
  }

  /**
   * The status line and headers as Node's OutgoingMessage spells them for these headers and a body of `length`
   * bytes. Without a Content-Length among them Node would send the body chunked after an explicit writeHead;
   * it is named here instead (every writer on the direct path names it).
   */
  private headText(status: number, bodyBytes: number): string {
    let text = statusLine(status);
    const { pairs, more } = this;
    this.named = 0;
    for (let i = 0; i < pairs.length; i += 2) text += this.line(pairs[i]!, pairs[i + 1]!);
    if (more !== undefined) for (let i = 0; i < more.length; i += 2) text += this.line(more[i]!, more[i + 1]!);
    if (this.id !== undefined) text += this.line(REQUEST_ID_HEADER, this.id);
    const named = this.named;
    if ((named & DATE_NAMED) === 0) text += `Date: ${httpDate()}\r\n`;
    if ((named & CONNECTION_NAMED) === 0) {
      if (this.last) text += 'Connection: close\r\n';
      else {
        text += keepAliveLines(this.link.keepAliveTimeoutMs());
      }
    }
    if ((named & LENGTH_NAMED) === 0 && status !== 204 && status !== 304) text += `Content-Length: ${decimalHeader(bodyBytes)}\r\n`;
    return text + '\r\n';
  }

  /** One header's line, checked as Node checks it; notes in `named` a header that Node would otherwise add. */
  private line(name: string, value: string): string {
    if (!validName(name)) throw new Error(`invalid header name ${JSON.stringify(name)}`);
    if (!validValue(value)) throw new Error(`invalid character in header ${name}`);
    // Names are compared only when their length and first letter could match: most headers are none of these.
    const first = name.charCodeAt(0) | 32;
    switch (name.length) {
      case 4:
        if (first === 100 /* d */ && name.toLowerCase() === 'date') this.named |= DATE_NAMED;
        break;
      case 10:
        if (first === 99 /* c */ && name.toLowerCase() === 'connection') {
          this.named |= CONNECTION_NAMED;
          if (value.toLowerCase() === 'close') this.last = true;
        }
        break;
      case 14:
        if (first === 99 /* c */ && name.toLowerCase() === 'content-length') this.named |= LENGTH_NAMED;
        break;
      case 17:
        if (first === 116 /* t */ && name.toLowerCase() === 'transfer-encoding') throw new Error('the wire front writes whole bodies only');
    }
    return `${name}: ${value}\r\n`;
  }
}

const DATE_NAMED = 1;
const CONNECTION_NAMED = 2;
const LENGTH_NAMED = 4;

/** The status line of each status answered so far. */
const statusLines = new Map<number, string>();
function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (line === undefined) {
    line = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'unknown'}\r\n`;
    if (statusLines.size < 1000) statusLines.set(status, line);
  }
  return line;
}

/** Connection and Keep-Alive for the server's keep-alive timeout (no Keep-Alive for 0), made again only when it changes. */
let keepAlive = { ms: -1, lines: '' };
function keepAliveLines(ms: number): string {
  if (keepAlive.ms !== ms) {
    keepAlive = { ms, lines: `Connection: keep-alive\r\n${ms > 0 ? `Keep-Alive: timeout=${Math.floor(ms / 1000)}\r\n` : ''}` };
  }
  return keepAlive.lines;
}

/**
 * Headers set before writeHead merged with its list as Node 20 merges them:
 * each name of the list is set in turn, so a name already set keeps its place
 * and takes the list's spelling and value; then every value is a line.
 */
function merged(set: Map<string, [string, string[]]>, list: readonly string[]): string[] {
  const fields = new Map(set);
  for (let i = 0; i < list.length; i += 2) fields.set(list[i]!.toLowerCase(), [list[i]!, [list[i + 1]!]]);
  const out: string[] = [];
  for (const [name, values] of fields.values()) for (const v of values) out.push(name, v);
  return out;
}
