/**
 * What a rate limiter answers for one request. `take` fills one of these
 * (the caller's, or the limiter's own scratch object, valid until the next
 * `take` on that limiter), so that deciding allocates nothing.
 */
export interface Decision {
  /** Whether the request may go on (it then cost 1 token). */
  allowed: boolean;
  /** Whole tokens left after this request (0 when refused). */
  remaining: number;
  /** Seconds until the bucket is full again, rounded up. */
  resetS: number;
  /** When refused: whole seconds (at least 1) after which one request will pass; 0 when allowed. */
  retryAfterS: number;
}

/** The namespaces of buckets: per API key, per client address for failed authentications, per client address for anonymous callers. */
export type Namespace = 'key' | 'authfail' | 'anon';

export const NAMESPACES: readonly Namespace[] = ['key', 'authfail', 'anon'];

export const newDecision = (): Decision => ({ allowed: false, remaining: 0, resetS: 0, retryAfterS: 0 });
