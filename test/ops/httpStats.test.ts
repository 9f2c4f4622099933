/** Route templates from URLs, and the counts and buckets of answers. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DURATION_BUCKETS_S, HttpStats, OTHER_ROUTE } from '../../src/ops/httpStats.js';

function stats(): HttpStats {
  const s = new HttpStats();
  for (const r of ['/api/v1/forecast', '/api/v1/forecast/issues', '/api/v1/farms', '/docs', '/docs/static/*', '/api/v1/webhooks/:name', '/']) s.addRoute(r);
  return s;
}

describe('routeOf', () => {
  test('a URL is counted under the template of the route that takes it, never under itself', () => {
    const s = stats();
    const cases: Array<[string, string]> = [
      ['/api/v1/forecast?farm_id=WF_A&size=4', '/api/v1/forecast'],
      ['/api/v1/forecast', '/api/v1/forecast'],
      ['/api/v1/forecast/', '/api/v1/forecast'],
      ['/api/v1/forecast/?farm_id=WF_A', '/api/v1/forecast'],
      ['/api/v1/forecast/issues?farm_id=WF_A', '/api/v1/forecast/issues'],
      ['/api/v1/forecastx', OTHER_ROUTE],
      ['/api/v1/forecast/WF_A', OTHER_ROUTE],
      ['/docs', '/docs'],
      ['/docs/static/index.css', '/docs/static/*'],
      ['/api/v1/webhooks/desk', '/api/v1/webhooks/:name'],
      ['/api/v1/webhooks/desk/more', OTHER_ROUTE],
      ['/', '/'],
      ['/?x=1', '/'],
      ['/WF_A_2026112000.csv', OTHER_ROUTE],
      ['', OTHER_ROUTE],
      ['*', OTHER_ROUTE],
    ];
    // Twice, in both orders, so that the memo of the last route is exercised from every route.
    for (const list of [cases, [...cases].reverse(), cases]) {
      for (const [url, route] of list) assert.equal(s.routeOf(url).route, route, url);
    }
  });

  test('adding a template again changes nothing', () => {
    const s = stats();
    const before = s.routes().length;
    s.addRoute('/api/v1/forecast');
    s.addRoute('/docs/static/*');
    s.addRoute('/api/v1/webhooks/:name');
    assert.equal(s.routes().length, before);
  });
});

describe('record', () => {
  test('counts by status code, and each duration into the first bucket whose bound it does not exceed', () => {
    const s = stats();
    const route = s.routeOf('/api/v1/farms');
    s.record('/api/v1/farms', 200, 0);
    s.record('/api/v1/farms?page=2', 200, DURATION_BUCKETS_S[0]! * 1000); // on the bound: in that bucket (le)
    s.record('/api/v1/farms', 404, DURATION_BUCKETS_S[0]! * 1000 + 1e-9);
    s.record('/api/v1/farms', 503, 60_000); // beyond the largest bound
    assert.equal(route.codes[200], 2);
    assert.equal(route.codes[404], 1);
    assert.equal(route.codes[503], 1);
    assert.equal(route.count, 4);
    assert.deepEqual([...route.buckets.slice(0, 2)], [2, 1]);
    assert.equal(route.buckets[DURATION_BUCKETS_S.length], 1);
    assert.equal(route.buckets.reduce((a, b) => a + b, 0), 4);
    assert.ok(Math.abs(route.sumMs - (0.1 + 0.1 + 1e-9 + 60_000)) < 1e-6);
    assert.equal(s.other.count, 0);
  });
});
