/**
 * Every API key of the store, in memory, by hash: authentication is a hash and
 * a map probe, never a store read. The ring re-reads what changed when the
 * store's change token moves: at once after a commit it is told of, and
 * otherwise by asking at least once a second, so a key created, rolled or
 * revoked by another process works (or stops) here within about a second.
 *
 * Last use is kept in memory and written in one batch a minute (touchKeys),
 * never per request.
 */
import { EVERY_SITE, scopeOf } from '../query/scope.js';
import type { StoredKey, Store } from '../store/store.js';
import { checkKeyForm } from './keyFormat.js';
import { hashKey } from './keyHash.js';
import { isLive } from './keyState.js';
import type { Principal } from './principal.js';

/** Key texts remembered with their entries; far more than the keys a deployment has. */
const TEXTS_KEPT = 4096;

export interface KeyEntry {
  /** Names the key's rate bucket: its name, so that a rolled key keeps the budget of the one it replaces. */
  readonly bucket: string;
  readonly name: string;
  readonly rate: number | null;
  readonly burst: number | null;
  readonly admin: boolean;
  readonly principal: Principal;
  readonly hash: string;
  readonly expiresAt: number | null;
  readonly revokedAt: number | null;
}

export interface KeyringOptions {
  /** How often to ask the store's change token when no commit was told of, ms. */
  readonly pollMs?: number;
  /** How often last use is written, ms. */
  readonly touchMs?: number;
  readonly onError?: (err: unknown) => void;
}

function entryOf(k: StoredKey): KeyEntry {
  return {
    bucket: k.name,
    name: k.name,
    rate: k.rate,
    burst: k.burst,
    admin: k.admin,
    // An admin key sees every site, whatever it was created with.
    principal: Object.freeze({ keyName: k.name, scope: k.admin ? EVERY_SITE : scopeOf(k.farms), admin: k.admin }),
    hash: k.hash,
    expiresAt: k.expiresAt,
    revokedAt: k.revokedAt,
  };
}

export class Keyring {
  private readonly byHash = new Map<string, KeyEntry>();
  private revision = 0;
  private token = '';
  /** Whether some key is live, valid until `liveUntil` (the next end of a key), epoch ms. */
  private live = false;
  private liveUntil = -Infinity;
  private readonly used = new Map<string, number>();
  /**
   * Entries by the key texts recently presented, so that a key's SHA-256 (a few µs, the largest part of
   * authenticating) is computed once per key and process rather than per request. Memory only; dropped
   * whenever the keys change, and bounded.
   */
  private readonly byText = new Map<string, KeyEntry>();
  /** The entry each principal was made for (an entry is replaced, with a new principal, whenever its key changes). */
  private readonly byPrincipal = new WeakMap<Principal, KeyEntry>();
  private refreshing: Promise<void> | undefined;
  private again = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly store: Store,
    private readonly options: KeyringOptions = {},
  ) {}

  /** Loads every key, then keeps up with changes until close(). */
  async start(): Promise<void> {
    await this.refresh();
    this.unsubscribe = this.store.onCommit(() => void this.refresh());
    const poll = setInterval(() => void this.refresh(), this.options.pollMs ?? 1000);
    const touch = setInterval(() => void this.flushUse(), this.options.touchMs ?? 60_000);
    poll.unref();
    touch.unref();
    this.timers.push(poll, touch);
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.unsubscribe?.();
    await this.refreshing?.catch(() => undefined);
    await this.flushUse();
  }

  /** Re-reads the keys written since the last read, if the store's token moved; one read at a time. */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = this.read()
      .catch((err: unknown) => this.options.onError?.(err))
      .finally(() => {
        this.refreshing = undefined;
        if (this.again) {
          this.again = false;
          void this.refresh();
        }
      });
    return this.refreshing;
  }

  private async read(): Promise<void> {
    const token = await this.store.changeToken();
    if (token === this.token) return;
    const changes = await this.store.keysSince(this.revision);
    for (const k of changes.keys) {
      const entry = entryOf(k);
      this.byHash.set(k.hash, entry);
      this.byPrincipal.set(entry.principal, entry);
    }
    if (changes.keys.length > 0) this.byText.clear();
    this.revision = changes.revision;
    this.token = token;
    this.liveUntil = -Infinity;
  }

  /** Whether any key works now (with auth `auto`, keys are asked for from the first one on). */
  hasLiveKeys(now: number = Date.now()): boolean {
    if (now < this.liveUntil) return this.live;
    let live = false;
    let until = Infinity;
    for (const k of this.byHash.values()) {
      if (!isLive(k, now)) continue;
      live = true;
      if (k.expiresAt !== null) until = Math.min(until, k.expiresAt);
    }
    this.live = live;
    this.liveUntil = until;
    return live;
  }

  /**
   * The live key with this text, or undefined; any text a request sends. A text found before is taken from
   * the texts kept at once; only another is checked for its form (a malformed one is not worth a hash) and
   * hashed. The check and the hash on every request were about a tenth of a keyed hot answer's extra CPU.
   */
  lookup(text: string, now: number): KeyEntry | undefined {
    let k = this.byText.get(text);
    if (k === undefined) {
      if (!checkKeyForm(text)) return undefined;
      k = this.byHash.get(hashKey(text));
      if (k === undefined) return undefined;
      if (this.byText.size >= TEXTS_KEPT) this.byText.clear();
      this.byText.set(text, k);
    }
    if (!isLive(k, now)) return undefined;
    this.used.set(k.hash, now);
    return k;
  }

  /**
   * Whether the key a request was admitted as (its principal) still works at `now`, as the store has it now:
   * not revoked, not past its end (a roll gives it one). For what outlives its request (an event stream);
   * false for a principal of no key.
   */
  stillAdmits(principal: Principal, now: number): boolean {
    const hash = this.byPrincipal.get(principal)?.hash;
    const current = hash === undefined ? undefined : this.byHash.get(hash);
    return current !== undefined && isLive(current, now);
  }

  private async flushUse(): Promise<void> {
    if (this.used.size === 0) return;
    const batch = new Map(this.used);
    this.used.clear();
    try {
      await this.store.touchKeys(batch);
    } catch (err) {
      // Last use is a hint for operators; a store outage must not pile it up or fail requests.
      this.options.onError?.(err);
    }
  }
}
