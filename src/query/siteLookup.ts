/** Which registered site a forecast request names: by farm_id, or the nearest to a point. */
import { notFound, outOfRange } from '../domain/errors.js';
import { boundingDegrees, distanceKm, inRange, type RangeBox } from '../domain/geo.js';
import { numberText } from '../domain/numberText.js';
import type { Farm, Store } from '../store/store.js';

type SiteSource = Pick<Store, 'getFarm' | 'farmsInBox'>;

export interface SiteRules {
  readonly range: RangeBox;
  readonly matchRadiusKm: number;
}

export async function farmById(store: SiteSource, farmId: string): Promise<Farm> {
  const farm = await store.getFarm(farmId);
  if (!farm) throw notFound(`farm_id "${farmId.slice(0, 64)}" is not a registered site.`);
  return farm;
}

/** The registered site nearest to (lat, lon) within the match radius; ties go to the smaller farm_id. */
export async function farmNear(store: SiteSource, rules: SiteRules, lat: number, lon: number): Promise<Farm> {
  if (!inRange(rules.range, lat, lon)) {
    const r = rules.range;
    throw outOfRange(
      `Coordinates lat=${numberText(lat)}, lon=${numberText(lon)} are outside the service range ` +
        `(lon ${r.lonMin} to ${r.lonMax}, lat ${r.latMin} to ${r.latMax}).`,
    );
  }
  const { dLat, dLon } = boundingDegrees(lat, rules.matchRadiusKm);
  const candidates = await store.farmsInBox({
    latMin: lat - dLat,
    latMax: lat + dLat,
    lonMin: lon - dLon,
    lonMax: lon + dLon,
  });
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
