import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eventId, parseLastEventId, RunFeed, splitEventId, type FeedEvent } from '../../src/events/feed.js';
import type { EventEntry } from '../../src/store/store.js';

const H = 3_600_000;
const T0 = Date.UTC(2026, 10, 20, 1, 0, 0); // 09:00 Beijing time
const DEADLINE = 3 * H;

class Log {
  private id = 0;
  readonly entries: EventEntry[] = [];
  run(farmId: string, issue: string, at: number, revision = this.id + 1): EventEntry {
    const e: EventEntry = { id: ++this.id, kind: 'run', farmId, issue, revision, at };
    this.entries.push(e);
    return e;
  }
  tick(at: number): EventEntry {
    const e: EventEntry = { id: ++this.id, kind: 'tick', at };
    this.entries.push(e);
    return e;
  }
}

const feedOf = (sites: readonly string[], expected = sites.length): RunFeed => {
  const set = new Set(sites);
  return new RunFeed({ inScope: (f) => set.has(f), expected: () => expected, deadlineMs: DEADLINE });
};
const issues = (events: readonly FeedEvent[]): string[] =>
  events.filter((e) => e.event === 'issue').map((e) => `${e.issue}:${e.status}:${e.farms}/${e.farmsExpected}`);

describe('RunFeed', () => {
  test('a run seen first is receiving, then complete when its last site arrives; run events carry the publication', () => {
    const log = new Log();
    const feed = feedOf(['a', 'b', 'c']);
    const first = feed.apply(log.run('a', '2026112000', T0, 7));
    assert.deepEqual(first.map((e) => [e.id, e.event]), [[10, 'run'], [11, 'issue']]);
    assert.deepEqual(JSON.parse(first[0]!.data), { farm_id: 'a', issue: '2026112000', revision: 7, published_at: '2026-11-20T09:00:00+08:00' });
    assert.deepEqual(JSON.parse(first[1]!.data), { issue: '2026112000', status: 'receiving', farms: 1, farms_expected: 3 });
    assert.ok(feed.receiving());
    const second = feed.apply(log.run('b', '2026112000', T0 + 1000));
    assert.deepEqual(second.map((e) => e.event), ['run'], 'a count change alone is no state change');
    const third = feed.apply(log.run('c', '2026112000', T0 + 2000));
    assert.deepEqual(issues(third), ['2026112000:complete:3/3']);
    assert.equal(third[1]!.id, 31);
    assert.equal(feed.receiving(), false);
    for (const e of [...first, ...second, ...third]) assert.ok(!e.data.includes('\n'));
  });

  test('partial at the first tick past the deadline, complete when the late file arrives', () => {
    const log = new Log();
    const feed = feedOf(['a', 'b']);
    feed.apply(log.run('a', '2026112000', T0));
    assert.deepEqual(feed.apply(log.tick(T0 + DEADLINE - 5000)), [], 'before the deadline nothing changes');
    const tick = feed.apply(log.tick(T0 + DEADLINE));
    assert.deepEqual(issues(tick), ['2026112000:partial:1/2']);
    assert.equal(tick[0]!.id, eventId(3, 1));
    assert.equal(feed.receiving(), false, 'a partial run needs no more ticks');
    assert.deepEqual(feed.apply(log.tick(T0 + DEADLINE + 5000)), []);
    const late = feed.apply(log.run('b', '2026112000', T0 + 4 * H));
    assert.deepEqual(issues(late), ['2026112000:complete:2/2']);
  });

  test('a newer run completing supersedes the older one; newest issue first', () => {
    const log = new Log();
    const feed = feedOf(['a']);
    assert.deepEqual(issues(feed.apply(log.run('a', '2026112000', T0))), ['2026112000:complete:1/1']);
    const newer = feed.apply(log.run('a', '2026112012', T0 + 12 * H));
    assert.deepEqual(issues(newer), ['2026112012:complete:1/1', '2026112000:superseded:1/1']);
    assert.deepEqual(newer.map((e) => e.id), [20, 21, 22]);
  });

  test('a newer run still receiving does not supersede; an older run arriving late is placed by issue', () => {
    const log = new Log();
    const feed = feedOf(['a', 'b']);
    feed.apply(log.run('a', '2026112000', T0));
    feed.apply(log.run('b', '2026112000', T0));
    assert.deepEqual(issues(feed.apply(log.run('a', '2026112012', T0 + 12 * H))), ['2026112012:receiving:1/2']);
    // A file of an older run than both: superseded as soon as it is seen.
    assert.deepEqual(issues(feed.apply(log.run('a', '2026111912', T0 + 12 * H + 1))), ['2026111912:superseded:1/2']);
    assert.deepEqual(issues(feed.apply(log.run('b', '2026112012', T0 + 13 * H))), ['2026112012:complete:2/2', '2026112000:superseded:2/2']);
  });

  test('a replaced site gives a run event and no issue event', () => {
    const log = new Log();
    const feed = feedOf(['a', 'b']);
    feed.apply(log.run('a', '2026112000', T0));
    const again = feed.apply(log.run('a', '2026112000', T0 + 60_000, 42));
    assert.deepEqual(again.map((e) => e.event), ['run']);
    assert.equal(JSON.parse(again[0]!.data).revision, 42);
    feed.apply(log.run('b', '2026112000', T0 + 120_000));
    assert.deepEqual(feed.apply(log.run('b', '2026112000', T0 + 180_000)).map((e) => e.event), ['run']);
  });

  test('entries of sites outside the scope give nothing; states are counted over the scope', () => {
    const log = new Log();
    const all = feedOf(['a', 'b', 'c']);
    const scoped = feedOf(['a']);
    const e1 = log.run('b', '2026112000', T0);
    assert.equal(all.apply(e1).length, 2);
    assert.deepEqual(scoped.apply(e1), [], 'another site of a run it has not seen: nothing');
    const e2 = log.run('a', '2026112000', T0 + 1000);
    assert.deepEqual(issues(scoped.apply(e2)), ['2026112000:complete:1/1']);
    assert.deepEqual(issues(all.apply(e2)), []);
    assert.equal(all.apply(e2).length, 0, 'an entry applied twice gives nothing');
    // A later hidden entry mentions nothing to the scoped feed, nor ids beyond its own.
    assert.deepEqual(scoped.apply(log.run('c', '2026112000', T0 + 2000)), []);
    assert.deepEqual(scoped.apply(log.tick(T0 + DEADLINE)), []);
  });

  test('ticks only matter while a run receives; expected is asked at each entry', () => {
    let expected = 1;
    const feed = new RunFeed({ inScope: () => true, expected: () => expected, deadlineMs: DEADLINE });
    const log = new Log();
    assert.deepEqual(issues(feed.apply(log.tick(T0))), [], 'no runs: nothing');
    feed.apply(log.run('a', '2026112000', T0));
    expected = 2; // a site registered since
    assert.deepEqual(issues(feed.apply(log.tick(T0 + 5000))), ['2026112000:receiving:1/2']);
    assert.deepEqual(issues(feed.apply(log.tick(T0 + DEADLINE))), ['2026112000:partial:1/2']);
  });

  test('more than nine changes at one entry: nine are told, the rest after the next entry', () => {
    const log = new Log();
    const feed = feedOf(['a', 'b']);
    for (let d = 10; d < 22; d++) feed.apply(log.run('a', `202611${d}00`, T0));
    // Twelve receiving runs; past their deadline the newest becomes partial and the eleven others superseded.
    const at = feed.apply(log.tick(T0 + DEADLINE));
    assert.equal(at.length, 9);
    assert.deepEqual(at.map((e) => splitEventId(e.id)), [1, 2, 3, 4, 5, 6, 7, 8, 9].map((k) => ({ entryId: 13, k })));
    const next = feed.apply(log.tick(T0 + DEADLINE + 5000));
    assert.deepEqual(issues(next), ['2026111200:superseded:1/2', '2026111100:superseded:1/2', '2026111000:superseded:1/2']);
  });

  test('ids: entry * 10 + k, and back; Last-Event-ID texts', () => {
    assert.equal(eventId(123, 0), 1230);
    assert.equal(eventId(123, 9), 1239);
    assert.deepEqual(splitEventId(1239), { entryId: 123, k: 9 });
    assert.deepEqual(splitEventId(0), { entryId: 0, k: 0 });
    assert.equal(parseLastEventId(' 1230 '), 1230);
    assert.equal(parseLastEventId('0'), 0);
    for (const bad of [undefined, '', '-1', '1.5', '12a', '99999999999999999']) assert.equal(parseLastEventId(bad), undefined, String(bad));
  });

  test('deterministic: two feeds fed the same entries derive the same events; ids increase', () => {
    const log = new Log();
    const sites = ['a', 'b', 'c', 'd'];
    let seed = 7;
    const rnd = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    let t = T0;
    for (let i = 0; i < 400; i++) {
      t += rnd(20) * 60_000;
      if (rnd(3) === 0) log.tick(t);
      else log.run(sites[rnd(4)]!, `202611${20 + rnd(4)}${rnd(2) === 0 ? '00' : '12'}`, t);
    }
    const run = (): FeedEvent[] => {
      const feed = feedOf(['a', 'c'], 2);
      return log.entries.flatMap((e) => feed.apply(e));
    };
    const one = run();
    assert.deepEqual(run(), one);
    assert.ok(one.some((e) => e.status === 'partial') && one.some((e) => e.status === 'superseded'));
    for (let i = 1; i < one.length; i++) assert.ok(one[i]!.id > one[i - 1]!.id);
    for (const e of one.filter((x) => x.event === 'run')) assert.ok(['a', 'c'].includes(JSON.parse(e.data).farm_id));
  });
});

