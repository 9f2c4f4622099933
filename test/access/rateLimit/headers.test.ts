import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ceilSeconds, limitHeader, policyHeader, retryAfterSeconds } from '../../../src/access/rateLimit/headers.js';

test('policyHeader: "default";q=B;w=ceil(B/R), exact, decimal rates included', () => {
  assert.equal(policyHeader(200, 20), '"default";q=200;w=10');
  assert.equal(policyHeader(100, 1), '"default";q=100;w=100');
  assert.equal(policyHeader(100, 3), '"default";q=100;w=34');
  assert.equal(policyHeader(10, 0.5), '"default";q=10;w=20');
  assert.equal(policyHeader(3, 0.3), '"default";q=3;w=10'); // 3 / 0.3 is 10.000000000000002 in binary
  assert.equal(policyHeader(1, 1000), '"default";q=1;w=1');
  assert.equal(policyHeader(200, 20), '"default";q=200;w=10'); // memoised answer is the same
});

test('limitHeader: "default";r=N;t=T from a decision', () => {
  assert.equal(limitHeader({ allowed: true, remaining: 199, resetS: 1, retryAfterS: 0 }), '"default";r=199;t=1');
  assert.equal(limitHeader({ allowed: false, remaining: 0, resetS: 10, retryAfterS: 1 }), '"default";r=0;t=10');
});

test('retryAfterSeconds: whole seconds, at least 1; ceilSeconds ignores binary noise', () => {
  assert.equal(retryAfterSeconds(1, 0.5), 2);
  assert.equal(retryAfterSeconds(1, 1), 1);
  assert.equal(retryAfterSeconds(0.01, 100), 1);
  assert.equal(retryAfterSeconds(0, 1), 1);
  assert.equal(retryAfterSeconds(1, 0.3), 4);
  assert.equal(retryAfterSeconds(0.7, 0.1), 7); // 0.7 / 0.1 is 6.999999999999999
  assert.equal(ceilSeconds(0), 0);
  assert.equal(ceilSeconds(-3), 0);
  assert.equal(ceilSeconds(2.0000001), 3);
  assert.equal(ceilSeconds(3 / 0.3), 10);
});
