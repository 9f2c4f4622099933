/**
 * The parts of key handling that need node:crypto, kept apart so that
 * keyFormat.ts stays pure: the stored hash of a key, and a new key drawn from
 * the CSPRNG with what the store keeps of it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { formatKey, keyPrefix } from './keyFormat.js';

/**
 * SHA-256 of the key text, lowercase hex: what the store keeps and looks keys
 * up by. No salt or slow hash is needed: a key carries 190 random bits, so its
 * hash cannot be reversed by guessing, and the lookup must stay an index probe.
 */
export const hashKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

export interface MintedKey {
  /** The key itself: shown once, never stored. */
  readonly key: string;
  readonly hash: string;
  readonly prefix: string;
}

/** A new random key with its hash and display prefix. */
export function mintKey(): MintedKey {
  const key = formatKey((n) => randomBytes(n));
  return { key, hash: hashKey(key), prefix: keyPrefix(key) };
}
