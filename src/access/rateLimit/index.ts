/** Rate limits (contract section 10): token buckets per key and per client address, per process or shared through Redis. */
export type { Decision, Namespace } from './decision.js';
export { NAMESPACES, newDecision } from './decision.js';
export { ceilSeconds, limitHeader, policyHeader, retryAfterSeconds } from './headers.js';
export { localLimiter } from './localLimiter.js';
export type { RateLimiter, TableOptions } from './rateLimiter.js';
export { DEFAULT_MAX_BUCKETS } from './rateLimiter.js';
export { redisLimiter, type RedisLimiterOptions } from './redisLimiter.js';
