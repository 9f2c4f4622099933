/**
 * Webhook signatures as Standard Webhooks define them (INTERFACE.md section
 * 14): each endpoint has a secret `whsec_` + base64 of 32 random bytes; every
 * attempt carries `webhook-id` (the same on every attempt), `webhook-timestamp`
 * (Unix seconds of the attempt) and `webhook-signature: v1,<base64 of
 * HMAC-SHA256(secret bytes, "<id>.<timestamp>.<body>")>`, where the secret
 * bytes are the base64 decoding of the part after `whsec_`.
 */
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
/** Random bytes in a new secret. */
export const SECRET_BYTES = 32;

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes. */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The key a secret stands for (the base64 after `whsec_`); throws on anything else. */
export function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error(`a webhook secret starts with "${SECRET_PREFIX}"`);
  const b64 = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 !== 0) throw new Error('a webhook secret is base64 after its prefix');
  return Buffer.from(b64, 'base64');
}

/** `v1,` + base64 of HMAC-SHA256(key, "<msgId>.<timestamp>.<body>"). */
export function sign(secret: string, msgId: string, timestampS: number, body: string): string {
  const mac = createHmac('sha256', secretKey(secret)).update(`${msgId}.${timestampS}.${body}`, 'utf8').digest('base64');
  return `v1,${mac}`;
}

export interface SignedHeaders {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
}

/** The three headers of an attempt made at `nowMs`. */
export function signedHeaders(secret: string, msgId: string, body: string, nowMs: number): SignedHeaders {
  const timestamp = Math.floor(nowMs / 1000);
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': sign(secret, msgId, timestamp, body),
  };
}
