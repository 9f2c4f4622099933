/**
 * Sends the outbox's deliveries (INTERFACE.md section 14). Every process that
 * runs it claims due deliveries from the store under a lease (so that one
 * process makes each attempt), POSTs each signed body and records the outcome:
 *
 * - a 2xx answer within 15 s: delivered;
 * - 410 Gone: `gone`, and the endpoint is disabled;
 * - anything else (another status, a redirect, which is never followed, a
 *   timeout, a refused connection, an address refused): tried again on the
 *   schedule of schedule.ts, then given up.
 *
 * The URL's host is resolved at send time and, unless private addresses are
 * allowed, only public addresses are used (address.ts); the connection goes to
 * the address that was checked, by handing node:http a lookup function that
 * returns it, so that a second resolution cannot point elsewhere.
 *
 * Stopping waits for the attempts in flight up to a grace time and then
 * abandons them without recording anything: their lease runs out and a later
 * claim sends them again, with the same webhook-id.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { hostname } from 'node:os';
import { isIP, type LookupFunction } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { WebhookResult } from '../../ops/metrics.js';
import type { Delivery, DeliveryOutcome, Store } from '../../store/store.js';
import { addressKind } from './address.js';
import { nextAttemptAt } from './schedule.js';
import { signedHeaders } from './signature.js';

/** What an attempt counts as in forecastd_webhook_deliveries_total. */
export type DeliveryResult = WebhookResult;

export const ATTEMPT_TIMEOUT_MS = 15_000;
export const LEASE_MS = 30_000;
export const POLL_MS = 1_000;
/** Attempts in flight at once per process. */
export const MAX_IN_FLIGHT = 16;

export interface WebhookLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface DelivererOptions {
  /** `serve --webhook-allow-private`: send to loopback and private addresses too. */
  readonly allowPrivate: boolean;
  readonly log: WebhookLog;
  /** Called once per attempt with what it counts as. */
  readonly count?: (result: DeliveryResult) => void;
  /** Multiplies the retry delays (tests only; 1 by default). */
  readonly retryScale?: number;
  readonly pollMs?: number;
  readonly leaseMs?: number;
  readonly timeoutMs?: number;
  readonly maxInFlight?: number;
  /** Names this process in leases. */
  readonly owner?: string;
}

/** What one POST came to. */
export type AttemptResult =
  | { readonly kind: 'answered'; readonly status: number }
  | { readonly kind: 'refused'; readonly detail: string }
  | { readonly kind: 'failed'; readonly detail: string }
  | { readonly kind: 'abandoned' };

interface Target {
  readonly address: string;
  readonly family: 4 | 6;
}

/** The address to connect to, or why none may be used. */
export async function resolveTarget(host: string, allowPrivate: boolean): Promise<Target | { refused: string }> {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const family = isIP(bare);
  const found: Target[] =
    family !== 0
      ? [{ address: bare, family: family as 4 | 6 }]
      : (await dnsLookup(bare, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family as 4 | 6 }));
  if (allowPrivate && found.length > 0) return found[0]!;
  const usable = found.find((a) => addressKind(a.address) === 'public');
  if (usable !== undefined) return usable;
  const first = found[0];
  return { refused: first === undefined ? 'no address' : `private address refused: ${first.address} (${addressKind(first.address)})` };
}

/** A lookup that answers every host name with the one address already checked. */
function pinnedLookup(t: Target): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: t.address, family: t.family }]);
    else callback(null, t.address, t.family);
  }) as unknown as LookupFunction;
}

function faultText(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'ENODATA':
      return `host not found (${code})`;
    case undefined:
      return err instanceof Error ? err.message.slice(0, 120) : String(err).slice(0, 120);
    default:
      return code;
  }
}

/** POSTs `body` to `url` once, with the headers, within timeoutMs; `signal` abandons it. */
export async function postOnce(
  url: string,
  headers: Readonly<Record<string, string>>,
  body: string,
  o: { readonly allowPrivate: boolean; readonly timeoutMs: number; readonly signal: AbortSignal },
): Promise<AttemptResult> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { kind: 'failed', detail: 'bad URL' };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return { kind: 'failed', detail: 'bad URL' };
  const timer = new AbortController();
  const timeout = setTimeout(() => timer.abort(), o.timeoutMs);
  const signal = AbortSignal.any([o.signal, timer.signal]);
  const aborted = (): AttemptResult => (o.signal.aborted ? { kind: 'abandoned' } : { kind: 'failed', detail: 'timeout' });
  try {
    let target: Target | { refused: string };
    try {
      target = await Promise.race([
        resolveTarget(u.hostname, o.allowPrivate),
        new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
      ]);
    } catch (err) {
      if (signal.aborted) return aborted();
      return { kind: 'failed', detail: faultText(err) };
    }
    if ('refused' in target) return { kind: 'refused', detail: target.refused };
    const payload = Buffer.from(body, 'utf8');
    const mod = u.protocol === 'https:' ? https : http;
    return await new Promise<AttemptResult>((resolve) => {
      const req = mod.request(
        u,
        {
          method: 'POST',
          agent: false,
          lookup: pinnedLookup(target),
          headers: {
            ...headers,
            'content-type': 'application/json',
            'content-length': String(payload.length),
            'user-agent': 'forecastd-webhooks',
          },
        },
        (res) => {
          resolve({ kind: 'answered', status: res.statusCode ?? 0 });
          // The answer's body is not needed: read it away, and give up on it soon.
          res.resume();
          setTimeout(() => req.destroy(), 5_000).unref();
        },
      );
      const onAbort = (): void => {
        req.destroy();
        resolve(aborted());
      };
      if (signal.aborted) onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err) => resolve(signal.aborted ? aborted() : { kind: 'failed', detail: faultText(err) }));
      req.on('close', () => signal.removeEventListener('abort', onAbort));
      req.end(payload);
    });
  } finally {
    clearTimeout(timeout);
  }
}

