/**
 * How a farm is laid out in a store row, the same in every adapter: the further
 * registry columns as a JSON array of [name, value] pairs (an array, not an
 * object, so that their order survives even for names that look like numbers).
 */
import type { Farm } from './store.js';

export interface FarmRow {
  farm_id: string;
  lat: number;
  lon: number;
  name: string;
  extra: string;
}

export const FARM_COLUMNS = 'farm_id, lat, lon, name, extra';

export const toFarm = (r: FarmRow): Farm => ({
  farmId: r.farm_id,
  lat: r.lat,
  lon: r.lon,
  name: r.name,
  extra: JSON.parse(r.extra) as [string, string][],
});

export const extraText = (f: Farm): string => JSON.stringify(f.extra);
