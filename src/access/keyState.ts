/**
 * The state of a stored key at a moment, as `keys list` shows it and as
 * authentication decides on it. A revocation wins over everything; a key with
 * an end in the future (rolled, in its grace time) still works and is
 * `expiring`; at its end it is `expired` and stops working.
 */
import type { StoredKey } from '../store/store.js';

export type KeyState = 'active' | 'expiring' | 'revoked' | 'expired';

export function keyState(k: Pick<StoredKey, 'expiresAt' | 'revokedAt'>, now: number): KeyState {
  if (k.revokedAt !== null) return 'revoked';
  if (k.expiresAt === null) return 'active';
  return k.expiresAt > now ? 'expiring' : 'expired';
}

/** Whether the key works at `now` (the store's notion of a live key: not revoked, not past its end). */
export const isLive = (k: Pick<StoredKey, 'expiresAt' | 'revokedAt'>, now: number): boolean =>
  k.revokedAt === null && (k.expiresAt === null || k.expiresAt > now);
