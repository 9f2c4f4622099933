/** Which registered site a forecast request names: by farm_id, or the nearest to a point. */
import { notFound, outOfRange } from '../domain/errors.js';
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
    if (!farm || !sees(scope, farm.farmId)) throw notFound(`farm_id "${farmId.slice(0, 64)}" is not a registered site.`);
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
  const box = { latMin: lat - dLat, latMax: lat + dLat, lonMin: lon - dLon, lonMax: lon + dLon };
  return then(store.farmsInBox(box), (candidates) => nearest(candidates, rules, lat, lon, scope));
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
