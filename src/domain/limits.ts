/** Every numeric limit and default of the interface, defined once. */

/**
 * The largest page number of any paged answer (2^31 - 1): far past the end of every list, and small enough
 * that the page an answer echoes is the page asked for. A larger number is refused, not rounded.
 */
export const MAX_PAGE = 2_147_483_647;

/** GET /api/v1/forecast paging (records). */
export const FORECAST_PAGE = Object.freeze({ defaultSize: 96, maxSize: 1441 });
/** GET /api/v1/farms paging (sites). */
export const FARMS_PAGE = Object.freeze({ defaultSize: 1000, maxSize: 10_000 });
/** GET /api/v1/forecast/issues paging (runs). */
export const ISSUES_PAGE = Object.freeze({ defaultSize: 100, maxSize: 1000 });

/** Default coordinate match radius, km (great-circle). */
export const DEFAULT_MATCH_RADIUS_KM = 5;
/** Default service range box: lonMin, latMin, lonMax, latMax. */
export const DEFAULT_RANGE = Object.freeze({ lonMin: 70, latMin: 0, lonMax: 140, latMax: 60 });

/** farm_id: 1-64 characters of A-Z a-z 0-9 _ - . */
export const FARM_ID_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * The largest run file ingest reads, bytes. A run of 1,441 records is under 1 MB even with long values;
 * a larger file is no run file, and is rejected before it is read into memory.
 */
export const MAX_RUN_FILE_BYTES = 16 * 1024 * 1024;

/** The largest farm registry file `farms import` reads, bytes: some hundred thousand sites. */
export const MAX_FARMS_FILE_BYTES = 64 * 1024 * 1024;

/**
 * The most columns a farm registry may have, farm_id, lat, lon and name included: far more attributes than
 * any registry carries, and a bound on what one row may make (a 64 MiB header of empty names was millions).
 */
export const MAX_FARMS_COLUMNS = 1000;
