import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseStatuses, runStates, type RunArrivalFacts } from '../../src/domain/runState.js';

const H = 3_600_000;
const run = (issue: string, farms: number, first: number, lastArrival = first, last = lastArrival): RunArrivalFacts => ({
  issue,
  farms,
  firstPublishedAt: first,
  lastArrivalAt: lastArrival,
  lastPublishedAt: last,
});

describe('runStates', () => {
  test('receiving until every expected site holds data, then complete at the last arrival', () => {
    const [r] = runStates([run('2026112000', 2, 0, 10)], 3, 3 * H, H);
    assert.deepEqual(r, { issue: '2026112000', status: 'receiving', farms: 2, farmsExpected: 3, availableAt: 0, completedAt: null, updatedAt: 10 });
    const [c] = runStates([run('2026112000', 3, 0, 20, 30)], 3, 3 * H, H);
    assert.equal(c!.status, 'complete');
    assert.equal(c!.completedAt, 20, 'when the last site first arrived, not its replacement');
    assert.equal(c!.updatedAt, 30);
  });

  test('partial once the deadline passes first; complete when the last site arrives late, keeping completed_at', () => {
    const [before] = runStates([run('a', 2, 0)], 3, 3 * H, 3 * H - 1);
    assert.equal(before!.status, 'receiving');
    const [p] = runStates([run('a', 2, 0)], 3, 3 * H, 3 * H);
    assert.equal(p!.status, 'partial');
    assert.equal(p!.completedAt, 3 * H);
    const [late] = runStates([run('a', 3, 0, 5 * H)], 3, 3 * H, 6 * H);
    assert.equal(late!.status, 'complete');
    assert.equal(late!.completedAt, 3 * H, 'it left receiving at the deadline');
  });

  test('superseded once a newer run is complete or partial, not while the newer one is receiving', () => {
    const states = runStates([run('c', 1, 10 * H), run('b', 3, 5 * H, 6 * H), run('a', 3, 0, H)], 3, 3 * H, 10 * H + 1);
    assert.deepEqual(states.map((s) => s.status), ['receiving', 'complete', 'superseded']);
    const later = runStates([run('c', 1, 10 * H), run('b', 3, 5 * H, 6 * H), run('a', 3, 0, H)], 3, 3 * H, 13 * H);
    assert.deepEqual(later.map((s) => s.status), ['partial', 'superseded', 'superseded']);
    assert.equal(later[1]!.completedAt, 6 * H, 'a superseded run keeps when it completed');
  });

  test('expected sites come from the caller: fewer expected, sooner complete', () => {
    assert.equal(runStates([run('a', 1, 0)], 1, H, 0)[0]!.status, 'complete');
    assert.equal(runStates([run('a', 1, 0)], 2, H, 0)[0]!.status, 'receiving');
  });
});

describe('parseStatuses', () => {
  test('one or several names, spaces around them ignored; the first unknown one is named', () => {
    assert.deepEqual(parseStatuses('complete'), { statuses: new Set(['complete']) });
    assert.deepEqual(parseStatuses('complete, partial'), { statuses: new Set(['complete', 'partial']) });
    assert.deepEqual(parseStatuses('complete,done'), { unknown: 'done' });
    assert.deepEqual(parseStatuses('complete,'), { unknown: '' });
    assert.deepEqual(parseStatuses('COMPLETE'), { unknown: 'COMPLETE' });
  });
});
