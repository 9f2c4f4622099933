/**
 * The demo forecast of one run at one site: all fifteen catalogue fields for
 * k = 0 ... 1440, physically consistent with each other.
 *
 * The weather is driven by a few smooth latent variables (pressure pattern,
 * air mass, wind, cloud, moisture, rain). Each latent is the sum of a "truth"
 * that depends only on (seed, site, valid time), shared by every run, and a
 * run error keyed by (seed, site, issue) whose size grows with lead time. So
 * consecutive runs agree closely at short lead and drift apart further out, as
 * real model runs do.
 */
import { elementIndex } from '../domain/elements.js';
import { MAX_STEP, STEP_MS, emptySeries, type RunSeries } from '../domain/run.js';
import { HOUR_MS } from '../domain/time.js';
import { prevailingDirection, seasonIndex, siteClimate, springIndex, type SiteClimate } from './climate.js';
import { NoiseChannel, hashStep, hashString, type Octave } from './noise.js';
import type { DemoSite } from './sites.js';
import { cosZenith, intervalRadiation, localSolarHour, sunriseSolarHour, type Irradiance } from './solar.js';

function column(name: string): number {
  const i = elementIndex(name);
  if (i < 0) throw new Error(`element catalogue has no field ${name}`);
  return i;
}

const T2M = column('t2m');
const RH2M = column('rh2m');
const PSFC = column('psfc');
const TCC = column('tcc');
const TP = column('tp');
const SPD10 = column('spd10');
const DIR10 = column('dir10');
const SPD30 = column('spd30');
const SPD50 = column('spd50');
const SPD70 = column('spd70');
const SPD100 = column('spd100');
const DIR100 = column('dir100');
const TR = column('tr');
const DR = column('dr');
const SR = column('sr');

/** Latent channels and their time scales (hours): fronts pass every few days, showers within hours. */
const LATENTS = {
  pressure: [{ periodH: 72, weight: 1 }, { periodH: 30, weight: 0.45 }],
  airMass: [{ periodH: 60, weight: 1 }, { periodH: 24, weight: 0.4 }],
  wind: [{ periodH: 48, weight: 1 }, { periodH: 16, weight: 0.5 }, { periodH: 4, weight: 0.2 }],
  direction: [{ periodH: 54, weight: 1 }, { periodH: 18, weight: 0.4 }],
  cloud: [{ periodH: 36, weight: 1 }, { periodH: 12, weight: 0.6 }, { periodH: 4, weight: 0.25 }],
  moisture: [{ periodH: 60, weight: 1 }, { periodH: 20, weight: 0.4 }],
  rain: [{ periodH: 10, weight: 1 }, { periodH: 3, weight: 0.6 }],
} as const satisfies Record<string, readonly Octave[]>;

type LatentName = keyof typeof LATENTS;
const LATENT_NAMES = Object.keys(LATENTS) as LatentName[];

/** Run error in lead-time hours: slower than the weather itself, it shifts and re-times systems. */
const RUN_ERROR: readonly Octave[] = [
  { periodH: 30, weight: 1 },
  { periodH: 10, weight: 0.5 },
];

/**
 * Size of the run error relative to the weather, by lead time: small but not
 * zero at analysis time, growing to most of the natural variability at +15 days.
 */
function runErrorScale(leadH: number): number {
  return 0.12 + 0.68 * Math.min(1, leadH / 300);
}

const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

function smoothstep(lo: number, hi: number, x: number): number {
  const t = clamp((x - lo) / (hi - lo), 0, 1);
  return t * t * (3 - 2 * t);
}

/** Rounds to `digits` decimals without ever producing -0 (whose text would be "-0"). */
function round(x: number, digits: number): number {
  const f = 10 ** digits;
  const r = Math.round(x * f) / f;
  return r === 0 ? 0 : r;
}

/** A direction in [0, 360) rounded to one decimal; a value that rounds up to 360 becomes 0. */
function direction(deg: number): number {
  let d = round(deg - 360 * Math.floor(deg / 360), 1);
  if (d >= 360) d = 0;
  return d;
}

/** Saturation vapour pressure, hPa (Magnus, over water; only its ratio is used). */
function saturationVapourPressure(tK: number): number {
  const c = tK - 273.15;
  return 6.112 * Math.exp((17.62 * c) / (243.12 + c));
}

const SOLAR_HOUR_OF_MAX_T = 14.5;

/**
 * Shape of the diurnal temperature cycle in local solar time, -1 ... 1: the
 * minimum at sunrise, after a night of radiative cooling, and the maximum in
 * the early afternoon, when the ground has stopped gaining heat. Half-cosines
 * between the two make a smooth curve with flat turning points.
 */
