/** Which registered site a forecast request names: by farm_id, or the nearest to a point. */
import { notFound, outOfRange } from '../domain/errors.js';
import { boundingDegrees, distanceKm, inRange, type RangeBox } from '../domain/geo.js';
import { numberText } from '../domain/numberText.js';
import type { Box, Farm } from '../store/store.js';
import { then, type Maybe } from './maybe.js';

/** What finding a site reads: a store, or the read model (which answers from memory). */
export interface SiteSource {
  getFarm(farmId: string): Maybe<Farm | undefined>;
  farmsInBox(box: Box): Maybe<readonly Farm[]>;
}

export interface SiteRules {
  readonly range: RangeBox;
  readonly matchRadiusKm: number;
}

export function farmById(store: SiteSource, farmId: string): Maybe<Farm> {
  return then(store.getFarm(farmId), (farm) => {
    if (!farm) throw notFound(`farm_id "${farmId.slice(0, 64)}" is not a registered site.`);
    return farm;
  });
}

/** The registered site nearest to (lat, lon) within the match radius; ties go to the smaller farm_id. */
export function farmNear(store: SiteSource, rules: SiteRules, lat: number, lon: number): Maybe<Farm> {
  if (!inRange(rules.range, lat, lon)) {
    const r = rules.range;
    throw outOfRange(
      `Coordinates lat=${numberText(lat)}, lon=${numberText(lon)} are outside the service range ` +
        `(lon ${r.lonMin} to ${r.lonMax}, lat ${r.latMin} to ${r.latMax}).`,
    );
  }
  const { dLat, dLon } = boundingDegrees(lat, rules.matchRadiusKm);
  const box = { latMin: lat - dLat, latMax: lat + dLat, lonMin: lon - dLon, lonMax: lon + dLon };
  return then(store.farmsInBox(box), (candidates) => nearest(candidates, rules, lat, lon));
}

function nearest(candidates: readonly Farm[], rules: SiteRules, lat: number, lon: number): Farm {
  let best: Farm | undefined;
  let bestKm = Infinity;
  for (const f of candidates) {
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
