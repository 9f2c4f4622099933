import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatViewState, parseViewState, type ViewState } from '../../web/src/viewState.js';

const FULL = '?view=site&farm=WF_GS01&issue=2026112500&start=2026-11-25T08:00&end=2026-11-26T08:00&fields=spd100,t2m';

describe('parseViewState', () => {
  it('reads a full site view', () => {
    assert.deepEqual(parseViewState(FULL), {
      view: 'site',
      farm: 'WF_GS01',
      issue: '2026112500',
      start: '2026-11-25T08:00',
      end: '2026-11-26T08:00',
      fields: ['spd100', 't2m'],
    });
    // The leading ? is optional.
    assert.deepEqual(parseViewState(FULL.slice(1)), parseViewState(FULL));
  });

  it('defaults the view', () => {
    assert.deepEqual(parseViewState(''), { view: 'sites' });
    assert.deepEqual(parseViewState('?'), { view: 'sites' });
    assert.deepEqual(parseViewState('?farm=WF_GS01'), { view: 'site', farm: 'WF_GS01' });
    assert.deepEqual(parseViewState('?view=bogus'), { view: 'sites' });
    assert.deepEqual(parseViewState('?view=bogus&farm=WF_GS01'), { view: 'site', farm: 'WF_GS01' });
    assert.deepEqual(parseViewState('?view=runs'), { view: 'runs' });
    assert.deepEqual(parseViewState('?view=runs&farm=WF_GS01'), { view: 'runs', farm: 'WF_GS01' });
  });

  it("falls back to 'sites' for a site view without a usable farm", () => {
    assert.deepEqual(parseViewState('?view=site'), { view: 'sites' });
    assert.deepEqual(parseViewState('?view=site&farm='), { view: 'sites' });
    assert.deepEqual(parseViewState('?view=site&farm=WF%20GS01'), { view: 'sites' });
    assert.deepEqual(parseViewState('?farm=..%2F..%2Fetc'), { view: 'sites' });
    assert.deepEqual(parseViewState(`?view=site&farm=${'A'.repeat(65)}`), { view: 'sites' });
    assert.deepEqual(parseViewState(`?view=site&farm=${'A'.repeat(64)}`), { view: 'site', farm: 'A'.repeat(64) });
  });

  it('drops a malformed issue, start or end', () => {
    const base = '?view=site&farm=WF_GS01';
    for (const issue of ['20261125', '2026112500x', '202611250', '2026-11-25', '']) {
      assert.equal(parseViewState(`${base}&issue=${issue}`).issue, undefined, issue);
    }
    for (const t of ['2026-11-25%2008:00', '2026-11-25T08:00:00', '2026-11-25T08:00%2B08:00', '2026-11-25', 'tomorrow', '', '2026-02-30T08:00', '2026-11-25T24:00', '2026-13-01T00:00']) {
      const s = parseViewState(`${base}&start=${t}&end=${t}`);
      assert.equal(s.start, undefined, t);
      assert.equal(s.end, undefined, t);
    }
    // The rest survives.
    assert.deepEqual(parseViewState(`${base}&issue=2026112&start=x&end=2026-11-26T08:00`), {
      view: 'site',
      farm: 'WF_GS01',
      end: '2026-11-26T08:00',
    });
  });

  it('keeps only well-formed field names, absent when none', () => {
    assert.deepEqual(parseViewState('?fields=spd100,,T2M,t2m,bad-name,%3Cb%3E').fields, ['spd100', 't2m']);
    assert.equal(parseViewState('?fields=').fields, undefined);
    assert.equal(parseViewState('?fields=,,').fields, undefined);
    assert.equal('fields' in parseViewState('?fields=,,'), false);
    assert.equal(parseViewState('?view=sites').fields, undefined);
  });

  it('keeps the search text, dropping an empty one', () => {
    assert.deepEqual(parseViewState('?q=gansu+wind'), { view: 'sites', q: 'gansu wind' });
    assert.equal('q' in parseViewState('?q='), false);
  });
});

describe('formatViewState', () => {
  it('writes a stable, readable query string', () => {
    assert.equal(
      formatViewState({
        fields: ['spd100', 't2m'],
        end: '2026-11-26T08:00',
        start: '2026-11-25T08:00',
        issue: '2026112500',
        farm: 'WF_GS01',
        view: 'site',
      }),
      FULL,
    );
    assert.equal(formatViewState({ view: 'sites' }), '?view=sites');
  });

  it('leaves out what only a site view uses', () => {
    assert.equal(formatViewState({ view: 'sites', farm: 'WF_GS01', issue: '2026112500', fields: ['t2m'] }), '?view=sites');
    assert.equal(formatViewState({ view: 'runs', q: 'gs', farm: 'WF_GS01' }), '?view=runs&q=gs');
  });

  it('round-trips through parse', () => {
    const states: ViewState[] = [
      { view: 'sites' },
      { view: 'runs' },
      { view: 'sites', q: 'Gansu, wind: 50% & more/#?' },
      { view: 'site', farm: 'WF_GS01' },
      { view: 'site', farm: 'wf.gs-01', issue: '2026112512' },
      { view: 'site', farm: 'WF_GS01', start: '2026-11-25T08:00' },
      {
        view: 'site',
        q: 'gs',
        farm: 'WF_GS01',
        issue: '2026112500',
        start: '2026-11-25T08:00',
        end: '2026-11-26T08:00',
        fields: ['spd100', 't2m', 'dir10'],
      },
    ];
    for (const s of states) {
      const text = formatViewState(s);
      assert.deepEqual(parseViewState(text), s, text);
      assert.equal(formatViewState(parseViewState(text)), text);
    }
  });

  it('is what parse reads back from a link, for link texts', () => {
    for (const link of [FULL, '?view=sites&q=a%20b', '?view=runs', '?view=site&farm=WF_GS01&fields=tp']) {
      const again = formatViewState(parseViewState(link));
      assert.deepEqual(parseViewState(again), parseViewState(link), link);
    }
  });
});
