/**
 * Webhooks in a serve process (INTERFACE.md section 14): the notifier, which
 * puts notices in the store's outbox as runs become complete or partial, and
 * the deliverer, which sends them. serve runs both in the one process of an
 * instance that does background work (the only process, or the cluster's
 * primary); several instances on one store share the work through the store.
 */
import type { Metrics } from '../../ops/metrics.js';
import type { Store } from '../../store/store.js';
import { Deliverer, type WebhookLog } from './deliverer.js';
import { Notifier } from './notifier.js';

export interface WebhookRunOptions {
  /** `--webhook-allow-private`. */
  readonly allowPrivate: boolean;
  /** `--run-deadline`, ms. */
  readonly runDeadlineMs: number;
  /** `--shutdown-grace`: how long stop() lets an attempt in flight finish, ms. */
  readonly shutdownGraceMs: number;
  /** Multiplies the retry delays; 1 unless a test asks for less (FORECASTD_TEST_WEBHOOK_RETRY_SCALE). */
  readonly retryScale?: number;
}

/** The environment variable with which the test suite shortens the retry schedule; not a setting. */
export const RETRY_SCALE_ENV = 'FORECASTD_TEST_WEBHOOK_RETRY_SCALE';

/** The retry scale a test asked for in the environment, else 1. */
export function retryScaleFrom(env: Readonly<Record<string, string | undefined>>): number {
  const n = Number(env[RETRY_SCALE_ENV]);
  return Number.isFinite(n) && n > 0 && n <= 1 ? n : 1;
}

export function startWebhooks(store: Store, o: WebhookRunOptions, metrics: Metrics | undefined, log: WebhookLog): { stop(): Promise<void> } {
  const deliverer = new Deliverer(store, {
    allowPrivate: o.allowPrivate,
    log,
    retryScale: o.retryScale,
    count: metrics === undefined ? undefined : (result) => metrics.webhookDeliveries[result]++,
  });
  const notifier = new Notifier(store, { deadlineMs: o.runDeadlineMs, log, onEnqueued: () => deliverer.wake() });
  deliverer.start();
  notifier.start();
  return {
    async stop() {
      await Promise.all([notifier.stop(), deliverer.stop(o.shutdownGraceMs)]);
    },
  };
}
