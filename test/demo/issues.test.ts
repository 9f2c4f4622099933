import { test } from 'node:test';
import assert from 'node:assert/strict';
import { demoIssues } from '../../src/demo/sites.js';

const H = 3_600_000;

test('demoIssues: the last runs at 00 and 12 UTC at or before now, newest first', () => {
  const now = Date.UTC(2025, 2, 1, 7, 42, 13, 5);
  const issues = demoIssues(now, 4);
  assert.deepEqual(issues, [
    Date.UTC(2025, 2, 1, 0),
    Date.UTC(2025, 1, 28, 12),
    Date.UTC(2025, 1, 28, 0),
    Date.UTC(2025, 1, 27, 12),
  ]);
});

test('demoIssues: a run issued exactly now is included; spacing is 12 h', () => {
  const now = Date.UTC(2024, 11, 31, 12);
  assert.deepEqual(demoIssues(now, 1), [now]);
  assert.deepEqual(demoIssues(now - 1, 1), [Date.UTC(2024, 11, 31, 0)]);
  for (const t of [0, 1, 11 * H, 12 * H + 1, Date.UTC(2030, 5, 15, 23, 59, 59, 999)]) {
    const list = demoIssues(t, 6);
    assert.equal(list.length, 6);
    assert.ok(list[0]! <= t && t - list[0]! < 12 * H);
    for (let i = 0; i < list.length; i++) {
      const d = new Date(list[i]!);
      assert.ok(d.getUTCHours() === 0 || d.getUTCHours() === 12);
      assert.equal(d.getUTCMinutes() + d.getUTCSeconds() + d.getUTCMilliseconds(), 0);
      if (i > 0) assert.equal(list[i - 1]! - list[i]!, 12 * H);
    }
  }
});

test('demoIssues: no runs asked for, none returned', () => {
  assert.deepEqual(demoIssues(Date.UTC(2025, 0, 1), 0), []);
});
