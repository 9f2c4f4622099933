import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { alignRuns, changeOf, gridBounds, type Item } from '../../web/src/series.js';
import { apiParamText, issueStartMs, STEP_MS } from '../../web/src/time.js';

const MIN = 60_000;
const H = 60 * MIN;
const ISSUE = issueStartMs('2026112500'); // 2026-11-25 08:00 Beijing
const PREVIOUS = issueStartMs('2026112412'); // 12 h earlier
const same = (_f: string, v: number): number => v;

/** An item as the API writes it: Beijing time with seconds and offset. */
const item = (ms: number, values: Record<string, number | null>): Item => ({
  date_time: apiParamText(ms).replace('+08:00', ':00+08:00'),
  ...values,
});

describe('alignRuns', () => {
  it('puts x on every 15-minute step of the window, in seconds, both ends included', () => {
    const a = alignRuns([], [], ['spd100'], ISSUE, ISSUE + 2 * H, same);
    assert.equal(a.x.length, 9);
    assert.equal(a.x[0], ISSUE / 1000);
    assert.equal(a.x[8], (ISSUE + 2 * H) / 1000);
    for (let k = 1; k < a.x.length; k++) assert.equal(a.x[k]! - a.x[k - 1]!, 900);
    assert.deepEqual(a.current.spd100, new Array(9).fill(null));
    assert.deepEqual(a.previous.spd100, new Array(9).fill(null));
    assert.equal(a.records, 0);
  });

  it('places items by their valid time, the API way', () => {
    const current: Item[] = [
      { date_time: '2026-11-25T08:00:00+08:00', spd100: 5.1, t2m: 270 },
      { date_time: '2026-11-25T08:15:00+08:00', spd100: 5.4, t2m: 271 },
      { date_time: '2026-11-25T00:30:00Z', spd100: 5.8, t2m: 272 },
    ];
    const a = alignRuns(current, [], ['spd100', 't2m'], ISSUE, ISSUE + 30 * MIN, same);
    assert.deepEqual(a.current.spd100, [5.1, 5.4, 5.8]);
    assert.deepEqual(a.current.t2m, [270, 271, 272]);
    assert.equal(a.records, 3);
  });

  it('leaves a missing record as a gap, not interpolated', () => {
    const current = [0, 1, 2, 4, 5].map((k) => item(ISSUE + k * STEP_MS, { spd100: 10 + k }));
    const a = alignRuns(current, [], ['spd100'], ISSUE, ISSUE + 5 * STEP_MS, same);
    assert.deepEqual(a.current.spd100, [10, 11, 12, null, 14, 15]);
    assert.equal(a.records, 5);
  });

  it('keeps a null value null, and a field the items lack is all gaps', () => {
    const current = [
      item(ISSUE, { spd100: 3, tp: 0 }),
      item(ISSUE + STEP_MS, { spd100: null, tp: 0.2 }),
      item(ISSUE + 2 * STEP_MS, { spd100: 4, tp: null }),
    ];
    const a = alignRuns(current, [], ['spd100', 'tp', 'psfc'], ISSUE, ISSUE + 2 * STEP_MS, same);
    assert.deepEqual(a.current.spd100, [3, null, 4]);
    // A zero is a value, not a gap.
    assert.deepEqual(a.current.tp, [0, 0.2, null]);
    assert.deepEqual(a.current.psfc, [null, null, null]);
  });

  it('lines the previous run up on the same steps by valid time', () => {
    // The previous run started 12 h earlier: its lead 12 h + k × 15 min is this run's step k.
    const previous: Item[] = [];
    for (let lead = 0; lead <= 16 * 4; lead++) previous.push(item(PREVIOUS + lead * STEP_MS, { spd100: 100 + lead }));
    const current = [0, 1, 2, 3, 4].map((k) => item(ISSUE + k * STEP_MS, { spd100: k }));
    const a = alignRuns(current, previous, ['spd100'], ISSUE, ISSUE + H, same);
    assert.deepEqual(a.previous.spd100, [148, 149, 150, 151, 152]);
    assert.deepEqual(a.current.spd100, [0, 1, 2, 3, 4]);
    // Records count the selected run only.
    assert.equal(a.records, 5);
  });

  it('applies the conversion per field', () => {
    const convert = (f: string, v: number): number => (f === 't2m' ? v - 273.15 : f === 'tr' ? v / 900 : v);
    const current = [item(ISSUE, { t2m: 273.15, tr: 900, spd100: 7 })];
    const previous = [item(ISSUE, { t2m: 283.15, tr: 1800, spd100: 6 })];
    const a = alignRuns(current, previous, ['t2m', 'tr', 'spd100'], ISSUE, ISSUE, convert);
    assert.deepEqual(a.current, { t2m: [0], tr: [1], spd100: [7] });
    assert.equal(a.previous.t2m![0]!.toFixed(6), '10.000000');
    assert.deepEqual(a.previous.tr, [2]);
    assert.deepEqual(a.previous.spd100, [6]);
  });

  it('ignores records outside the grid', () => {
    const current: Item[] = [
      item(ISSUE - STEP_MS, { spd100: 1 }), // before the window
      item(ISSUE, { spd100: 2 }),
      item(ISSUE + 5 * MIN, { spd100: 3 }), // between steps
      item(ISSUE + STEP_MS, { spd100: 4 }),
      item(ISSUE + 2 * STEP_MS, { spd100: 5 }), // after the window
      { date_time: 'not a time', spd100: 6 },
    ];
    const a = alignRuns(current, [], ['spd100'], ISSUE, ISSUE + STEP_MS, same);
    assert.deepEqual(a.current.spd100, [2, 4]);
    assert.equal(a.x.length, 2);
    assert.equal(a.records, current.length);
  });

  it('is empty when the window is', () => {
    const a = alignRuns([item(ISSUE, { spd100: 1 })], [], ['spd100'], ISSUE + STEP_MS, ISSUE, same);
    assert.deepEqual(a.x, []);
    assert.deepEqual(a.current.spd100, []);
  });
});

