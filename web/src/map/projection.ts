/**
 * The map's projection, shared by the build (which projects the region outline once) and the page (which
 * projects the sites): equirectangular with longitudes shrunk by the cosine of a middle latitude, so shapes
 * near 36° N (the middle of the service range) keep their proportions. No tiles, no library: a few hundred
 * sites and one outline need nothing more.
 */

/** Map units per degree of latitude; outline coordinates are whole units, so this sets their precision. */
export const UNITS_PER_DEGREE = 20;

const X_SCALE = Math.cos((36 * Math.PI) / 180) * UNITS_PER_DEGREE;

/** The box (lon, lat) the shipped outline covers: the default service range with a margin. */
export const OUTLINE_BOX = { lonMin: 50, latMin: -15, lonMax: 160, latMax: 75 } as const;

export interface Point {
  readonly x: number;
  readonly y: number;
}

export function project(lon: number, lat: number): Point {
  return { x: lon * X_SCALE, y: -lat * UNITS_PER_DEGREE };
}

export interface ViewBox {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/**
 * The view that shows every point with a margin, at least `minDegrees` across (one site alone still shows
 * its surroundings), and not narrower than the frame's shape asks for.
 */
export function fitView(points: readonly { lon: number; lat: number }[], aspect: number, minDegrees = 12): ViewBox {
  const box = points.length === 0 ? { lonMin: 73, latMin: 18, lonMax: 135, latMax: 54 } : bounds(points);
  const a = project(box.lonMin, box.latMax);
  const b = project(box.lonMax, box.latMin);
  const min = minDegrees * UNITS_PER_DEGREE;
  let width = Math.max(b.x - a.x, min) * 1.1;
  let height = Math.max(b.y - a.y, min * 0.6) * 1.1;
  if (width / height < aspect) width = height * aspect;
  else height = width / aspect;
  const cx = (a.x + b.x) / 2;
  const cy = (a.y + b.y) / 2;
  return { x: cx - width / 2, y: cy - height / 2, width, height };
}

function bounds(points: readonly { lon: number; lat: number }[]): { lonMin: number; latMin: number; lonMax: number; latMax: number } {
  let lonMin = Infinity;
  let latMin = Infinity;
  let lonMax = -Infinity;
  let latMax = -Infinity;
  for (const p of points) {
    lonMin = Math.min(lonMin, p.lon);
    lonMax = Math.max(lonMax, p.lon);
    latMin = Math.min(latMin, p.lat);
    latMax = Math.max(latMax, p.lat);
  }
  return { lonMin, latMin, lonMax, latMax };
}
