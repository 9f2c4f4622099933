/**
 * Solar geometry and a simple all-sky radiation model for the demo generator.
 *
 * Geometry: Spencer's (1971) Fourier series for declination, equation of time
 * and earth-sun distance, as used in the NOAA solar calculator; accurate to a
 * fraction of a degree, which is far below what a 15-minute chart can show.
 * Radiation: Haurwitz clear-sky GHI, Kasten-Czeplak cloud reduction and the
 * Erbs diffuse fraction, integrated over each 15-minute interval.
 */
import { STEP_MS } from '../domain/run.js';

const DEG = Math.PI / 180;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const J2000_NOON_MS = Date.UTC(2000, 0, 1, 12);
const TROPICAL_YEAR_DAYS = 365.2422;

export const SOLAR_CONSTANT_W_M2 = 1361;

/**
 * The fractional-year angle in radians, 0 at 1 January noon UTC. Measured from
 * J2000 in tropical years rather than from the calendar year start, so that it
 * is continuous at the new year and needs no Date object per call; it drifts
 * from the calendar by at most a quarter day over the leap-year cycle.
 */
export function yearAngle(ms: number): number {
  const years = (ms - J2000_NOON_MS) / DAY_MS / TROPICAL_YEAR_DAYS;
  return 2 * Math.PI * (years - Math.floor(years));
}

/** Solar declination, radians. */
export function declination(g: number): number {
  return (
    0.006918 -
    0.399912 * Math.cos(g) +
    0.070257 * Math.sin(g) -
    0.006758 * Math.cos(2 * g) +
    0.000907 * Math.sin(2 * g) -
    0.002697 * Math.cos(3 * g) +
    0.00148 * Math.sin(3 * g)
  );
}

/** Equation of time, minutes (apparent minus mean solar time). */
export function equationOfTimeMin(g: number): number {
  return (
    229.18 *
    (0.000075 +
      0.001868 * Math.cos(g) -
      0.032077 * Math.sin(g) -
      0.014615 * Math.cos(2 * g) -
      0.040849 * Math.sin(2 * g))
  );
}

/** (mean distance / distance)^2: scales the solar constant over the year (about ±3.3 %). */
export function earthSunFactor(g: number): number {
  return (
    1.00011 +
    0.034221 * Math.cos(g) +
    0.00128 * Math.sin(g) +
    0.000719 * Math.cos(2 * g) +
    0.000077 * Math.sin(2 * g)
  );
}

const mod24 = (h: number): number => h - 24 * Math.floor(h / 24);

/** Apparent (true) local solar time at a longitude, hours in [0, 24); 12 is solar noon. */
export function localSolarHour(lonDeg: number, ms: number): number {
  const utcHours = (ms - DAY_MS * Math.floor(ms / DAY_MS)) / HOUR_MS;
  return mod24(utcHours + lonDeg / 15 + equationOfTimeMin(yearAngle(ms)) / 60);
}

/** Cosine of the solar zenith angle; negative when the sun is below the horizon. */
export function cosZenith(latDeg: number, lonDeg: number, ms: number): number {
  const g = yearAngle(ms);
  const decl = declination(g);
  const utcMin = (ms - DAY_MS * Math.floor(ms / DAY_MS)) / 60_000;
  const trueSolarMin = utcMin + equationOfTimeMin(g) + 4 * lonDeg;
  const hourAngle = (trueSolarMin / 4 - 180) * DEG;
  const lat = latDeg * DEG;
  return Math.sin(lat) * Math.sin(decl) + Math.cos(lat) * Math.cos(decl) * Math.cos(hourAngle);
}

/** Geometric solar elevation above the horizon, degrees (no refraction). */
export function solarElevationDeg(latDeg: number, lonDeg: number, ms: number): number {
  return Math.asin(Math.max(-1, Math.min(1, cosZenith(latDeg, lonDeg, ms)))) / DEG;
}

/**
 * Local solar time of sunrise on the day of `ms`, hours (12 minus half the day
 * length). Clamped to 0 / 12 for polar day / night, which no demo site reaches.
 */
