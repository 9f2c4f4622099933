import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ApiError } from '../../src/domain/errors.js';
import { HORIZON_MS, MAX_STEP, STEP_MS } from '../../src/domain/run.js';
import { formatBeijing, parseIssue } from '../../src/domain/time.js';
import { pageOffset, pageSlice, resolveWindow, windowRecords } from '../../src/domain/window.js';

const ISSUE = parseIssue('2026112000')!;
const at = (k: number): number => ISSUE + k * STEP_MS;
const allSteps = Uint16Array.from({ length: MAX_STEP + 1 }, (_, k) => k);

describe('resolveWindow', () => {
  it('defaults to +0h .. +360h of the run', () => {
    const w = resolveWindow(ISSUE, undefined, undefined);
    assert.deepEqual(w, { startMs: ISSUE, endMs: ISSUE + 360 * 3_600_000 });
    assert.equal(HORIZON_MS, 360 * 3_600_000);
  });

  it('keeps a given start or end and defaults only the other', () => {
    assert.deepEqual(resolveWindow(ISSUE, at(4), undefined), { startMs: at(4), endMs: at(MAX_STEP) });
    assert.deepEqual(resolveWindow(ISSUE, undefined, at(8)), { startMs: ISSUE, endMs: at(8) });
  });

  it('start equal to end is a one-instant window', () => {
    assert.deepEqual(resolveWindow(ISSUE, at(3), at(3)), { startMs: at(3), endMs: at(3) });
  });

  it('start later than end throws 40001', () => {
    assert.throws(
      () => resolveWindow(ISSUE, at(5), at(4)),
      (e: unknown) => e instanceof ApiError && e.code === 40001 && e.status === 400 && /start/.test(e.message) && /end/.test(e.message),
    );
    assert.throws(() => resolveWindow(ISSUE, at(5), at(5) - 1), (e: unknown) => e instanceof ApiError && e.code === 40001);
    // a start after the default end is also start > end
    assert.throws(() => resolveWindow(ISSUE, at(MAX_STEP) + 1, undefined), (e: unknown) => e instanceof ApiError && e.code === 40001);
    // an end before the default start likewise
    assert.throws(() => resolveWindow(ISSUE, undefined, ISSUE - 1), (e: unknown) => e instanceof ApiError && e.code === 40001);
  });

  it('with one bound given, the message names the run bound that stood in for the other', () => {
    const message = (f: () => unknown): string => {
      try {
        f();
      } catch (e) {
        return (e as Error).message;
      }
      return assert.fail('no error');
    };
    const early = message(() => resolveWindow(ISSUE, undefined, ISSUE - 1));
    assert.match(early, /^Query parameter end must not be earlier than start, which is the run's issue time \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+08:00 when not given\.$/);
    assert.ok(early.includes(formatBeijing(ISSUE)));
    const late = message(() => resolveWindow(ISSUE, at(MAX_STEP) + 1, undefined));
    assert.ok(late.includes(`end, which is the run's last step ${formatBeijing(at(MAX_STEP))} when not given.`), late);
    assert.equal(message(() => resolveWindow(ISSUE, at(5), at(4))), 'Query parameter start must not be later than end.');
  });
});

describe('windowRecords', () => {
  it('the default window holds the whole run', () => {
    assert.deepEqual(windowRecords(allSteps, ISSUE, resolveWindow(ISSUE, undefined, undefined)), { from: 0, to: MAX_STEP + 1 });
  });

  it('bounds are inclusive', () => {
    assert.deepEqual(windowRecords(allSteps, ISSUE, { startMs: at(4), endMs: at(8) }), { from: 4, to: 9 });
    assert.deepEqual(windowRecords(allSteps, ISSUE, { startMs: at(7), endMs: at(7) }), { from: 7, to: 8 });
    assert.deepEqual(windowRecords(allSteps, ISSUE, { startMs: at(MAX_STEP), endMs: at(MAX_STEP) }), {
      from: MAX_STEP,
      to: MAX_STEP + 1,
    });
  });

  it('bounds between grid points take only the records inside', () => {
    assert.deepEqual(windowRecords(allSteps, ISSUE, { startMs: at(4) + 1, endMs: at(8) - 1 }), { from: 5, to: 8 });
    assert.deepEqual(windowRecords(allSteps, ISSUE, { startMs: at(4) - 1, endMs: at(8) + 1 }), { from: 4, to: 9 });
    const none = windowRecords(allSteps, ISSUE, { startMs: at(4) + 60_000, endMs: at(5) - 60_000 });
    assert.equal(none.to - none.from, 0);
  });

  it('a window between two grid points holds nothing', () => {
    const r = windowRecords(allSteps, ISSUE, { startMs: at(4) + 1, endMs: at(4) + 2 });
    assert.equal(r.to - r.from, 0);
  });

  it('works over gapped steps', () => {
    const steps = Uint16Array.from([0, 4, 8, 12, 100, 1440]);
    assert.deepEqual(windowRecords(steps, ISSUE, { startMs: at(1), endMs: at(11) }), { from: 1, to: 3 });
    assert.deepEqual(windowRecords(steps, ISSUE, { startMs: at(4), endMs: at(12) }), { from: 1, to: 4 });
    assert.deepEqual(windowRecords(steps, ISSUE, { startMs: at(13), endMs: at(99) }), { from: 4, to: 4 });
    assert.deepEqual(windowRecords(steps, ISSUE, { startMs: at(13), endMs: at(1440) }), { from: 4, to: 6 });
    assert.deepEqual(windowRecords(steps, ISSUE, { startMs: at(0), endMs: at(0) }), { from: 0, to: 1 });
  });

  it('a window outside the run is empty', () => {
    const before = windowRecords(allSteps, ISSUE, { startMs: ISSUE - 10 * STEP_MS, endMs: ISSUE - 1 });
    assert.equal(before.to - before.from, 0);
    const after = windowRecords(allSteps, ISSUE, { startMs: at(MAX_STEP) + 1, endMs: at(MAX_STEP + 100) });
    assert.equal(after.to - after.from, 0);
    const empty = windowRecords(new Uint16Array(0), ISSUE, { startMs: ISSUE, endMs: at(MAX_STEP) });
    assert.equal(empty.to - empty.from, 0);
  });

  it('a window reaching past both ends is clipped to the run', () => {
    const steps = Uint16Array.from([2, 3, 5]);
    assert.deepEqual(windowRecords(steps, ISSUE, { startMs: ISSUE - HORIZON_MS, endMs: ISSUE + 2 * HORIZON_MS }), { from: 0, to: 3 });
  });

  it('agrees with a linear scan (property)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: MAX_STEP }), { maxLength: 60 }),
        fc.integer({ min: -2 * STEP_MS, max: HORIZON_MS + 2 * STEP_MS }),
        fc.integer({ min: 0, max: HORIZON_MS }),
        (raw, s, len) => {
          const steps = Uint16Array.from(raw.sort((a, b) => a - b));
          const w = { startMs: ISSUE + s, endMs: ISSUE + s + len };
          const { from, to } = windowRecords(steps, ISSUE, w);
          const inside = [...steps].filter((k) => at(k) >= w.startMs && at(k) <= w.endMs);
          assert.deepEqual([...steps.slice(from, to)], inside);
        },
      ),
    );
  });
});

