/** A webhook receiver for tests: a node:http server on 127.0.0.1 that records every POST and answers as told. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  /** performance.now() when it arrived. */
  readonly at: number;
  /** The status answered. */
  readonly status: number;
}

export interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly received: Received[];
  /** What to answer to the n-th request (0-based) on a path; 204 by default. */
  answer: (n: number, path: string, headers: http.IncomingHttpHeaders) => { status: number; headers?: Record<string, string> };
  /** Stops listening (connections refused) until up() listens on the same port again. */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
  /** The POSTs with this webhook-id. */
  byId(id: string): Received[];
}

export async function receiver(): Promise<Receiver> {
  const received: Received[] = [];
  const counts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const n = counts.get(path) ?? 0;
      counts.set(path, n + 1);
      const a = r.answer(n, path, req.headers);
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: performance.now(), status: a.status });
      res.writeHead(a.status, a.headers);
      res.end();
    });
  });
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  await listen();
  const r: Receiver = {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    received,
    answer: () => ({ status: 204 }),
    down: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
    up: listen,
    close: () =>
      new Promise<void>((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
    byId: (id) => received.filter((x) => x.headers['webhook-id'] === id),
  };
  return r;
}

/** Verifies a POST with the Standard Webhooks library; returns the parsed body (throws when the signature is wrong). */
export function verified(secret: string, x: Received): Record<string, unknown> {
  const headers = {
    'webhook-id': String(x.headers['webhook-id']),
    'webhook-timestamp': String(x.headers['webhook-timestamp']),
    'webhook-signature': String(x.headers['webhook-signature']),
  };
  return new Webhook(secret).verify(x.body, headers) as Record<string, unknown>;
}

/** Waits until probe() holds or ms pass; returns whether it held. */
export async function until(probe: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = performance.now() + ms;
  for (;;) {
    if (await probe()) return true;
    if (performance.now() > end) return false;
    await new Promise((res) => setTimeout(res, 20));
  }
}