function diurnalShape(solarHour: number, sunriseHour: number): number {
  const rise = Math.min(sunriseHour, SOLAR_HOUR_OF_MAX_T - 1);
  if (solarHour >= rise && solarHour <= SOLAR_HOUR_OF_MAX_T) {
    return -Math.cos((Math.PI * (solarHour - rise)) / (SOLAR_HOUR_OF_MAX_T - rise));
  }
  const h = solarHour < rise ? solarHour + 24 : solarHour;
  return Math.cos((Math.PI * (h - SOLAR_HOUR_OF_MAX_T)) / (rise + 24 - SOLAR_HOUR_OF_MAX_T));
}

/** Everything one (seed, site, issue) run needs, built once per series. */
class RunModel {
  readonly climate: SiteClimate;
  private readonly truth: Record<LatentName, NoiseChannel>;
  private readonly error: Record<LatentName, NoiseChannel>;

  constructor(
    readonly site: DemoSite,
    readonly issueMs: number,
    seed: number,
  ) {
    this.climate = siteClimate(site);
    const seedKey = Number.isFinite(seed) ? seed >>> 0 : 0;
    const siteKey = hashStep(hashStep(0x5eed_d3a0, seedKey), hashString(site.farmId));
    const issueKey = Math.floor(issueMs / 60_000) | 0;
    const truth = {} as Record<LatentName, NoiseChannel>;
    const error = {} as Record<LatentName, NoiseChannel>;
    LATENT_NAMES.forEach((name, c) => {
      const key = hashStep(siteKey, c + 1);
      truth[name] = new NoiseChannel(key, LATENTS[name]);
      error[name] = new NoiseChannel(hashStep(hashStep(key, 0x7e11), issueKey), RUN_ERROR);
    });
    this.truth = truth;
    this.error = error;
  }

  /** The latent as this run forecasts it, kept near unit variance at every lead. */
  latent(name: LatentName, ms: number): number {
    const leadH = (ms - this.issueMs) / HOUR_MS;
    const e = runErrorScale(Math.max(0, leadH));
    return (this.truth[name].at(ms / HOUR_MS) + e * this.error[name].at(leadH)) / Math.sqrt(1 + e * e);
  }

  /**
   * Cloud fraction 0..1: the cloud latent through a logistic, shifted by the
   * site's dryness, the summer monsoon and, in summer, afternoon convection.
   */
  cloudFraction(ms: number, season: number, solarHour: number): number {
    const summer = Math.max(0, season);
    const fromAfternoon = solarHour - 15;
    const convection = summer * 0.5 * Math.exp(-(fromAfternoon * fromAfternoon) / 9);
    const monsoon = summer * 0.8 * (1 - 0.5 * this.climate.aridity);
    const x = 1.9 * this.latent('cloud', ms) + this.climate.cloudBias + monsoon + convection;
    return 1 / (1 + Math.exp(-x));
  }

  /** Precipitation over 15 minutes, kg m-2: only from near-overcast skies, more in summer, less in deserts. */
  precipitation(ms: number, cloud: number, season: number): number {
    if (cloud <= 0.8) return 0;
    const intensity = Math.max(0, this.latent('rain', ms));
    const overcast = (cloud - 0.8) / 0.2;
    return 0.45 * overcast * overcast * intensity * (0.35 + 0.325 * (season + 1)) * (1 - 0.6 * this.climate.aridity);
  }
}

/** Instantaneous (unrounded) state at one valid time. */
interface State {
  t2m: number;
  rh2m: number;
  psfc: number;
  tcc: number;
  spd10: number;
  alpha: number;
  dir10: number;
  veer: number;
}

