/**
 * The sites on a map of the region: the country outline shipped with the package (no tiles, no other
 * origin), each site a marker — a circle for wind, a square for solar. Clicking one opens it; the list
 * beside the map is the keyboard's way to the same places.
 */
import type { Farm } from '../api.js';
import { h, svg } from '../dom.js';
import { fitView, project } from '../map/projection.js';
import { KIND_COLOR, KIND_LABEL, kindOf, type SiteKind } from './kinds.js';

let outline: Promise<{ name: string; d: string }[]> | undefined;

function loadOutline(): Promise<{ name: string; d: string }[]> {
  const url = document.body.dataset.region;
  if (url === undefined) return Promise.resolve([]);
  outline ??= fetch(url).then((r) => (r.ok ? (r.json() as Promise<{ name: string; d: string }[]>) : []), () => []);
  return outline;
}

export function mapView(farms: readonly Farm[], selected: string | undefined, open: (farmId: string) => void): HTMLElement {
  const aspect = 1.6;
  const view = fitView(farms, aspect);
  const land = svg('g', { class: 'land' });
  const markers = svg('g', { class: 'markers' });
  // Markers keep their size on screen (about 6 px across a radius) whatever the map's width: drawn in map
  // units, redrawn when the map is resized.
  const place = (unitsPerPixel: number): void => {
    const unit = MARKER_PX * unitsPerPixel;
    markers.replaceChildren();
    for (const f of farms) {
      const { x, y } = project(f.lon, f.lat);
      const kind = kindOf(f);
      const mark = marker(kind, x, y, unit * (f.farm_id === selected ? 1.7 : 1));
      mark.setAttribute('data-map-farm-id', f.farm_id);
      if (f.farm_id === selected) mark.setAttribute('class', 'selected');
      mark.append(svg('title', {}, `${f.farm_id}${f.name ? ` — ${f.name}` : ''} (${KIND_LABEL[kind].toLowerCase()})`));
      mark.addEventListener('click', () => open(f.farm_id));
      markers.append(mark);
    }
    land.setAttribute('stroke-width', String(0.8 * unitsPerPixel));
  };
  place(view.width / 900);
  const counts = { wind: 0, solar: 0, other: 0 };
  for (const f of farms) counts[kindOf(f)]++;
  const label = `Map of ${farms.length} sites: ${counts.wind} wind, ${counts.solar} solar${counts.other ? `, ${counts.other} other` : ''}.`;
  const map = svg(
    'svg',
    { viewBox: `${view.x} ${view.y} ${view.width} ${view.height}`, role: 'img', 'aria-label': label, class: 'map', preserveAspectRatio: 'xMidYMid meet' },
    svg('rect', { x: view.x, y: view.y, width: view.width, height: view.height, class: 'sea' }),
    land,
    markers,
  );
  void loadOutline().then((countries) => {
    for (const c of countries) land.append(svg('path', { d: c.d }, svg('title', {}, c.name)));
  });
  let drawnWidth = 0;
  const resized = new ResizeObserver(() => {
    if (!map.isConnected) return resized.disconnect();
    const width = map.getBoundingClientRect().width;
    if (width > 0 && Math.abs(width - drawnWidth) > 2) {
      drawnWidth = width;
      place(view.width / width);
    }
  });
  resized.observe(map);
  return h(
    'figure',
    { class: 'map-figure' },
    map,
    h(
      'figcaption',
      { class: 'map-legend' },
      legendItem('wind', counts.wind),
      legendItem('solar', counts.solar),
      counts.other > 0 ? legendItem('other', counts.other) : null,
      h('span', { class: 'muted' }, 'Outline: Natural Earth 1:50m'),
    ),
  );
}

/** A marker's radius on screen, px. */
const MARKER_PX = 5;

function marker(kind: SiteKind, x: number, y: number, r: number): SVGElement {
  const common = { fill: KIND_COLOR[kind], stroke: '#fff', 'stroke-width': r * 0.35 };
  return kind === 'solar'
    ? svg('rect', { ...common, x: x - r, y: y - r, width: 2 * r, height: 2 * r })
    : svg('circle', { ...common, cx: x, cy: y, r: r * 1.1 });
}

function legendItem(kind: SiteKind, n: number): HTMLElement {
  const icon = svg('svg', { viewBox: '-6 -6 12 12', width: 12, height: 12, 'aria-hidden': 'true' }, marker(kind, 0, 0, 4));
  return h('span', { class: 'legend-item' }, icon, ` ${KIND_LABEL[kind]} (${n})`);
}
