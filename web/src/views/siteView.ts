/**
 * A site: its latest run and state, and a meteogram of the chosen run over its horizon — stacked panels
 * with one cursor, the previous run dashed, the change of 100 m wind from the previous run, a "now" line —
 * with the run, the window (Beijing time) and the fields to show, the API URL of exactly that, and its CSV.
 */
import type uPlot from 'uplot';
import { apiUrl, getCsv, getData, type Farm, type Forecast, type Page, type Params, type Run } from '../api.js';
import { displayOf, type Display, type ElementDef } from '../catalogue.js';
import { h } from '../dom.js';
import { storedKey } from '../keyStore.js';
import { CHANGE_FIELD, panelsFor, type PanelDef } from '../panels.js';
import { alignRuns, changeOf, gridBounds, type Aligned } from '../series.js';
import { apiParamText, beijingInputValue, beijingText, fromBeijingInput, issueStartMs, leadText, STEP_MS, utcText } from '../time.js';
import type { ViewState } from '../viewState.js';
import { drawChart, type ChartSeries } from './chart.js';
import { kindOf, KIND_LABEL } from './kinds.js';
import { stateBadge, STATE_TEXT } from './runsView.js';

/** Draws a panel's chart, once its figure is in the page. */
type Drawer = () => uPlot;

/** Steps of a full run after +0h: 15 days of 15 minutes. */
const HORIZON_STEPS = 1440;

/** Okabe–Ito colours, each field its own; the previous run reuses its field's colour, dashed. */
const FIELD_COLOR: Record<string, string> = {
  spd10: '#E69F00',
  spd30: '#56B4E9',
  spd50: '#009E73',
  spd70: '#CC79A7',
  spd100: '#0072B2',
  dir10: '#E69F00',
  dir100: '#0072B2',
  t2m: '#D55E00',
  tr: '#E69F00',
  dr: '#D55E00',
  sr: '#0072B2',
  rh2m: '#009E73',
  tcc: '#6b7280',
  tp: '#0072B2',
  psfc: '#CC79A7',
};

const PANEL_HEIGHT: Record<string, number> = { wind: 220, direction: 170, radiation: 200, precipitation: 150 };

export interface SiteViewOptions {
  readonly farm: Farm;
  readonly elements: readonly ElementDef[];
  readonly state: ViewState;
  readonly navigate: (next: ViewState) => void;
  readonly onError: (err: unknown) => void;
}

export interface SiteView {
  readonly el: HTMLElement;
  /** Settles when the charts are drawn (or the view gave up). */
  readonly ready: Promise<void>;
  close(): void;
}