/** The outcome recorded for an attempt at `at`, and what it counts as; undefined for an abandoned one. */
export function outcomeOf(
  d: Pick<Delivery, 'attempts'>,
  r: AttemptResult,
  at: number,
  retryScale = 1,
): { outcome: DeliveryOutcome; result: DeliveryResult } | undefined {
  if (r.kind === 'abandoned') return undefined;
  if (r.kind === 'answered' && r.status >= 200 && r.status < 300) return { outcome: { result: 'delivered', detail: String(r.status), at }, result: 'delivered' };
  if (r.kind === 'answered' && r.status === 410) return { outcome: { result: 'gone', detail: '410', at }, result: 'gone' };
  const detail =
    r.kind === 'answered' ? (r.status >= 300 && r.status < 400 ? `redirect refused (${r.status})` : String(r.status)) : r.detail;
  const next = nextAttemptAt(d.attempts + 1, at, { scale: retryScale });
  if (next === undefined) return { outcome: { result: 'gave-up', detail, at }, result: 'gave-up' };
  return { outcome: { result: 'retry', detail, at, nextAttemptAt: next }, result: r.kind === 'refused' ? 'refused' : 'retry' };
}

export class Deliverer {
  private readonly owner: string;
  private readonly inFlight = new Map<number, { abort: AbortController; done: Promise<void> }>();
  private stopping = false;
  private loopDone: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private woken = false;

  constructor(
    private readonly store: Store,
    private readonly o: DelivererOptions,
  ) {
    this.owner = o.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  }

  start(): void {
    this.loopDone ??= this.loop();
  }

  /**
   * Sends every delivery due now, once each, and resolves when their attempts are over (`webhooks retry`,
   * which has no loop of its own running): the number attempted. A failed one is scheduled again as always.
   */
  async deliverDue(): Promise<number> {
    const room = this.o.maxInFlight ?? MAX_IN_FLIGHT;
    let attempted = 0;
    for (;;) {
      const due = await this.store.claimDeliveries(Date.now(), this.owner, this.o.leaseMs ?? LEASE_MS, room);
      for (const d of due) this.begin(d);
      attempted += due.length;
      await Promise.all([...this.inFlight.values()].map((a) => a.done));
      if (due.length < room) return attempted;
    }
  }

  /** Looks for due deliveries now (after an enqueue, or an attempt's end). */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Stops claiming; waits up to graceMs for the attempts in flight, then abandons them (their leases run out). */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.loopDone;
    const all = Promise.all([...this.inFlight.values()].map((a) => a.done));
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([
      all.then(() => false),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(true), graceMs);
      }),
    ]);
    clearTimeout(timer);
    if (late) {
      this.o.log.warn({ attempts: this.inFlight.size }, 'webhooks: shutdown grace ended, abandoning the attempts in flight (they are sent again later)');
      for (const a of this.inFlight.values()) a.abort.abort();
      await all;
    }
  }

  private async loop(): Promise<void> {
    const max = this.o.maxInFlight ?? MAX_IN_FLIGHT;
    while (!this.stopping) {
      this.woken = false;
      const room = max - this.inFlight.size;
      if (room > 0) {
        try {
          const due = await this.store.claimDeliveries(Date.now(), this.owner, this.o.leaseMs ?? LEASE_MS, room);
          for (const d of due) this.begin(d);
          if (due.length === room) continue;
        } catch (err) {
          this.o.log.error({ fault: err instanceof Error ? err.message : String(err) }, 'webhooks: cannot claim deliveries, trying again');
        }
      }
      if (this.woken || this.stopping) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, this.o.pollMs ?? POLL_MS);
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.wakeUp = done;
      });
      this.wakeUp = undefined;
    }
  }

  private begin(d: Delivery): void {
    const abort = new AbortController();
    const done = this.attempt(d, abort.signal).finally(() => {
      this.inFlight.delete(d.id);
      if (!this.stopping) this.wake();
    });
    this.inFlight.set(d.id, { abort, done });
  }

  private async attempt(d: Delivery, signal: AbortSignal): Promise<void> {
    const log = this.o.log;
    let result: AttemptResult;
    try {
      const headers = signedHeaders(d.secret, d.msgId, d.body, Date.now());
      result = await postOnce(d.url, { ...headers }, d.body, { allowPrivate: this.o.allowPrivate, timeoutMs: this.o.timeoutMs ?? ATTEMPT_TIMEOUT_MS, signal });
    } catch (err) {
      result = { kind: 'failed', detail: err instanceof Error ? err.message.slice(0, 120) : 'failed' };
    }
    const judged = outcomeOf(d, result, Date.now(), this.o.retryScale);
    if (judged === undefined) return;
    const { outcome, result: counted } = judged;
    this.o.count?.(counted);
    const fields = { webhook_id: d.webhookId, msg_id: d.msgId, attempt: d.attempts + 1, result: outcome.result, detail: outcome.detail };
    if (outcome.result === 'delivered') log.info(fields, 'webhooks: delivered');
    else if (outcome.result === 'retry') log.info({ ...fields, next_attempt_at: new Date(outcome.nextAttemptAt!).toISOString() }, 'webhooks: attempt failed, will retry');
    else log.warn(fields, outcome.result === 'gone' ? 'webhooks: endpoint answered 410 Gone, disabled' : 'webhooks: gave up on a notice');
    try {
      await this.store.finishDelivery(d.id, outcome);
    } catch (err) {
      log.error({ ...fields, fault: err instanceof Error ? err.message : String(err) }, 'webhooks: cannot record an attempt; it is sent again when its lease runs out');
    }
  }
}
