/**
 * Follows GET /api/v1/events while a view wants it: read with fetch (so the key travels in a header), parsed
 * with SseParser, resumed with Last-Event-ID after a drop, stopped for good on 401 or when aborted.
 */
import { authHeaders } from './api.js';
import { SseParser, type SseEvent } from './sseParser.js';

export interface Follower {
  stop(): void;
}

export function followEvents(onEvent: (e: SseEvent) => void, onLive: (live: boolean) => void): Follower {
  const abort = new AbortController();
  let lastId: string | undefined;
  let retryMs = 3000;
  const run = async (): Promise<void> => {
    while (!abort.signal.aborted) {
      const parser = new SseParser();
      try {
        const res = await fetch('/api/v1/events', {
          headers: { accept: 'text/event-stream', ...authHeaders(), ...(lastId === undefined ? {} : { 'last-event-id': lastId }) },
          signal: abort.signal,
        });
        if (res.status === 401 || res.status === 404) return onLive(false);
        if (res.ok && res.body !== null) {
          onLive(true);
          const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            for (const e of parser.push(value)) onEvent(e);
            lastId = parser.lastEventId ?? lastId;
            retryMs = parser.retryMs ?? retryMs;
          }
        }
      } catch {
        // Dropped or refused: try again after the server's delay.
      }
      onLive(false);
      if (abort.signal.aborted) return;
      await new Promise((r) => setTimeout(r, retryMs));
    }
  };
  void run();
  return { stop: () => abort.abort() };
}