export function sunriseSolarHour(latDeg: number, ms: number): number {
  const x = -Math.tan(latDeg * DEG) * Math.tan(declination(yearAngle(ms)));
  const halfDay = Math.acos(Math.max(-1, Math.min(1, x))) / DEG / 15;
  return 12 - halfDay;
}

/**
 * Haurwitz clear-sky global horizontal irradiance, W m-2, with a mild gain for
 * altitude: less air above a plateau site (Lhasa, Golmud) lets more sunlight
 * through, which is why those sites are built there.
 */
export function clearSkyGhi(cosZ: number, elevationM: number): number {
  if (cosZ <= 0) return 0;
  const altitudeGain = 1 + 0.04 * Math.max(0, elevationM) / 1000;
  return 1098 * cosZ * Math.exp(-0.057 / cosZ) * altitudeGain;
}

/** Kasten-Czeplak: fraction of clear-sky GHI that reaches the ground under total cloud cover tcc (%). */
export function cloudTransmittance(tccPercent: number): number {
  const c = Math.max(0, Math.min(100, tccPercent)) / 100;
  return 1 - 0.75 * Math.pow(c, 3.4);
}

/** Erbs et al. (1982): diffuse fraction of GHI from the clearness index kt. */
export function erbsDiffuseFraction(kt: number): number {
  if (kt <= 0.22) return 1 - 0.09 * Math.max(0, kt);
  if (kt <= 0.8) return 0.9511 + kt * (-0.1604 + kt * (4.388 + kt * (-16.638 + kt * 12.336)));
  return 0.165;
}

/** Direct-on-horizontal and diffuse irradiance, W m-2. */
export interface Irradiance {
  direct: number;
  diffuse: number;
}

/** Instantaneous all-sky irradiance split for one sun position and cloud cover; written into `out`. */
export function irradiance(cosZ: number, ms: number, elevationM: number, tccPercent: number, out: Irradiance): Irradiance {
  const ghi = clearSkyGhi(cosZ, elevationM) * cloudTransmittance(tccPercent);
  if (ghi <= 0) {
    out.direct = 0;
    out.diffuse = 0;
    return out;
  }
  const extraterrestrial = SOLAR_CONSTANT_W_M2 * earthSunFactor(yearAngle(ms)) * cosZ;
  const kt = Math.min(1, ghi / extraterrestrial);
  const diffuse = ghi * erbsDiffuseFraction(kt);
  out.direct = ghi - diffuse;
  out.diffuse = diffuse;
  return out;
}

/** Sub-samples per 15-minute interval: enough to follow sunrise and sunset within the interval. */
export const RADIATION_SUBSAMPLES = 5;

/**
 * Radiation accumulated over the 15 minutes ending at `endMs` (period-ending),
 * J m-2: the mean of the irradiance at the sub-interval midpoints times 900 s.
 * Every sample lies strictly inside the interval, so an interval in which the
 * sun stays below the horizon accumulates exactly 0.
 */
export function intervalRadiation(
  latDeg: number,
  lonDeg: number,
  elevationM: number,
  endMs: number,
  tccPercent: number,
  out: Irradiance = { direct: 0, diffuse: 0 },
): Irradiance {
  const sample: Irradiance = { direct: 0, diffuse: 0 };
  let direct = 0;
  let diffuse = 0;
  const sub = STEP_MS / RADIATION_SUBSAMPLES;
  for (let j = 0; j < RADIATION_SUBSAMPLES; j++) {
    const ms = endMs - STEP_MS + (j + 0.5) * sub;
    const cosZ = cosZenith(latDeg, lonDeg, ms);
    if (cosZ <= 0) continue;
    irradiance(cosZ, ms, elevationM, tccPercent, sample);
    direct += sample.direct;
    diffuse += sample.diffuse;
  }
  const seconds = STEP_MS / 1000;
  out.direct = (direct / RADIATION_SUBSAMPLES) * seconds;
  out.diffuse = (diffuse / RADIATION_SUBSAMPLES) * seconds;
  return out;
}
