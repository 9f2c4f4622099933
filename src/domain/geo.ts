/** Great-circle distance and the service range box. */

const EARTH_RADIUS_KM = 6371.0088;
const RAD = Math.PI / 180;

export function distanceKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const dLat = (lat2 - lat1) * RAD;
  const dLon = (lon2 - lon1) * RAD;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

export interface RangeBox {
  readonly lonMin: number;
  readonly latMin: number;
  readonly lonMax: number;
  readonly latMax: number;
}

export const inRange = (box: RangeBox, lat: number, lon: number): boolean =>
  lon >= box.lonMin && lon <= box.lonMax && lat >= box.latMin && lat <= box.latMax;

/** `lonMin,latMin,lonMax,latMax` -> box; throws a message naming the fault. */
export function parseRange(text: string): RangeBox {
  const parts = text.split(',').map((p) => p.trim());
  const nums = parts.map(Number);
  if (parts.length !== 4 || parts.some((p) => p === '') || nums.some((n) => !Number.isFinite(n))) {
    throw new Error(`--range must be four numbers lonMin,latMin,lonMax,latMax, got "${text}"`);
  }
  const [lonMin, latMin, lonMax, latMax] = nums as [number, number, number, number];
  if (lonMin > lonMax || latMin > latMax || lonMin < -180 || lonMax > 180 || latMin < -90 || latMax > 90) {
    throw new Error(`--range "${text}" is not a box within lon -180..180 and lat -90..90 with min <= max`);
  }
  return { lonMin, latMin, lonMax, latMax };
}

/**
 * Degrees of latitude and longitude that certainly contain a circle of the given
 * radius around (lat, lon): a cheap pre-filter before the exact distance.
 */
export function boundingDegrees(lat: number, radiusKm: number): { dLat: number; dLon: number } {
  const dLat = radiusKm / 110.574 + 1e-9;
  const reach = Math.abs(lat) + dLat;
  // A circle that reaches a pole spans every longitude.
  if (reach >= 90) return { dLat, dLon: 360 };
  const cosLat = Math.cos(reach * RAD);
  return { dLat, dLon: Math.min(360, dLat / cosLat) };
}
