/** Starting webhooks (notices and their delivery) from serve (INTERFACE.md section 14). */
import { retryScaleFrom, startWebhooks, type WebhookRunOptions } from '../events/webhooks/index.js';
import type { Metrics } from '../ops/metrics.js';
import type { ServeOptions } from '../settings/serveOptions.js';
import { openStore } from '../store/openStore.js';
import { jsonLinesLog } from './watchRunner.js';

/** serve's options with the retry scale a test may ask for in the environment (not a setting). */
export function withWebhookTesting(o: ServeOptions, env: Readonly<Record<string, string | undefined>>): ServeOptions & { readonly webhookRetryScale: number } {
  return { ...o, webhookRetryScale: retryScaleFrom(env) };
}

export function webhookRunOptions(o: ServeOptions & { readonly webhookRetryScale?: number }): WebhookRunOptions {
  return {
    allowPrivate: o.webhookAllowPrivate,
    runDeadlineMs: o.runDeadlineMs,
    shutdownGraceMs: o.shutdownGraceMs,
    retryScale: o.webhookRetryScale,
  };
}

/** A cluster's primary runs the webhooks with a store of its own; stop() ends the attempt in hand (or abandons it) and closes it. */
export async function primaryWebhooks(o: ServeOptions, metrics?: Metrics): Promise<{ stop(): Promise<void> }> {
  const store = await openStore(o.db, o.store);
  const webhooks = startWebhooks(store, webhookRunOptions(o), metrics, jsonLinesLog(o.level));
  return {
    async stop() {
      await webhooks.stop();
      await store.close();
    },
  };
}
