/**
 * The console's entry: reads the view from the URL, loads the catalogue and the sites through the public API
 * (asking for a key when the API wants one), and shows the view; links and controls change the URL, so any
 * view can be linked to and reloaded.
 */
import 'uplot/dist/uPlot.min.css';
import '../styles.css';
import { allFarms, ApiFailure, apiUrl, forgetAnswers, getData, type Farm, type Page, type Run } from './api.js';
import { issueStartMs, utcText } from './time.js';
import type { ElementDef } from './catalogue.js';
import { fill, h } from './dom.js';
import { keyPrefix, storedKey, storeKey } from './keyStore.js';
import { formatViewState, parseViewState, type ViewState } from './viewState.js';
import { askForKey } from './views/keyPrompt.js';
import { mapView } from './views/mapView.js';
import { runsView, stateBadge } from './views/runsView.js';
import { sitesList, type SitesList } from './views/sitesList.js';
import { siteView } from './views/siteView.js';

const main = document.getElementById('main')!;
const aside = document.getElementById('sites-panel')!;
const notice = document.getElementById('notice')!;
const keyStatus = document.getElementById('key-status')!;

let state: ViewState = parseViewState(location.search);
let farms: Farm[] = [];
let elements: ElementDef[] = [];
let list: SitesList | undefined;
let closeView: () => void = () => undefined;
let asking: Promise<void> | undefined;

function say(text: string): void {
  notice.textContent = text;
  notice.dataset.shown = text === '' ? 'false' : 'true';
}

/** A 401 asks for a key (once, however many requests failed) and reloads the view; other faults are said. */
async function failed(err: unknown): Promise<void> {
  if (err instanceof ApiFailure && err.status === 401) {
    asking ??= askForKey(storedKey() === undefined ? undefined : 'That key was not accepted: it may be mistyped, revoked or expired.').then((key) => {
      storeKey(key);
      forgetAnswers();
      asking = undefined;
      void start();
    });
    return asking;
  }
  say(err instanceof Error ? err.message : 'Something went wrong.');
}

function showKeyStatus(): void {
  const key = storedKey();
  if (key === undefined) return fill(keyStatus);
  fill(
    keyStatus,
    h('span', { class: 'muted' }, 'Key ', h('code', {}, keyPrefix(key))),
    h('button', {
      type: 'button',
      onclick: () => {
        storeKey(undefined);
        forgetAnswers();
        location.reload();
      },
    }, 'Forget key'),
  );
}

export function navigate(next: ViewState, push = true): void {
  const search = formatViewState(next);
  if (push && search !== location.search) history.pushState(null, '', search);
  else history.replaceState(null, '', search);
  state = next;
  render();
}

function open(farmId: string): void {
  // From here to the mark `forecastd:drawn` (siteView) is what the browser test reports as select-to-drawn.
  performance.mark('forecastd:select');
  const keep = state.view === 'site' && state.farm !== farmId ? { ...state, issue: undefined, start: undefined, end: undefined } : state;
  navigate({ ...keep, view: 'site', farm: farmId });
}

function render(): void {
  closeView();
  closeView = () => undefined;
  say('');
  for (const a of document.querySelectorAll<HTMLAnchorElement>('[data-nav]')) {
    if (a.dataset.nav === (state.view === 'site' ? 'sites' : state.view)) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  list?.select(state.view === 'site' ? state.farm : undefined);
  if (state.view === 'runs') {
    document.title = 'Runs · forecastd';
    const v = runsView((e) => void failed(e));
    closeView = v.close;
    return fill(main, v.el);
  }
  if (state.view === 'site') {
    const farm = farms.find((f) => f.farm_id === state.farm);
    if (farm === undefined) {
      document.title = 'forecastd';
      return fill(main, h('section', { class: 'panel' }, h('h1', {}, 'No such site'), h('p', {}, `No site ${state.farm ?? ''} is visible here.`)));
    }
    document.title = `${farm.farm_id} · forecastd`;
    main.dataset.ready = 'false';
    const v = siteView({ farm, elements, state, navigate, onError: (e) => void failed(e) });
    closeView = v.close;
    fill(main, v.el);
    void v.ready.then(() => (main.dataset.ready = 'true'));
    return;
  }
  document.title = 'Sites · forecastd';
  const newest = h('p', { class: 'latest' });
  fill(main, h('section', { class: 'panel', 'aria-labelledby': 'map-title' }, h('h1', { id: 'map-title' }, 'Sites'), newest, mapView(farms, undefined, open)));
  getData<Page<Run>>(apiUrl('/api/v1/forecast/issues', { size: 1 }), { fresh: true }).then((p) => {
    const run = p.items[0];
    if (run === undefined) return fill(newest, 'No run has arrived yet.');
    fill(newest, `Newest run ${run.issue} (starts ${utcText(issueStartMs(run.issue))}) · `, stateBadge(run.status), ` · ${run.farms} / ${run.farms_expected} sites. Select a site for its own latest run and forecast.`);
  }, (e) => void failed(e));
}

async function start(): Promise<void> {
  // The server says, as it serves the page, whether the API wants a key: ask before the first request.
  if (document.body.dataset.keys === 'required' && storedKey() === undefined) {
    storeKey(await askForKey(undefined));
  }
  showKeyStatus();
  try {
    const [catalogue, sites] = await Promise.all([getData<{ items: ElementDef[] }>(apiUrl('/api/v1/elements')), allFarms()]);
    elements = catalogue.items;
    farms = sites;
  } catch (err) {
    fill(main, h('p', { class: 'muted' }, 'Waiting for access…'));
    return failed(err);
  }
  list = sitesList({
    farms,
    query: state.q ?? '',
    selected: state.farm,
    // A site's own link (opened in a new tab, copied): its latest run, whole horizon, every field. A click
    // keeps the chosen fields (open()), which the link, made once, could not follow.
    hrefOf: (id) => formatViewState({ view: 'site', farm: id }),
    open,
    onQuery: (q) => {
      state = { ...state, q: q === '' ? undefined : q };
      history.replaceState(null, '', formatViewState(state));
    },
  });
  fill(aside, list.el);
  render();
}

// Links inside the page that change only the view are followed without a reload.
document.addEventListener('click', (e) => {
  const a = (e.target as Element | null)?.closest?.('a[data-nav], a.brand');
  if (!(a instanceof HTMLAnchorElement) || e.ctrlKey || e.metaKey || e.shiftKey) return;
  e.preventDefault();
  navigate(parseViewState(new URL(a.href).search));
});
window.addEventListener('popstate', () => {
  state = parseViewState(location.search);
  render();
});
void start();
