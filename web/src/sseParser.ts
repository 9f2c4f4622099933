/**
 * A Server-Sent Events parser for a stream read with fetch: EventSource cannot send the API key in a header,
 * so the console reads the stream itself. Follows the WHATWG event-stream rules (fields, comments, CR/LF/CRLF
 * line ends, multi-line data), enough for what the server sends.
 */

export interface SseEvent {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: string;
}

export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event = '';
  private id: string | undefined;
  /** The last chunk ended in CR: an LF starting the next one is the rest of that CRLF. */
  private skipLf = false;
  /** The id of the last event dispatched: sent back as Last-Event-ID when reconnecting. */
  lastEventId: string | undefined;
  /** The server's reconnection delay, when it sent one. */
  retryMs: number | undefined;

  /** Takes a chunk of text; returns the events it completed. */
  push(chunk: string): SseEvent[] {
    if (this.skipLf && chunk !== '') {
      if (chunk.startsWith('\n')) chunk = chunk.slice(1);
      this.skipLf = false;
    }
    this.buffer += chunk;
    const out: SseEvent[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      if (m === null) break;
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      // A CR at the end ends its line now (the event is not held back); it may be the first half of a CRLF.
      if (m[0] === '\r' && this.buffer === '') this.skipLf = true;
      const ev = this.line(line);
      if (ev !== undefined) out.push(ev);
    }
    return out;
  }

  private line(line: string): SseEvent | undefined {
    if (line === '') {
      if (this.data.length === 0) {
        this.event = '';
        return undefined;
      }
      const ev = { id: this.id, event: this.event || 'message', data: this.data.join('\n') };
      this.lastEventId = this.id;
      this.data = [];
      this.event = '';
      return ev;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
    return undefined;
  }
}