describe('pageSlice', () => {
  it('pages are 1-based', () => {
    assert.deepEqual(pageSlice(1441, 1, 96), { from: 0, to: 96 });
    assert.deepEqual(pageSlice(1441, 2, 96), { from: 96, to: 192 });
  });

  it('the last page may be partial', () => {
    // 1441 = 15 * 96 + 1
    assert.deepEqual(pageSlice(1441, 15, 96), { from: 1344, to: 1440 });
    assert.deepEqual(pageSlice(1441, 16, 96), { from: 1440, to: 1441 });
    assert.deepEqual(pageSlice(10, 4, 3), { from: 9, to: 10 });
  });

  it('a page past the end is empty', () => {
    const p = pageSlice(1441, 17, 96);
    assert.equal(p.to - p.from, 0);
    const q = pageSlice(10, 1_000_000, 1441);
    assert.equal(q.to - q.from, 0);
    const z = pageSlice(0, 1, 96);
    assert.deepEqual(z, { from: 0, to: 0 });
  });

  it('one page can hold the whole window', () => {
    assert.deepEqual(pageSlice(1441, 1, 1441), { from: 0, to: 1441 });
    assert.deepEqual(pageSlice(5, 1, 96), { from: 0, to: 5 });
  });

  it('pages tile the records without overlap or gap (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 1, max: 200 }), (total, size) => {
        let next = 0;
        for (let page = 1; page <= Math.ceil(total / size) + 1; page++) {
          const { from, to } = pageSlice(total, page, size);
          if (to > from) {
            assert.equal(from, next);
            assert.ok(to - from <= size);
          }
          next = to;
        }
        assert.equal(next, total);
      }),
    );
  });
});

describe('pageOffset', () => {
  it('is (page - 1) * size', () => {
    assert.equal(pageOffset(1, 96), 0);
    assert.equal(pageOffset(2, 96), 96);
    assert.equal(pageOffset(16, 96), 1440);
  });

  it('clamps huge pages into the 32-bit integer range', () => {
    assert.equal(pageOffset(Number.MAX_SAFE_INTEGER, 1441), 2 ** 31 - 1);
    assert.equal(pageOffset(2 ** 31, 10_000), 2 ** 31 - 1);
  });
});