export function siteView(o: SiteViewOptions): SiteView {
  const { farm, state } = o;
  const kind = kindOf(farm);
  const plots: uPlot[] = [];
  const latest = h('p', { class: 'latest' }, 'Latest run: …');
  const controls = h('div', { class: 'controls' });
  const links = h('div', { class: 'links' });
  const charts = h('div', { class: 'charts' });
  const el = h(
    'section',
    { class: 'panel site', 'aria-labelledby': 'site-title', 'aria-busy': 'true' },
    h(
      'div',
      { class: 'title-row' },
      h('h1', { id: 'site-title' }, typeof farm.name === 'string' && farm.name !== '' ? farm.name : farm.farm_id),
      h('span', { class: `kind-badge kind-${kind}` }, KIND_LABEL[kind]),
    ),
    h('p', { class: 'muted' }, h('code', {}, farm.farm_id), ` · ${farm.lat.toFixed(3)}° N, ${farm.lon.toFixed(3)}° E`, extraColumns(farm)),
    latest,
    controls,
    links,
    charts,
  );
  const observer = new ResizeObserver(() => {
    for (const p of plots) {
      const box = p.root.parentElement;
      if (box !== null && box.clientWidth > 0 && Math.abs(box.clientWidth - p.width) > 1) p.setSize({ width: box.clientWidth, height: p.height });
    }
  });
  observer.observe(charts);
  const ready = load().catch(o.onError).finally(() => el.setAttribute('aria-busy', 'false'));
  return {
    el,
    ready,
    close: () => {
      observer.disconnect();
      for (const p of plots) p.destroy();
    },
  };

  async function load(): Promise<void> {
    // Asked afresh each time: runs arrive and change state while the page stays open (a run's data, by its
    // name, is what may be kept).
    const runs = (await getData<Page<Run>>(apiUrl('/api/v1/forecast/issues', { farm_id: farm.farm_id, size: 1000 }), { fresh: true })).items;
    if (runs.length === 0) {
      latest.textContent = 'No run holds data for this site yet.';
      return;
    }
    const newest = runs[0]!;
    latest.replaceChildren(`Latest run ${newest.issue} (starts ${utcText(issueStartMs(newest.issue))}) · `, stateBadge(newest.status), ` · ${newest.farms} / ${newest.farms_expected} sites`);
    const at = state.issue === undefined ? 0 : runs.findIndex((r) => r.issue === state.issue);
    const run = runs[at] ?? newest;
    const issue = state.issue ?? newest.issue;
    const previous = at < 0 ? undefined : runs[at + 1];
    const names = o.elements.map((e) => e.name);
    const fields = state.fields === undefined ? names : names.filter((n) => state.fields!.includes(n));
    const chosen = fields.length === 0 ? names : fields;
    const issueMs = issueStartMs(issue);
    const startMs = state.start === undefined ? undefined : fromBeijingInput(state.start);
    const endMs = state.end === undefined ? undefined : fromBeijingInput(state.end);
    const [fromMs, toMs] = gridBounds(issueMs, HORIZON_STEPS, startMs, endMs);
    const query: Params = {
      farm_id: farm.farm_id,
      issue,
      ...(startMs === undefined ? {} : { start: apiParamText(startMs) }),
      ...(endMs === undefined ? {} : { end: apiParamText(endMs) }),
      ...(chosen.length === names.length ? {} : { elements: chosen }),
    };
    const jsonUrl = apiUrl('/api/v1/forecast', { ...query, size: HORIZON_STEPS + 1 });
    const csvUrl = apiUrl('/api/v1/forecast', { ...query, format: 'csv' });
    controls.replaceChildren(runPicker(runs, issue, (next) => o.navigate({ ...state, issue: next })), windowPicker(issueMs, state, o.navigate), fieldPicker(o.elements, chosen, state, o.navigate));
    links.replaceChildren(...apiLinks(jsonUrl, csvUrl, `${farm.farm_id}_${issue}.csv`, o.onError));
    if (at < 0) {
      charts.replaceChildren(h('p', { class: 'error' }, `Run ${state.issue} holds no data for this site; pick another run.`));
      return;
    }
    const [cur, prev] = await Promise.all([
      getData<Forecast>(jsonUrl),
      previous === undefined
        ? Promise.resolve(undefined)
        : getData<Forecast>(
            apiUrl('/api/v1/forecast', {
              farm_id: farm.farm_id,
              issue: previous.issue,
              start: apiParamText(fromMs),
              end: apiParamText(toMs),
              ...(chosen.length === names.length ? {} : { elements: chosen }),
              size: HORIZON_STEPS + 1,
            }),
          ).catch(() => undefined),
    ]);
    performance.mark('forecastd:data');
    const displays = new Map(o.elements.map((e) => [e.name, displayOf(e)]));
    const aligned = alignRuns(cur.items, prev?.items ?? [], chosen, fromMs, toMs, (f, v) => displays.get(f)?.convert(v) ?? v);
    for (const p of plots.splice(0)) p.destroy();
    const figures: HTMLElement[] = [
      h(
        'p',
        { class: 'muted chart-note' },
        `Run ${issue} (${STATE_TEXT[run.status].toLowerCase()}), ${aligned.records} records from ${beijingText(fromMs)} to ${beijingText(toMs)} Beijing time (UTC+8). `,
        previous === undefined ? 'No earlier run holds this site.' : `Dashed: the previous run, ${previous.issue}.`,
      ),
    ];
    charts.replaceChildren(...figures);
    const nowMs = Date.now();
    const drawers: Drawer[] = [];
    for (const panel of panelsFor(chosen)) charts.append(panelFigure(panel, aligned, displays, o.elements, previous?.issue, nowMs, drawers));
    if (chosen.includes(CHANGE_FIELD) && previous !== undefined) charts.append(changeFigure(aligned, displays.get(CHANGE_FIELD)!, previous.issue, issue, nowMs, drawers));
    // Drawn once the figures are in the page, so that each takes the page's width.
    for (const draw of drawers) plots.push(draw());
    performance.mark('forecastd:drawn');
  }
}

function extraColumns(farm: Farm): string {
  const skip = new Set(['farm_id', 'lat', 'lon', 'name', 'kind']);
  const parts = Object.entries(farm)
    .filter(([k, v]) => !skip.has(k) && (typeof v === 'string' || typeof v === 'number') && v !== '')
    .map(([k, v]) => `${k.replace(/_/g, ' ')}: ${v}`);
  return parts.length === 0 ? '' : ` · ${parts.join(' · ')}`;
}

function runPicker(runs: readonly Run[], issue: string, pick: (issue: string) => void): HTMLElement {
  const select = h(
    'select',
    { id: 'run-select', 'data-run-select': '' },
    ...runs.map((r) =>
      h(
        'option',
        { value: r.issue, selected: r.issue === issue },
        `${r.issue} · starts ${utcText(issueStartMs(r.issue))} · ${STATE_TEXT[r.status].toLowerCase()}`,
      ),
    ),
  );
  select.addEventListener('change', () => pick(select.value));
  return h('div', { class: 'control' }, h('label', { for: 'run-select' }, 'Run'), select);
}

