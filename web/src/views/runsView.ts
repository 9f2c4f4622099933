/**
 * The runs: each with its state, when its first site arrived, when it became complete (or partial), and
 * sites present / expected. It follows the events stream and refreshes itself as runs arrive — no reload.
 */
import { apiUrl, getData, type Page, type Run } from '../api.js';
import { h } from '../dom.js';
import { followEvents, type Follower } from '../eventStream.js';
import { apiTimeMs, beijingText, issueStartMs, utcText } from '../time.js';

export const STATE_TEXT: Record<Run['status'], string> = {
  receiving: 'Receiving',
  complete: 'Complete',
  partial: 'Partial',
  superseded: 'Superseded',
};

export function stateBadge(status: Run['status']): HTMLElement {
  return h('span', { class: `state state-${status}` }, STATE_TEXT[status]);
}

const when = (t: string | null): string => (t === null ? '—' : beijingText(apiTimeMs(t)));

export interface RunsView {
  readonly el: HTMLElement;
  close(): void;
}

export function runsView(onError: (err: unknown) => void): RunsView {
  const body = h('tbody');
  const live = h('span', { class: 'live', 'data-live': 'false' }, 'Connecting…');
  const table = h(
    'table',
    { class: 'runs' },
    h('caption', {}, 'Model runs, newest first. Times in Beijing time (UTC+8) unless marked UTC.'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'Run'),
        h('th', { scope: 'col' }, 'Start (UTC)'),
        h('th', { scope: 'col' }, 'State'),
        h('th', { scope: 'col' }, 'Sites'),
        h('th', { scope: 'col' }, 'First data'),
        h('th', { scope: 'col' }, 'Completed'),
        h('th', { scope: 'col' }, 'Last update'),
      ),
    ),
    body,
  );
  let changed = new Set<string>();
  const load = async (): Promise<void> => {
    const page = await getData<Page<Run>>(apiUrl('/api/v1/forecast/issues', { size: 100 }), { fresh: true });
    body.replaceChildren(...page.items.map((r) => row(r, changed.has(r.issue))));
    changed = new Set();
  };
  load().catch(onError);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const follower: Follower = followEvents(
    (e) => {
      try {
        const issue = (JSON.parse(e.data) as { issue?: string }).issue;
        if (typeof issue === 'string') changed.add(issue);
      } catch {
        // Not JSON: a refresh still shows whatever changed.
      }
      clearTimeout(timer);
      timer = setTimeout(() => load().catch(onError), 250);
    },
    (on) => {
      live.dataset.live = String(on);
      live.textContent = on ? 'Live' : 'Not live: reconnecting';
    },
  );
  const el = h('section', { class: 'panel', 'aria-labelledby': 'runs-title' }, h('div', { class: 'title-row' }, h('h1', { id: 'runs-title' }, 'Runs'), live), h('div', { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-labelledby': 'runs-title' }, table));
  return {
    el,
    close: () => {
      clearTimeout(timer);
      follower.stop();
    },
  };
}

function row(r: Run, fresh: boolean): HTMLElement {
  const share = r.farms_expected > 0 ? Math.min(1, r.farms / r.farms_expected) : 0;
  return h(
    'tr',
    { 'data-issue': r.issue, 'data-status': r.status, class: fresh ? 'fresh' : undefined },
    h('th', { scope: 'row' }, h('code', {}, r.issue)),
    // The column's header says UTC; the cells leave it out so that the table fits a desktop width.
    h('td', {}, utcText(issueStartMs(r.issue)).replace(' UTC', '')),
    h('td', {}, stateBadge(r.status)),
    h(
      'td',
      { class: 'sites-cell' },
      meter(share),
      ` ${r.farms} / ${r.farms_expected}`,
    ),
    h('td', {}, when(r.available_at)),
    h('td', {}, when(r.completed_at)),
    h('td', {}, when(r.updated_at)),
  );
}

/** A bar of the share of sites present; its width is set through the DOM, which the page's policy allows. */
function meter(share: number): HTMLElement {
  const fill = h('span', { class: 'meter-fill' });
  fill.style.width = `${Math.round(share * 100)}%`;
  return h('span', { class: 'meter', 'aria-hidden': 'true' }, fill);
}
