/**
 * The body key: equal for answers whose bytes are equal by construction, different (text and hash) when
 * any part that decides the bytes differs.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseIssue } from '../../src/domain/time.js';
import { BodyKey } from '../../src/http/bodyKey.js';
import type { ForecastPlan } from '../../src/query/forecastQuery.js';
import type { Farm, StoredRun } from '../../src/store/store.js';

interface Parts {
  farm: Farm;
  issue: string;
  revision: number;
  elements: number[];
  from: number;
  to: number;
  csv: boolean;
  page: number;
  size: number;
}

const FARM: Farm = { farmId: 'WF-001', lat: 40.25, lon: 116.5, name: 'North', extra: [] };
const BASE: Parts = { farm: FARM, issue: '2026112000', revision: 7, elements: [0, 3, 5], from: 0, to: 96, csv: false, page: 1, size: 96 };

/** The parts of a plan the key reads: what decides an answer's bytes. */
function key(p: Parts): BodyKey {
  const plan = {
    farm: p.farm,
    run: { issue: p.issue, revision: p.revision } as StoredRun,
    issueMs: parseIssue(p.issue)!,
    elements: p.elements,
    from: p.from,
    to: p.to,
  } as ForecastPlan;
  return new BodyKey(plan, p.csv, p.page, p.size);
}

test('the same parts give the same key, whatever farm record object holds them', () => {
  const a = key(BASE);
  const b = key({ ...BASE, farm: { ...FARM }, elements: [0, 3, 5] });
  assert.equal(a.hash, b.hash);
  assert.equal(a.text, b.text);
  assert.equal(a.text, a.text, 'the text is made once and kept');
});

test('every part that decides the bytes changes both the text and the hash', () => {
  const changes: [string, Partial<Parts>][] = [
    ['site', { farm: { ...FARM, farmId: 'WF-002' } }],
    ['latitude', { farm: { ...FARM, lat: 40.250000001 } }],
    ['longitude', { farm: { ...FARM, lon: -116.5 } }],
    ['issue', { issue: '2026112012' }],
    ['revision', { revision: 8 }],
    ['fields', { elements: [0, 3] }],
    ['first record', { from: 1 }],
    ['last record', { to: 95 }],
    ['page', { page: 2 }],
    ['size', { size: 48 }],
    ['format', { csv: true }],
  ];
  const base = key(BASE);
  const seen = new Map<number, string>([[base.hash, 'base']]);
  for (const [what, change] of changes) {
    const k = key({ ...BASE, ...change });
    assert.notEqual(k.text, base.text, what);
    assert.ok(!seen.has(k.hash), `${what}: hash equal to that of ${seen.get(k.hash)}`);
    seen.set(k.hash, what);
  }
});

test('a CSV key ignores the JSON page and size, which do not decide its bytes', () => {
  const a = key({ ...BASE, csv: true, page: 1, size: 96 });
  const b = key({ ...BASE, csv: true, page: 3, size: 24 });
  assert.equal(a.text, b.text);
  assert.equal(a.hash, b.hash);
});