describe('RunFeed clock', () => {
  test('never goes back: an entry stamped before a tick does not undo what the tick decided', () => {
    const log = new Log();
    const feed = feedOf(['a', 'b', 'c']);
    feed.apply(log.run('a', '2026112000', T0));
    assert.deepEqual(issues(feed.apply(log.tick(T0 + DEADLINE))), ['2026112000:partial:1/3']);
    const late = feed.apply(log.run('b', '2026112000', T0 + DEADLINE - 10));
    assert.deepEqual(issues(late), [], 'still partial');
    assert.equal(late[0]!.at, T0 + DEADLINE - 10, 'a run event carries its publication time');
  });

  test('clockUntil: the last first arrival of a run missing sites plus the deadline; none once complete', () => {
    const log = new Log();
    const feed = feedOf(['a', 'b', 'c']);
    assert.equal(feed.clockUntil(), Number.NEGATIVE_INFINITY);
    feed.apply(log.run('a', '2026112000', T0));
    feed.apply(log.run('b', '2026112000', T0 + H));
    feed.apply(log.run('b', '2026112000', T0 + 2 * H)); // a replacement does not move it
    assert.equal(feed.clockUntil(), T0 + H + DEADLINE);
    feed.apply(log.run('c', '2026112000', T0 + 2 * H));
    assert.equal(feed.clockUntil(), Number.NEGATIVE_INFINITY);
  });
});
