/** Which registered site a forecast request names: by farm_id, or the nearest to a point. */
import { clip, notFound, outOfRange } from '../domain/errors.js';
import { boundingDegrees, distanceKm, inRange, type RangeBox } from '../domain/geo.js';
import { numberText } from '../domain/numberText.js';
import type { Box, Farm } from '../store/store.js';
import { then, type Maybe } from './maybe.js';
import { sees, type Scope } from './scope.js';

/** What finding a site reads: a store, or the read model (which answers from memory). */
export interface SiteSource {
  getFarm(farmId: string): Maybe<Farm | undefined>;
  farmsInBox(box: Box): Maybe<readonly Farm[]>;
}

export interface SiteRules {
  readonly range: RangeBox;
  readonly matchRadiusKm: number;
}

/** The site by farm_id; one outside the scope is not found, exactly as one that is not registered. */
export function farmById(store: SiteSource, farmId: string, scope: Scope): Maybe<Farm> {
  return then(store.getFarm(farmId), (farm) => {
    if (!farm || !sees(scope, farm.farmId)) throw notFound(`farm_id "${clip(farmId, 64)}" is not a registered site.`);
    return farm;
  });
}

/**
 * The site of the scope nearest to (lat, lon) within the match radius; ties go to the smaller farm_id.
 * Sites outside the scope are not candidates: a point near one alone is answered as a point near none.
 */
export function farmNear(store: SiteSource, rules: SiteRules, lat: number, lon: number, scope: Scope): Maybe<Farm> {
  if (!inRange(rules.range, lat, lon)) {
    const r = rules.range;
    throw outOfRange(
      `Coordinates lat=${numberText(lat)}, lon=${numberText(lon)} are outside the service range ` +
        `(lon ${r.lonMin} to ${r.lonMax}, lat ${r.latMin} to ${r.latMax}).`,
    );
  }
  const { dLat, dLon } = boundingDegrees(lat, rules.matchRadiusKm);
  const [one, other] = lonSpans(lon - dLon, lon + dLon).map(([lonMin, lonMax]) => ({ latMin: lat - dLat, latMax: lat + dLat, lonMin, lonMax }));
  const near = (candidates: readonly Farm[]): Farm => nearest(candidates, rules, lat, lon, scope);
  if (other === undefined) return then(store.farmsInBox(one!), near);
  return then(store.farmsInBox(one!), (a) => then(store.farmsInBox(other), (b) => near([...a, ...b])));
}

/**
 * The longitudes from lonMin to lonMax as spans within -180 … 180: two when they cross the antimeridian (a
 * point at lon -179.99 is 2 km from a site at 179.99 on the equator), all of them when they go round.
 */
function lonSpans(lonMin: number, lonMax: number): [number, number][] {
  if (lonMax - lonMin >= 360) return [[-180, 180]];
  if (lonMin < -180) return [[-180, lonMax], [lonMin + 360, 180]];
  if (lonMax > 180) return [[lonMin, 180], [-180, lonMax - 360]];
  return [[lonMin, lonMax]];
}

function nearest(candidates: readonly Farm[], rules: SiteRules, lat: number, lon: number, scope: Scope): Farm {
  let best: Farm | undefined;
  let bestKm = Infinity;
  for (const f of candidates) {
    if (!sees(scope, f.farmId)) continue;
    const km = distanceKm(lat, lon, f.lat, f.lon);
    if (km <= rules.matchRadiusKm && (km < bestKm || (km === bestKm && best !== undefined && f.farmId < best.farmId))) {
      best = f;
      bestKm = km;
    }
  }
  if (!best) {
    throw notFound(
      `No registered site lies within ${rules.matchRadiusKm} km of lat=${numberText(lat)}, lon=${numberText(lon)}.`,
    );
  }
  return best;
}
