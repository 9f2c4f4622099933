/**
 * A strict Server-Sent Events client for tests: it reads a stream over
 * node:http and fails (records a protocol error) on anything our streams must
 * not send: CR characters, a field other than id / event / data / retry, a
 * data field spread over several lines, an event without an id, or a block
 * with both a retry and an event.
 */
import http, { type IncomingHttpHeaders } from 'node:http';

export interface SseEvent {
  readonly id: number;
  readonly event: string;
  readonly data: string;
  /** performance.now() when the block was parsed. */
  readonly at: number;
}

/** Parses a stream's text block by block (a block ends with an empty line). */
export class SseParser {
  readonly events: SseEvent[] = [];
  readonly comments: string[] = [];
  readonly retries: number[] = [];
  readonly errors: string[] = [];
  /** Everything seen, in order: 'event', 'comment' or 'retry'. */
  readonly order: string[] = [];
  private buffer = '';

  feed(chunk: string): void {
    if (chunk.includes('\r')) this.errors.push('a CR character');
    this.buffer += chunk;
    for (;;) {
      const end = this.buffer.indexOf('\n\n');
      if (end < 0) return;
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      this.block(block.split('\n'));
    }
  }

  private block(lines: string[]): void {
    const fields = new Map<string, string>();
    for (const line of lines) {
      if (line.startsWith(':')) {
        this.comments.push(line.slice(1).trim());
        this.order.push('comment');
        continue;
      }
      const colon = line.indexOf(':');
      if (colon < 0) {
        this.errors.push(`a line without a field: ${JSON.stringify(line)}`);
        continue;
      }
      const name = line.slice(0, colon);
      const value = line.slice(colon + 1).replace(/^ /, '');
      if (!['id', 'event', 'data', 'retry'].includes(name)) this.errors.push(`unknown field ${name}`);
      if (fields.has(name)) this.errors.push(`field ${name} twice in one block`);
      fields.set(name, value);
    }
    if (fields.size === 0) return;
    if (fields.has('retry')) {
      if (fields.size > 1) this.errors.push('retry together with other fields');
      if (!/^\d+$/.test(fields.get('retry')!)) this.errors.push('retry is not a number');
      this.retries.push(Number(fields.get('retry')));
      this.order.push('retry');
      return;
    }
    const id = fields.get('id');
    const event = fields.get('event');
    const data = fields.get('data');
    if (id === undefined || !/^\d+$/.test(id)) this.errors.push(`an event without a decimal id: ${JSON.stringify([...fields])}`);
    if (event === undefined) this.errors.push('an event without a name');
    if (data === undefined) this.errors.push('an event without data');
    else {
      try {
        JSON.parse(data);
      } catch {
        this.errors.push(`data is not JSON: ${data}`);
      }
    }
    this.events.push({ id: Number(id), event: event ?? '', data: data ?? '', at: performance.now() });
    this.order.push('event');
  }
}

export interface Stream {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly parser: SseParser;
  /** The body of an answer that is not a stream (an error envelope), once it ended. */
  readonly body: Promise<string>;
  /** Resolves once the server ended (or cut) the stream. */
  readonly ended: Promise<void>;
  /** Resolves when `test` holds for the events received, or rejects after timeoutMs. */
  until(test: (events: readonly SseEvent[]) => boolean, timeoutMs?: number): Promise<readonly SseEvent[]>;
  /** The parsed events of a name, their data parsed. */
  data(event?: string): any[];
  close(): void;
}

/** Opens GET url and resolves once the answer's head arrived. */
export function openStream(url: string, headers: Record<string, string> = {}): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      res.setEncoding('utf8');
      const parser = new SseParser();
      let text = '';
      const waiters = new Set<() => void>();
      let endedResolve!: () => void;
      const ended = new Promise<void>((r) => (endedResolve = r));
      let bodyResolve!: (b: string) => void;
      const body = new Promise<string>((r) => (bodyResolve = r));
      const streaming = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
      res.on('data', (chunk: string) => {
        if (streaming) parser.feed(chunk);
        else text += chunk;
        for (const w of [...waiters]) w();
      });
      const finish = (): void => {
        bodyResolve(text);
        endedResolve();
        for (const w of [...waiters]) w();
      };
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', () => undefined);
      let closed = false;
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        parser,
        body,
        ended,
        until(test, timeoutMs = 3000) {
          return new Promise((ok, fail) => {
            const check = (): void => {
              if (test(parser.events)) {
                waiters.delete(check);
                clearTimeout(timer);
                ok(parser.events);
              }
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`timed out; got ${JSON.stringify(parser.events.map((e) => [e.id, e.event, e.data]))}`));
            }, timeoutMs);
            waiters.add(check);
            check();
          });
        },
        data(event) {
          return parser.events.filter((e) => event === undefined || e.event === event).map((e) => JSON.parse(e.data));
        },
        close() {
          if (closed) return;
          closed = true;
          req.destroy();
        },
      });
    });
    req.on('error', reject);
  });
}
