/**
 * The searchable list of sites, beside every view: search by id, name or any registry column, filter by
 * kind; each entry a link (so it works with the keyboard and opens in a new tab) carrying data-farm-id.
 */
import type { Farm } from '../api.js';
import { h } from '../dom.js';
import { KIND_LABEL, kindOf, type SiteKind } from './kinds.js';

export interface ListOptions {
  readonly farms: readonly Farm[];
  readonly query: string;
  readonly selected: string | undefined;
  readonly hrefOf: (farmId: string) => string;
  readonly open: (farmId: string) => void;
  readonly onQuery: (q: string) => void;
}

export function matches(f: Farm, words: readonly string[]): boolean {
  if (words.length === 0) return true;
  const text = Object.values(f)
    .filter((v) => typeof v === 'string' || typeof v === 'number')
    .join(' ')
    .toLowerCase();
  return words.every((w) => text.includes(w));
}

export interface SitesList {
  readonly el: HTMLElement;
  /** Marks the open site (built once; the search text and focus stay as they are). */
  select(farmId: string | undefined): void;
}

export function sitesList(o: ListOptions): SitesList {
  let selected = o.selected;
  const list = h('ul', { class: 'site-list', id: 'site-list' });
  const count = h('p', { class: 'muted count', 'aria-live': 'polite' });
  const render = (q: string): void => {
    const words = q.toLowerCase().split(/\s+/).filter(Boolean);
    const shown = o.farms.filter((f) => matches(f, words));
    list.replaceChildren(...shown.map((f) => item(f, o, selected)));
    count.textContent = shown.length === o.farms.length ? `${o.farms.length} sites` : `${shown.length} of ${o.farms.length} sites`;
  };
  const search = h('input', {
    type: 'search',
    id: 'site-search',
    placeholder: 'Search id, name, province…',
    value: o.query,
    autocomplete: 'off',
    'aria-controls': 'site-list',
  });
  search.addEventListener('input', () => {
    render(search.value);
    o.onQuery(search.value);
  });
  render(o.query);
  return {
    el: h('div', { class: 'sites' }, h('label', { for: 'site-search', class: 'label' }, 'Sites'), search, count, list),
    select(farmId) {
      selected = farmId;
      for (const a of list.querySelectorAll<HTMLAnchorElement>('a[data-farm-id]')) {
        if (a.dataset.farmId === farmId) a.setAttribute('aria-current', 'page');
        else a.removeAttribute('aria-current');
      }
    },
  };
}

function item(f: Farm, o: ListOptions, selected: string | undefined): HTMLElement {
  const kind: SiteKind = kindOf(f);
  const a = h(
    'a',
    { href: o.hrefOf(f.farm_id), 'data-farm-id': f.farm_id, 'aria-current': f.farm_id === selected ? 'page' : undefined },
    h('span', { class: `kind kind-${kind}`, title: KIND_LABEL[kind] }, h('span', { class: 'sr-only' }, KIND_LABEL[kind])),
    h('span', { class: 'site-id' }, f.farm_id),
    h('span', { class: 'site-name' }, typeof f.name === 'string' ? f.name : ''),
  );
  a.addEventListener('click', (e) => {
    if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    o.open(f.farm_id);
  });
  return h('li', {}, a);
}