function windowPicker(issueMs: number, state: ViewState, navigate: (s: ViewState) => void): HTMLElement {
  const lastMs = issueMs + HORIZON_STEPS * STEP_MS;
  const field = (id: string, label: string, value: string | undefined, fallback: number): HTMLInputElement => {
    const input = h('input', { id, type: 'datetime-local', step: 900, min: beijingInputValue(issueMs), max: beijingInputValue(lastMs), value: value ?? beijingInputValue(fallback), 'aria-label': `${label}, Beijing time` });
    return input;
  };
  const from = field('window-start', 'From', state.start, issueMs);
  const to = field('window-end', 'To', state.end, lastMs);
  const apply = (): void => {
    const s = Number.isNaN(fromBeijingInput(from.value)) ? undefined : from.value;
    const e = Number.isNaN(fromBeijingInput(to.value)) ? undefined : to.value;
    navigate({ ...state, start: s === beijingInputValue(issueMs) ? undefined : s, end: e === beijingInputValue(lastMs) ? undefined : e });
  };
  from.addEventListener('change', apply);
  to.addEventListener('change', apply);
  const preset = (label: string, days: number): HTMLElement =>
    h('button', {
      type: 'button',
      onclick: () => navigate({ ...state, start: undefined, end: days >= 15 ? undefined : beijingInputValue(issueMs + days * 86_400_000) }),
    }, label);
  return h(
    'fieldset',
    { class: 'control window' },
    h('legend', {}, 'Window (Beijing time, UTC+8)'),
    h('label', { for: 'window-start' }, 'From'),
    from,
    h('label', { for: 'window-end' }, 'To'),
    to,
    h('span', { class: 'presets' }, preset('1 day', 1), preset('3 days', 3), preset('7 days', 7), preset('15 days', 15)),
  );
}

function fieldPicker(elements: readonly ElementDef[], chosen: readonly string[], state: ViewState, navigate: (s: ViewState) => void): HTMLElement {
  const all = elements.map((e) => e.name);
  const boxes: HTMLInputElement[] = [];
  const groups = panelsFor(all).map((panel) =>
    h(
      'span',
      { class: 'field-group' },
      h('span', { class: 'group-name' }, panel.title),
      ...panel.fields.map((f) => {
        const def = elements.find((e) => e.name === f)!;
        const box = h('input', { type: 'checkbox', id: `field-${f}`, value: f, checked: chosen.includes(f), 'data-field': f });
        boxes.push(box);
        return h('label', { for: `field-${f}`, title: def.description }, box, ` ${f}`);
      }),
    ),
  );
  const changed = (): void => {
    const picked = boxes.filter((b) => b.checked).map((b) => b.value);
    if (picked.length === 0) return;
    navigate({ ...state, fields: picked.length === all.length ? undefined : picked });
  };
  for (const b of boxes) b.addEventListener('change', changed);
  return h(
    'details',
    { class: 'control fields', open: chosen.length < all.length },
    h('summary', {}, `Fields: ${chosen.length === all.length ? 'all 15' : chosen.join(', ')}`),
    h('fieldset', {}, h('legend', { class: 'sr-only' }, 'Fields to show'), ...groups, h('button', { type: 'button', onclick: () => navigate({ ...state, fields: undefined }) }, 'All fields')),
  );
}

function apiLinks(jsonUrl: string, csvUrl: string, fileName: string, onError: (err: unknown) => void): HTMLElement[] {
  const absolute = location.origin + jsonUrl;
  const csv = h('a', { class: 'button', href: csvUrl, download: fileName, 'data-download': 'csv' }, 'Download CSV');
  csv.addEventListener('click', (e) => {
    // A link cannot send the key: with one, fetch the same URL with it and save what comes back.
    if (storedKey() === undefined) return;
    e.preventDefault();
    getCsv(csvUrl).then((blob) => {
      const url = URL.createObjectURL(blob);
      const a = h('a', { href: url, download: fileName });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    }, onError);
  });
  const copy = h('button', { type: 'button' }, 'Copy');
  copy.addEventListener('click', () => {
    void navigator.clipboard?.writeText(absolute).then(() => (copy.textContent = 'Copied'), () => undefined);
  });
  return [h('span', { class: 'label' }, 'API URL of what is shown'), h('code', { class: 'api-url', 'data-api-url': '' }, absolute), copy, csv];
}

