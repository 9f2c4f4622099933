/**
 * Site climatology for the demo generator: the slowly varying background
 * (annual mean, seasonal swing, dryness, typical wind) on which the synoptic
 * weather is laid. Rough empirical fits to station normals of northern and
 * western China (e.g. Qiqihar, Beijing, Golmud, Lhasa), good to a few kelvin:
 * the aim is a believable chart, not a climate record.
 */
import { hashString } from './noise.js';
import type { DemoSite } from './sites.js';
import { yearAngle } from './solar.js';

export const ZERO_CELSIUS_K = 273.15;
export const STANDARD_PRESSURE_PA = 101_325;
/** Pressure scale height used for the mean surface pressure of an elevated site. */
export const SCALE_HEIGHT_M = 8400;

export interface SiteClimate {
  /** Annual mean 2 m temperature, K. */
  readonly annualMeanK: number;
  /** Half the difference between the July and January means, K. */
  readonly seasonalAmpK: number;
  /** 0 for the monsoon-watered east, 1 for the deserts of the far west. */
  readonly aridity: number;
  /** Half the clear-sky diurnal temperature range, K. */
  readonly diurnalHalfRangeK: number;
  /** Long-run mean 10 m wind speed, m s-1. */
  readonly windMean10: number;
  /** Offset of the cloud latent: negative means mostly clear skies. */
  readonly cloudBias: number;
  /** Mean surface pressure, Pa. */
  readonly surfacePressurePa: number;
}

const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

export function siteClimate(site: DemoSite): SiteClimate {
  const elevKm = Math.max(0, site.elevationM) / 1000;
  // The monsoon reaches the east; rainfall falls off steadily towards the Tarim basin.
  const aridity = clamp((116 - site.lon) / 22, 0.15, 1);
  // A site-specific but seed-independent exposure factor: some ridges are windier than others.
  const exposure = 0.9 + 0.2 * ((hashString(site.farmId) & 0xffff) / 65535);
  return {
    // Lapse rate over the plateaus is smaller than the free-air 6.5 K/km because
    // the high ground itself heats the air.
    annualMeanK: ZERO_CELSIUS_K + 30 - 0.9 * (site.lat - 20) - 4.5 * elevKm,
    seasonalAmpK: 4 + 0.36 * site.lat - 1.2 * elevKm,
    aridity,
    // Dry air and thin air both widen the day-night swing.
    diurnalHalfRangeK: 4 + 2.5 * aridity + 0.6 * elevKm,
    // Wind farms sit where the wind is; solar farms only get what passes by.
    windMean10: (site.kind === 'wind' ? 5.2 : 3.4) * exposure,
    cloudBias: -0.2 - 1.3 * aridity,
    surfacePressurePa: STANDARD_PRESSURE_PA * Math.exp(-site.elevationM / SCALE_HEIGHT_M),
  };
}

const DAY_ANGLE = (2 * Math.PI) / 365.2422;

/**
 * The lagged annual temperature cycle: -1 in mid-January (day 17), +1 in
 * mid-July (day 199). Continental China lags the solstice by about four weeks.
 */
export function seasonIndex(ms: number): number {
  return -Math.cos(yearAngle(ms) - 16 * DAY_ANGLE);
}

/** +1 in mid-April, -1 in mid-October: spring is the windy season of northern China. */
export function springIndex(ms: number): number {
  return Math.cos(yearAngle(ms) - 104 * DAY_ANGLE);
}

/**
 * Direction the wind most often blows from, degrees: the north-westerly winter
 * monsoon out of the Siberian high, turning south-easterly in summer.
 */
export function prevailingDirection(season: number): number {
  return 225 - 75 * season;
}
