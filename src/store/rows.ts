/**
 * How farms and runs are laid out in store rows, the same in every adapter. A
 * farm's further registry columns are a JSON array of [name, value] pairs (an
 * array, not an object, so that their order survives even for names that look
 * like numbers). Integer columns may arrive as text (PostgreSQL's bigint).
 */
import { openSeries } from '../domain/codec.js';
import type { EncodedRun, Farm, RunArrival, RunVersion, StoredRun } from './store.js';

export interface FarmRow {
  farm_id: string;
  lat: number;
  lon: number;
  name: string;
  extra: string;
  updated_at: number | string;
}

export const FARM_COLUMNS = 'farm_id, lat, lon, name, extra, updated_at';

export const toFarm = (r: FarmRow): Farm => ({
  farmId: r.farm_id,
  lat: r.lat,
  lon: r.lon,
  name: r.name,
  extra: JSON.parse(r.extra) as [string, string][],
  updatedAt: Number(r.updated_at),
});

export const extraText = (f: Farm): string => JSON.stringify(f.extra);

/** A run as selected: the blob, its revision and publication time (ms). */
export interface RunRow {
  /** A Buffer from the drivers; a Uint8Array when the row was sent from SQLite's read thread. */
  series: Uint8Array;
  revision: number | string;
  published_at: number | string;
}

export const RUN_COLUMNS = 'series, revision, published_at';

export const toStoredRun = (farmId: string, issue: string, r: RunRow): StoredRun => ({
  farmId,
  issue,
  view: openSeries(r.series),
  revision: Number(r.revision),
  publishedAt: Number(r.published_at),
});

export const toEncodedRun = (r: RunRow & { farm_id: string; issue: string }): EncodedRun => ({
  farmId: r.farm_id,
  issue: r.issue,
  blob: r.series,
  revision: Number(r.revision),
  publishedAt: Number(r.published_at),
});

/** A run's version as selected (numbers may come back as text from PostgreSQL). */
export interface RunVersionRow {
  farm_id: string;
  revision: number | string;
  published_at: number | string;
}

export const toRunVersion = (r: RunVersionRow): RunVersion => ({
  farmId: r.farm_id,
  revision: Number(r.revision),
  publishedAt: Number(r.published_at),
});

/** Per run: how many sites hold data and when they arrived (numbers may come back as text from PostgreSQL). */
export interface RunArrivalRow {
  issue: string;
  farms: number | string;
  first: number | string;
  lastFirst: number | string;
  last: number | string;
}

export const toArrival = (r: RunArrivalRow): RunArrival => ({
  issue: r.issue,
  farms: Number(r.farms),
  firstPublishedAt: Number(r.first),
  lastArrivalAt: Number(r.lastFirst),
  lastPublishedAt: Number(r.last),
});