function panelFigure(panel: PanelDef, a: Aligned, displays: Map<string, Display>, elements: readonly ElementDef[], previous: string | undefined, nowMs: number, drawers: Drawer[]): HTMLElement {
  const unit = displays.get(panel.fields[0]!)?.unit ?? '';
  const series: ChartSeries[] = [];
  for (const f of panel.fields) series.push({ label: f, values: a.current[f]!, color: FIELD_COLOR[f] ?? '#333' });
  if (previous !== undefined) for (const f of panel.fields) series.push({ label: `${f} (${previous})`, values: a.previous[f]!, color: FIELD_COLOR[f] ?? '#333', previous: true });
  const notes = [...new Set(panel.fields.map((f) => displays.get(f)?.note ?? '').filter(Boolean))];
  const titleId = `panel-${panel.id}`;
  return figure(
    titleId,
    `${panel.title} (${unit})`,
    notes.join('; '),
    describe(panel, elements),
    (box) => drawChart(box, { x: a.x, series, unit, style: panel.style, compass: panel.id === 'direction', nowMs, height: PANEL_HEIGHT[panel.id] ?? 170 }),
    panel.fields.map((f) => ({ name: f, label: f })),
    a,
    series,
    drawers,
  );
}

function changeFigure(a: Aligned, display: Display, previous: string, issue: string, nowMs: number, drawers: Drawer[]): HTMLElement {
  const change = changeOf(a.current[CHANGE_FIELD]!, a.previous[CHANGE_FIELD]!);
  const series: ChartSeries[] = [{ label: `${CHANGE_FIELD} change`, values: change, color: '#D55E00' }];
  return figure(
    'panel-change',
    `Change of 100 m wind speed from the previous run (${display.unit})`,
    `run ${issue} minus run ${previous} at the same valid time; above zero: the new run expects more wind`,
    'Difference between the two runs’ 100 m wind speed at each 15-minute step.',
    (box) => drawChart(box, { x: a.x, series, unit: display.unit, style: 'lines', zeroLine: true, nowMs, height: 150 }),
    [{ name: `${CHANGE_FIELD}-change`, label: 'change' }],
    a,
    series,
    drawers,
  );
}

function describe(panel: PanelDef, elements: readonly ElementDef[]): string {
  return panel.fields.map((f) => `${f}: ${elements.find((e) => e.name === f)?.description ?? f}`).join('; ') + '.';
}

/**
 * A panel: a caption naming it and its unit, the chart (an image to assistive technology, labelled), the
 * legend rows carrying data-chart and data-points for checks, and the same data as a table on demand.
 */
function figure(
  id: string,
  title: string,
  note: string,
  description: string,
  draw: (box: HTMLElement) => uPlot,
  marks: readonly { name: string; label: string }[],
  a: Aligned,
  series: readonly ChartSeries[],
  drawers: (() => void)[],
): HTMLElement {
  const box = h('div', { class: 'chart', role: 'img', 'aria-labelledby': id, 'aria-describedby': `${id}-desc` });
  const table = h('details', { class: 'data-table' }, h('summary', {}, 'Data table'));
  table.addEventListener('toggle', () => {
    if (table.open && table.childElementCount === 1) table.append(dataTable(title, a, series));
  });
  const fig = h(
    'figure',
    { class: 'chart-figure' },
    h('figcaption', {}, h('h2', { id }, title), note === '' ? null : h('p', { class: 'muted' }, note), h('p', { class: 'sr-only', id: `${id}-desc` }, description)),
    box,
    table,
  );
  drawers.push(() => {
    const plot = draw(box);
    const rows = plot.root.querySelectorAll<HTMLElement>('.u-legend .u-series');
    marks.forEach((m, i) => {
      const row = rows[i + 1];
      if (row === undefined) return;
      row.dataset.chart = m.name;
      row.dataset.points = String(a.records);
    });
    rows.forEach((row, i) => {
      if (series[i - 1]?.previous === true) row.classList.add('previous');
    });
    return plot;
  });
  return fig;
}

function dataTable(title: string, a: Aligned, series: readonly ChartSeries[]): HTMLElement {
  const firstMs = a.x.length > 0 ? a.x[0]! * 1000 : 0;
  const fmt = (v: number | null | undefined): string => (v === null || v === undefined ? '' : String(+v.toFixed(3)));
  const rows: HTMLElement[] = [];
  for (let k = 0; k < a.x.length; k++) {
    const ms = a.x[k]! * 1000;
    rows.push(h('tr', {}, h('th', { scope: 'row' }, beijingText(ms)), h('td', {}, leadText(firstMs, ms)), ...series.map((s) => h('td', {}, fmt(s.values[k])))));
  }
  return h(
    'div',
    // Scrolls on its own: focusable, so that the keyboard can scroll it too.
    { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': `${title}: data table` },
    h(
      'table',
      {},
      h('caption', {}, `${title}: every 15-minute step, Beijing time; empty cells are steps a run does not hold.`),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Beijing time'), h('th', { scope: 'col' }, 'From window start'), ...series.map((s) => h('th', { scope: 'col' }, s.label)))),
      h('tbody', {}, ...rows),
    ),
  );
}
