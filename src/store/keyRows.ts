/**
 * How API keys are laid out in store rows, the same in every adapter, and the
 * checks both adapters make before writing one. Sites are a JSON array of ids
 * (null = every site); integer columns may arrive as text (PostgreSQL's
 * bigint), admin as 0/1 (SQLite) or a boolean (PostgreSQL).
 */
import type { NewKey, StoredKey } from './store.js';

export interface KeyRow {
  id: number | string;
  name: string;
  hash: string;
  prefix: string;
  farms: string | null;
  rate: number | null;
  burst: number | string | null;
  admin: number | boolean;
  created_at: number | string;
  expires_at: number | string | null;
  revoked_at: number | string | null;
  last_used_at: number | string | null;
}

export const KEY_COLUMNS = 'id, name, hash, prefix, farms, rate, burst, admin, created_at, expires_at, revoked_at, last_used_at';

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

export const toStoredKey = (r: KeyRow): StoredKey => ({
  id: Number(r.id),
  name: r.name,
  hash: r.hash,
  prefix: r.prefix,
  farms: r.farms === null ? null : Object.freeze(JSON.parse(r.farms) as string[]),
  rate: r.rate,
  burst: num(r.burst),
  admin: r.admin === true || r.admin === 1,
  createdAt: Number(r.created_at),
  expiresAt: num(r.expires_at),
  revokedAt: num(r.revoked_at),
  lastUsedAt: num(r.last_used_at),
});

export const farmsText = (k: NewKey): string | null => (k.farms === null ? null : JSON.stringify(k.farms));

/** Display prefixes are short; a longer one could be a whole key (42 characters) handed in by mistake. */
const MAX_PREFIX = 16;

/**
 * Refuses what must not be written: a "hash" that is not 64 hex digits (a key's
 * text, say) or a prefix long enough to hold one. The messages name no value,
 * since a value may be a key.
 */
export function checkKeyText(k: { readonly hash: string; readonly prefix: string }): void {
  if (typeof k.hash !== 'string' || !/^[0-9a-f]{64}$/.test(k.hash)) throw new TypeError('a key hash must be 64 lowercase hex digits');
  if (typeof k.prefix !== 'string' || k.prefix.length === 0 || k.prefix.length > MAX_PREFIX) {
    throw new TypeError(`a key prefix must be 1 to ${MAX_PREFIX} characters`);
  }
}

/** Checks a new key's fields; the schema's CHECKs repeat the numeric ones. */
export function checkNewKey(k: NewKey): void {
  if (typeof k.name !== 'string' || k.name.length === 0) throw new TypeError('a key needs a name');
  checkKeyText(k);
  if (k.farms !== null && !(Array.isArray(k.farms) && k.farms.every((f) => typeof f === 'string' && f !== ''))) {
    throw new TypeError('a key\'s farms must be null or a list of farm ids');
  }
  if (k.rate !== null && !(Number.isFinite(k.rate) && k.rate > 0)) throw new RangeError('a key\'s rate must be above 0');
  if (k.burst !== null && !(Number.isInteger(k.burst) && k.burst >= 1)) throw new RangeError('a key\'s burst must be a whole number, at least 1');
  if (typeof k.admin !== 'boolean') throw new TypeError('a key\'s admin flag must be true or false');
}

export function checkTime(what: string, ms: number): void {
  if (!Number.isSafeInteger(ms)) throw new RangeError(`${what} must be whole epoch milliseconds`);
}
