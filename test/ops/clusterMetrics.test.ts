/**
 * The cluster primary's side of a scrape, with stand-ins for node:cluster's workers that behave as Node's do
 * when a worker's channel is gone: a send without a callback emits 'error' (which, unhandled, ends the
 * process); with a callback, the callback gets the error. The real cluster is exercised by serveMetrics.test.ts.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Worker } from 'node:cluster';
import { test } from 'node:test';
import { Counter, Registry } from 'prom-client';
import { ClusterMetrics } from '../../src/ops/clusterMetrics.js';

class StandInWorker extends EventEmitter {
  readonly sent: { type?: string; id?: number; text?: string; error?: string }[] = [];

  constructor(
    readonly id: number,
    private readonly registry: Registry,
    /** A worker killed a moment ago: still taken for connected, but every send fails. */
    private readonly dying = false,
  ) {
    super();
  }

  isConnected(): boolean {
    return true;
  }

  send(message: { type?: string; id?: number }, callback?: (err: Error | null) => void): boolean {
    if (this.dying) {
      const err = Object.assign(new Error('channel closed'), { code: 'ERR_IPC_CHANNEL_CLOSED' });
      if (callback) process.nextTick(callback, err);
      else process.nextTick(() => this.emit('error', err));
      return false;
    }
    this.sent.push(message);
    if (message.type === 'forecastd:metrics:collect') {
      void this.registry.getMetricsAsJSON().then((metrics) => this.emit('message', { type: 'forecastd:metrics:collected', id: message.id, metrics }));
    }
    if (callback) process.nextTick(callback, null);
    return true;
  }
}

function registryCounting(n: number): Registry {
  const registry = new Registry();
  new Counter({ name: 'answers_total', help: 'answers', registers: [registry] }).inc(n);
  return registry;
}

test('a scrape asked while another worker is dying is answered at once by the others, and the primary stays up', async () => {
  const metrics = new ClusterMetrics(new Registry());
  const asking = new StandInWorker(1, registryCounting(5));
  const dying = new StandInWorker(2, registryCounting(7), true);
  metrics.add(asking as unknown as Worker);
  metrics.add(dying as unknown as Worker);
  const t0 = performance.now();
  asking.emit('message', { type: 'forecastd:metrics:scrape', id: 41 });
  const reply = await new Promise<{ id?: number; text?: string; error?: string }>((resolve) => {
    const poll = setInterval(() => {
      const r = asking.sent.find((m) => m.type === 'forecastd:metrics:scraped');
      if (r) {
        clearInterval(poll);
        resolve(r);
      }
    }, 5);
  });
  assert.equal(reply.id, 41);
  assert.equal(reply.error, undefined);
  assert.match(reply.text!, /^answers_total 5$/m, 'the live worker counted, the dying one left out');
  // Not held until the collection's timeout (3 s) for the worker that could not be asked.
  assert.ok(performance.now() - t0 < 2500, `answered after ${(performance.now() - t0).toFixed(0)} ms`);
});
