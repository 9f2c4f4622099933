/**
 * The console's map outline: country shapes from the installed world-atlas package (Natural Earth, 1:50m),
 * clipped to the region the service covers, projected once and written as SVG path data. The page then
 * ships a few tens of kilobytes and draws them without any tile or geometry library.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { feature } from 'topojson-client';
import type { Topology, GeometryCollection } from 'topojson-specification';
import { OUTLINE_BOX, project } from '../web/src/map/projection.js';

type Ring = [number, number][];

/** Sutherland–Hodgman against one side of the box: keeps what lies inside, adds the crossing points. */
function clipSide(ring: Ring, inside: (p: [number, number]) => boolean, cross: (a: [number, number], b: [number, number]) => [number, number]): Ring {
  const out: Ring = [];
  for (let i = 0; i < ring.length; i++) {
    const cur = ring[i]!;
    const prev = ring[(i + ring.length - 1) % ring.length]!;
    if (inside(cur)) {
      if (!inside(prev)) out.push(cross(prev, cur));
      out.push(cur);
    } else if (inside(prev)) out.push(cross(prev, cur));
  }
  return out;
}

const atLon = (lon: number) => (a: [number, number], b: [number, number]): [number, number] => [lon, a[1] + ((b[1] - a[1]) * (lon - a[0])) / (b[0] - a[0])];
const atLat = (lat: number) => (a: [number, number], b: [number, number]): [number, number] => [a[0] + ((b[0] - a[0]) * (lat - a[1])) / (b[1] - a[1]), lat];

export function clipRing(ring: Ring): Ring {
  const b = OUTLINE_BOX;
  let r = clipSide(ring, (p) => p[0] >= b.lonMin, atLon(b.lonMin));
  r = clipSide(r, (p) => p[0] <= b.lonMax, atLon(b.lonMax));
  r = clipSide(r, (p) => p[1] >= b.latMin, atLat(b.latMin));
  return clipSide(r, (p) => p[1] <= b.latMax, atLat(b.latMax));
}

/** One ring as relative SVG path commands in whole map units, points that round onto the last dropped. */
export function ringPath(ring: Ring): string {
  let d = '';
  let px = 0;
  let py = 0;
  let n = 0;
  for (const [lon, lat] of ring) {
    const p = project(lon, lat);
    const x = Math.round(p.x);
    const y = Math.round(p.y);
    if (n > 0 && x === px && y === py) continue;
    d += n === 0 ? `M${x} ${y}` : `l${x - px} ${y - py}`;
    px = x;
    py = y;
    n++;
  }
  return n >= 3 ? d + 'z' : '';
}

/** Path data per country that has land in the box, in the order of the source. */
export function regionOutline(): { name: string; d: string }[] {
  const require = createRequire(import.meta.url);
  const topo = JSON.parse(readFileSync(require.resolve('world-atlas/countries-50m.json'), 'utf8')) as Topology<{ countries: GeometryCollection<{ name: string }> }>;
  const countries = feature(topo, topo.objects.countries);
  const out: { name: string; d: string }[] = [];
  for (const f of countries.features) {
    const g = f.geometry;
    const polygons = g.type === 'Polygon' ? [g.coordinates] : g.type === 'MultiPolygon' ? g.coordinates : [];
    let d = '';
    for (const polygon of polygons) for (const ring of polygon) d += ringPath(clipRing(ring as Ring));
    if (d !== '') out.push({ name: f.properties?.name ?? '', d });
  }
  return out;
}