describe('changeOf', () => {
  it('is current minus previous, a gap where either is missing', () => {
    assert.deepEqual(changeOf([5, 6, null, 8, null], [4.5, null, 3, 10, null]), [0.5, null, null, -2, null]);
  });

  it('is a gap where the previous column is shorter', () => {
    assert.deepEqual(changeOf([1, 2, 3], [1]), [0, null, null]);
    assert.deepEqual(changeOf([], []), []);
  });

  it('takes the columns alignRuns gives', () => {
    const current = [0, 1, 2].map((k) => item(ISSUE + k * STEP_MS, { spd100: 10 + k }));
    const previous = [0, 2].map((k) => item(ISSUE + k * STEP_MS, { spd100: 9 }));
    const a = alignRuns(current, previous, ['spd100'], ISSUE, ISSUE + 2 * STEP_MS, same);
    assert.deepEqual(changeOf(a.current.spd100!, a.previous.spd100!), [1, null, 3]);
  });
});

describe('gridBounds', () => {
  const HORIZON = 1440;

  it('is the whole run without a window', () => {
    assert.deepEqual(gridBounds(ISSUE, HORIZON, undefined, undefined), [ISSUE, ISSUE + 360 * H]);
  });

  it('cuts the window to the horizon', () => {
    assert.deepEqual(gridBounds(ISSUE, HORIZON, ISSUE - 6 * H, ISSUE + 400 * H), [ISSUE, ISSUE + 360 * H]);
    assert.deepEqual(gridBounds(ISSUE, HORIZON, ISSUE + 24 * H, undefined), [ISSUE + 24 * H, ISSUE + 360 * H]);
    assert.deepEqual(gridBounds(ISSUE, HORIZON, undefined, ISSUE + 24 * H), [ISSUE, ISSUE + 24 * H]);
  });

  it('rounds inward to the 15-minute grid', () => {
    assert.deepEqual(gridBounds(ISSUE, HORIZON, ISSUE + 7 * MIN, ISSUE + 2 * H + 7 * MIN), [ISSUE + STEP_MS, ISSUE + 2 * H]);
    assert.deepEqual(gridBounds(ISSUE, HORIZON, ISSUE + 14 * MIN, ISSUE + 2 * H - 1), [ISSUE + STEP_MS, ISSUE + 2 * H - STEP_MS]);
    assert.deepEqual(gridBounds(ISSUE, HORIZON, ISSUE + STEP_MS, ISSUE + 2 * H), [ISSUE + STEP_MS, ISSUE + 2 * H]);
    // Before the run's start, rounding still lands on the run's grid.
    assert.deepEqual(gridBounds(ISSUE, HORIZON, ISSUE - 7 * MIN, ISSUE + 361 * H - 1), [ISSUE, ISSUE + 360 * H]);
  });

  it('gives an empty grid for a window beside the run', () => {
    const [from, to] = gridBounds(ISSUE, HORIZON, ISSUE + 400 * H, ISSUE + 401 * H);
    assert.ok(to < from);
    assert.equal(alignRuns([], [], ['spd100'], from, to, same).x.length, 0);
    const [from2, to2] = gridBounds(ISSUE, HORIZON, ISSUE + 5 * MIN, ISSUE + 10 * MIN);
    assert.ok(to2 < from2);
  });

  it('feeds alignRuns the horizon: 1441 steps', () => {
    const [from, to] = gridBounds(ISSUE, HORIZON, undefined, undefined);
    const a = alignRuns([item(ISSUE + 360 * H, { spd100: 9 })], [], ['spd100'], from, to, same);
    assert.equal(a.x.length, 1441);
    assert.equal(a.current.spd100![1440], 9);
  });
});
