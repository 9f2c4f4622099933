/**
 * How webhook endpoints and their deliveries (the outbox) are laid out in store
 * rows, the same in every adapter, the queries both adapters share, and the
 * checks both make before writing. Sites are a JSON array of ids (null = every
 * site); integer columns may arrive as text (PostgreSQL's bigint).
 */
import type { Delivery, DeliveryOutcome, NewDelivery, NewWebhook, StoredWebhook, WebhookSummary } from './store.js';
import { checkTime } from './keyRows.js';

export interface WebhookRow {
  id: number | string;
  name: string;
  url: string;
  secret: string;
  farms: string | null;
  created_at: number | string;
  since_event_id: number | string;
  disabled_at: number | string | null;
  disabled_reason: string | null;
}

export interface WebhookSummaryRow extends WebhookRow {
  last_attempt_at: number | string | null;
  last_result: string | null;
  pending: number | string;
}

export interface DeliveryRow {
  id: number | string;
  webhook_id: number | string;
  msg_id: string;
  type: string;
  issue: string;
  body: string;
  created_at: number | string;
  attempts: number | string;
  next_attempt_at: number | string;
  url: string;
  secret: string;
}

/** The endpoint's columns, with a table alias or without. */
export const webhookColumns = (a?: string): string =>
  ['id', 'name', 'url', 'secret', 'farms', 'created_at', 'since_event_id', 'disabled_at', 'disabled_reason']
    .map((c) => (a === undefined ? c : `${a}.${c}`))
    .join(', ');

/** A delivery's columns (alias d) with its endpoint's address and secret (alias w). */
export const DELIVERY_COLUMNS =
  'd.id, d.webhook_id, d.msg_id, d.type, d.issue, d.body, d.created_at, d.attempts, d.next_attempt_at, w.url, w.secret';

/** Deliveries neither delivered nor given up (alias d). */
export const PENDING = 'd.delivered_at IS NULL AND d.gave_up_at IS NULL';

/** Deliveries delivered or given up (alias d), and when they were last attempted (or finished). */
export const FINISHED = `NOT (${PENDING})`;
export const FINISHED_AT = 'coalesce(d.last_attempt_at, d.delivered_at, d.gave_up_at)';

/** The latest attempt among an endpoint's deliveries (w), one column of it. */
const lastAttempt = (column: string): string => `(SELECT d.${column} FROM webhook_deliveries d
      WHERE d.webhook_id = w.id AND d.last_attempt_at IS NOT NULL ORDER BY d.last_attempt_at DESC, d.id DESC LIMIT 1)`;

/**
 * Every endpoint by name with its last attempt (across its deliveries) and its pending count; `byName` orders
 * by name in byte order (PostgreSQL needs COLLATE "C").
 */
export const listWebhooksSql = (byName: string): string => `
  SELECT ${webhookColumns('w')},
    ${lastAttempt('last_attempt_at')} AS last_attempt_at,
    ${lastAttempt('last_detail')} AS last_result,
    (SELECT count(*) FROM webhook_deliveries d WHERE d.webhook_id = w.id AND ${PENDING}) AS pending
  FROM webhooks w
  ORDER BY ${byName}`;

/** The reason an endpoint that answered 410 is disabled with. */
export const GONE_REASON = '410 Gone';

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

export const toStoredWebhook = (r: WebhookRow): StoredWebhook => ({
  id: Number(r.id),
  name: r.name,
  url: r.url,
  secret: r.secret,
  farms: r.farms === null ? null : Object.freeze(JSON.parse(r.farms) as string[]),
  createdAt: Number(r.created_at),
  sinceEventId: Number(r.since_event_id),
  disabledAt: num(r.disabled_at),
  disabledReason: r.disabled_reason,
});

export const toWebhookSummary = (r: WebhookSummaryRow): WebhookSummary => ({
  ...toStoredWebhook(r),
  lastAttemptAt: num(r.last_attempt_at),
  lastResult: r.last_result,
  pending: Number(r.pending),
});

export const toDelivery = (r: DeliveryRow): Delivery => ({
  id: Number(r.id),
  webhookId: Number(r.webhook_id),
  msgId: r.msg_id,
  type: r.type === 'issue.partial' ? 'issue.partial' : 'issue.complete',
  issue: r.issue,
  body: r.body,
  createdAt: Number(r.created_at),
  attempts: Number(r.attempts),
  nextAttemptAt: Number(r.next_attempt_at),
  url: r.url,
  secret: r.secret,
});

/** Claimed deliveries in the order they are due (oldest notice first). */
export const byAge = (a: Delivery, b: Delivery): number => a.createdAt - b.createdAt || a.id - b.id;

export const webhookFarmsText = (w: NewWebhook): string | null => (w.farms === null ? null : JSON.stringify(w.farms));

export function checkNewWebhook(w: NewWebhook): void {
  if (typeof w.name !== 'string' || w.name.length === 0) throw new TypeError('a webhook needs a name');
  if (typeof w.url !== 'string' || w.url.length === 0) throw new TypeError('a webhook needs a URL');
  if (typeof w.secret !== 'string' || w.secret.length === 0) throw new TypeError('a webhook needs a secret');
  if (w.farms !== null && !(Array.isArray(w.farms) && w.farms.every((f) => typeof f === 'string' && f !== ''))) {
    throw new TypeError("a webhook's farms must be null or a list of farm ids");
  }
}

export function checkNewDelivery(d: NewDelivery): void {
  if (!Number.isSafeInteger(d.webhookId)) throw new TypeError('a delivery needs its webhook id');
  if (typeof d.msgId !== 'string' || d.msgId.length === 0) throw new TypeError('a delivery needs a message id');
  if (d.type !== 'issue.complete' && d.type !== 'issue.partial') throw new TypeError(`unknown notice type ${String(d.type)}`);
  if (typeof d.issue !== 'string' || typeof d.body !== 'string') throw new TypeError('a delivery needs its issue and body');
  checkTime("a delivery's creation time", d.createdAt);
}

export function checkClaim(now: number, owner: string, leaseMs: number, limit: number): void {
  checkTime('now', now);
  if (typeof owner !== 'string' || owner.length === 0) throw new TypeError('a claim needs an owner');
  if (!Number.isSafeInteger(leaseMs) || leaseMs < 1) throw new RangeError('a lease must be at least 1 ms');
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('a claim takes at least 1 delivery');
}

/** The next attempt's due time for a retry (null otherwise); refuses a retry without one. */
export function checkOutcome(o: DeliveryOutcome): number | null {
  checkTime("an attempt's time", o.at);
  if (!['delivered', 'retry', 'gave-up', 'gone'].includes(o.result)) throw new TypeError(`unknown delivery result ${String(o.result)}`);
  if (typeof o.detail !== 'string') throw new TypeError("an attempt's detail must be text");
  if (o.result !== 'retry') return null;
  if (o.nextAttemptAt === undefined) throw new TypeError('a retry needs the next attempt\'s time');
  checkTime("the next attempt's time", o.nextAttemptAt);
  return o.nextAttemptAt;
}

/** A mark's name and value. */
export function checkMark(name: string, value?: number): void {
  if (typeof name !== 'string' || name.length === 0) throw new TypeError('a mark needs a name');
  if (value !== undefined && !Number.isSafeInteger(value)) throw new RangeError('a mark must be a whole number');
}