function instantState(m: RunModel, ms: number, out: State): State {
  const { site, climate } = m;
  const season = seasonIndex(ms);
  const solarHour = localSolarHour(site.lon, ms);
  // 0 at night, 1 once the sun is a good 17 degrees up: drives mixing and stability.
  const daylight = smoothstep(-0.05, 0.3, cosZenith(site.lat, site.lon, ms));

  const pressure = m.latent('pressure', ms);
  const airMass = m.latent('airMass', ms);
  const cloud = m.cloudFraction(ms, season, solarHour);

  // Wind: log-normal around the site mean; by day convection mixes momentum
  // down to 10 m, by night the surface layer decouples and the shear grows.
  const windy = 1 + 0.12 * springIndex(ms);
  const spd10 = climate.windMean10 * windy * Math.exp(0.45 * m.latent('wind', ms)) * (0.85 + 0.3 * daylight);
  const alpha = 0.1 + 0.22 * (1 - daylight) * Math.exp(-spd10 / 10);

  // Temperature: climatology plus air-mass anomaly (cold outbreaks come with
  // high pressure), larger in winter; the diurnal swing shrinks under cloud and strong wind.
  const synopticSpread = 3 - 1.2 * season;
  const dailyMean =
    climate.annualMeanK + climate.seasonalAmpK * season + synopticSpread * (0.8 * airMass - 0.5 * pressure);
  const swing =
    climate.diurnalHalfRangeK * (1 - 0.55 * cloud ** 1.5) * (1 - 0.3 * clamp((spd10 - 4) / 8, 0, 1));
  const t2m = dailyMean + swing * diurnalShape(solarHour, sunriseSolarHour(site.lat, ms));

  // Humidity: the dew point follows the air mass, not the hour, so relative
  // humidity peaks at dawn and dips in the afternoon heat.
  const dawnDepression = Math.max(0.3, 1 + 9 * climate.aridity - 3.5 * cloud + 2 * m.latent('moisture', ms));
  const dewPoint = dailyMean - swing - dawnDepression;
  const rh2m = clamp((100 * saturationVapourPressure(dewPoint)) / saturationVapourPressure(t2m), 2, 100);

  // Pressure: the winter Siberian high, passing systems and the semidiurnal tide.
  const heightRatio = climate.surfacePressurePa / 101_325;
  const tide = 80 * Math.cos((2 * Math.PI * (solarHour - 10)) / 12);
  const psfc = climate.surfacePressurePa + heightRatio * (-500 * season + 1100 * pressure) + tide;

  out.t2m = t2m;
  out.rh2m = rh2m;
  out.psfc = psfc;
  out.tcc = cloud * 100;
  out.spd10 = spd10;
  out.alpha = alpha;
  out.dir10 = prevailingDirection(season) + 70 * m.latent('direction', ms);
  // Wind turns clockwise with height (Ekman veering), more so in the stable night.
  out.veer = 8 + 20 * (1 - daylight);
  return out;
}


// Power-law wind profile spd_h = spd10 * (h / 10)^alpha, with the logarithms of h / 10 precomputed.
const LN_3 = Math.log(3);
const LN_5 = Math.log(5);
const LN_7 = Math.log(7);
const LN_10 = Math.log(10);

/**
 * The full demo run of one site: 1441 records, k = 0 ... 1440, every field
 * filled. Deterministic in (site, issueMs, seed); `seed` is used as an unsigned
 * 32-bit integer.
 */
export function demoSeries(site: DemoSite, issueMs: number, seed: number): RunSeries {
  const n = MAX_STEP + 1;
  const series = emptySeries(n);
  const c = series.columns;
  const m = new RunModel(site, issueMs, seed);
  const st: State = { t2m: 0, rh2m: 0, psfc: 0, tcc: 0, spd10: 0, alpha: 0, dir10: 0, veer: 0 };
  const rad: Irradiance = { direct: 0, diffuse: 0 };

  for (let k = 0; k < n; k++) {
    const ms = issueMs + k * STEP_MS;
    series.steps[k] = k;
    instantState(m, ms, st);
    c[T2M]![k] = round(st.t2m, 2);
    c[RH2M]![k] = round(st.rh2m, 1);
    c[PSFC]![k] = round(st.psfc, 0);
    c[TCC]![k] = round(clamp(st.tcc, 0, 100), 1);
    c[SPD10]![k] = round(st.spd10, 2);
    c[SPD30]![k] = round(st.spd10 * Math.exp(st.alpha * LN_3), 2);
    c[SPD50]![k] = round(st.spd10 * Math.exp(st.alpha * LN_5), 2);
    c[SPD70]![k] = round(st.spd10 * Math.exp(st.alpha * LN_7), 2);
    c[SPD100]![k] = round(st.spd10 * Math.exp(st.alpha * LN_10), 2);
    c[DIR10]![k] = direction(st.dir10);
    c[DIR100]![k] = direction(st.dir10 + st.veer);

    if (k === 0) {
      // Accumulations over the 15 minutes before the analysis are not part of the run.
      c[TP]![k] = 0;
      c[TR]![k] = 0;
      c[DR]![k] = 0;
      c[SR]![k] = 0;
      continue;
    }
    // Accumulated fields see the sky of the middle of their interval.
    const mid = ms - STEP_MS / 2;
    const season = seasonIndex(mid);
    const cloud = m.cloudFraction(mid, season, localSolarHour(site.lon, mid));
    c[TP]![k] = round(m.precipitation(mid, cloud, season), 2);
    intervalRadiation(site.lat, site.lon, site.elevationM, ms, cloud * 100, rad);
    const dr = round(rad.direct, 0);
    const sr = round(rad.diffuse, 0);
    c[DR]![k] = dr;
    c[SR]![k] = sr;
    c[TR]![k] = dr + sr;
  }
  return series;
}
