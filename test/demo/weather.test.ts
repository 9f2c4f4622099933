import { test } from 'node:test';
import assert from 'node:assert/strict';
import { elementIndex } from '../../src/domain/elements.js';
import { MAX_STEP, STEP_MS, type RunSeries } from '../../src/domain/run.js';
import { DEMO_SITES, demoIssues, type DemoSite } from '../../src/demo/sites.js';
import { solarElevationDeg } from '../../src/demo/solar.js';
import { demoSeries } from '../../src/demo/weather.js';

const H = 3_600_000;
const DAY = 24 * H;
const SEED = 20250101;
const WINTER = Date.UTC(2025, 0, 10, 0);
const SUMMER = Date.UTC(2025, 6, 10, 12);

const F = {
  t2m: elementIndex('t2m'),
  rh2m: elementIndex('rh2m'),
  psfc: elementIndex('psfc'),
  tcc: elementIndex('tcc'),
  tp: elementIndex('tp'),
  spd10: elementIndex('spd10'),
  dir10: elementIndex('dir10'),
  spd30: elementIndex('spd30'),
  spd50: elementIndex('spd50'),
  spd70: elementIndex('spd70'),
  spd100: elementIndex('spd100'),
  dir100: elementIndex('dir100'),
  tr: elementIndex('tr'),
  dr: elementIndex('dr'),
  sr: elementIndex('sr'),
};
const SPEEDS = [F.spd10, F.spd30, F.spd50, F.spd70, F.spd100];
const DECIMALS: Record<number, number> = {
  [F.t2m]: 2,
  [F.rh2m]: 1,
  [F.psfc]: 0,
  [F.tcc]: 1,
  [F.tp]: 2,
  [F.spd10]: 2,
  [F.spd30]: 2,
  [F.spd50]: 2,
  [F.spd70]: 2,
  [F.spd100]: 2,
  [F.dir10]: 1,
  [F.dir100]: 1,
  [F.tr]: 0,
  [F.dr]: 0,
  [F.sr]: 0,
};

// Every site in winter and in summer: the runs the checks below are made on.
const cache = new Map<string, RunSeries>();
function run(site: DemoSite, issue: number, seed = SEED): RunSeries {
  const key = `${site.farmId}/${issue}/${seed}`;
  let s = cache.get(key);
  if (!s) cache.set(key, (s = demoSeries(site, issue, seed)));
  return s;
}
const CASES = DEMO_SITES.flatMap((site) => [WINTER, SUMMER].map((issue) => ({ site, issue })));

function mean(xs: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < xs.length; i++) sum += xs[i]!;
  return sum / xs.length;
}

function correlation(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const ma = mean(a);
  const mb = mean(b);
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let i = 0; i < a.length; i++) {
    sab += (a[i]! - ma) * (b[i]! - mb);
    saa += (a[i]! - ma) ** 2;
    sbb += (b[i]! - mb) ** 2;
  }
  return sab / Math.sqrt(saa * sbb);
}

test('deterministic: same seed, site and issue give identical series; another seed does not', () => {
  const site = DEMO_SITES[0]!;
  const a = demoSeries(site, WINTER, 7);
  const b = demoSeries(site, WINTER, 7);
  assert.deepEqual(a.steps, b.steps);
  a.columns.forEach((col, e) => assert.deepEqual(col, b.columns[e]));
  const c = demoSeries(site, WINTER, 8);
  for (const e of [F.t2m, F.spd10, F.tcc, F.psfc]) assert.notDeepEqual(a.columns[e], c.columns[e]);
  // Sites are not copies of each other either.
  const d = demoSeries(DEMO_SITES[1]!, WINTER, 7);
  assert.notDeepEqual(a.columns[F.spd10], d.columns[F.spd10]);
});

test('full run: 1441 records k = 0..1440, every field filled with plain, rounded numbers', () => {
  for (const { site, issue } of CASES) {
    const s = run(site, issue);
    assert.equal(s.steps.length, MAX_STEP + 1);
    s.steps.forEach((k, i) => assert.equal(k, i));
    assert.equal(s.columns.length, 15);
    s.columns.forEach((col, e) => {
      assert.equal(col.length, MAX_STEP + 1);
      const f = 10 ** DECIMALS[e]!;
      for (const v of col) {
        if (!Number.isFinite(v) || Object.is(v, -0) || String(v).includes('e') || Math.round(v * f) / f !== v) {
          assert.fail(`${site.farmId} field ${e}: ${v}`);
        }
      }
    });
  }
});

test('accumulations: 0 at k = 0, never negative, tr = dr + sr in whole J m-2', () => {
  for (const { site, issue } of CASES) {
    const c = run(site, issue).columns;
    for (const e of [F.tp, F.tr, F.dr, F.sr]) assert.equal(c[e]![0], 0);
    for (let k = 0; k <= MAX_STEP; k++) {
      const tr = c[F.tr]![k]!;
      const dr = c[F.dr]![k]!;
      const sr = c[F.sr]![k]!;
      if (!(Number.isInteger(dr) && Number.isInteger(sr) && dr >= 0 && sr >= 0 && tr === dr + sr && c[F.tp]![k]! >= 0)) {
        assert.fail(`${site.farmId} k=${k}: tr=${tr} dr=${dr} sr=${sr}`);
      }
    }
  }
});

test('radiation is 0 when the sun is below the horizon for the whole interval, positive when well up', () => {
  for (const { site, issue } of CASES) {
    const c = run(site, issue).columns;
    let dark = 0;
    for (let k = 1; k <= MAX_STEP; k++) {
      const end = issue + k * STEP_MS;
      let maxElevation = -90;
      for (let t = end - STEP_MS; t <= end; t += 30_000) {
        maxElevation = Math.max(maxElevation, solarElevationDeg(site.lat, site.lon, t));
      }
      if (maxElevation < 0) {
        dark++;
        if (c[F.tr]![k] !== 0 || c[F.dr]![k] !== 0 || c[F.sr]![k] !== 0) assert.fail(`${site.farmId} k=${k} at night`);
      }
      const midElevation = solarElevationDeg(site.lat, site.lon, end - STEP_MS / 2);
      if (midElevation > 5 && !(c[F.tr]![k]! > 0)) assert.fail(`${site.farmId} k=${k} sun at ${midElevation}`);
      // Never more than the sun delivers at the top of the atmosphere.
      if (c[F.tr]![k]! > 1400 * 900) assert.fail(`${site.farmId} k=${k}: ${c[F.tr]![k]}`);
    }
    assert.ok(dark > 400 && dark < 1000, `${site.farmId}: ${dark} dark intervals`);
  }
});

test('a clear summer noon at a plateau solar site is bright, mostly direct', () => {
  const site = DEMO_SITES.find((s) => s.farmId === 'PV_QH01')!;
  const c = run(site, SUMMER).columns;
  let checked = 0;
  for (let k = 1; k <= MAX_STEP; k++) {
    const end = SUMMER + k * STEP_MS;
    if (solarElevationDeg(site.lat, site.lon, end - STEP_MS / 2) < 70 || c[F.tcc]![k]! > 30) continue;
    checked++;
    assert.ok(c[F.tr]![k]! / 900 > 800, String(c[F.tr]![k]));
    assert.ok(c[F.dr]![k]! > c[F.sr]![k]!);
  }
  assert.ok(checked > 0, 'no clear noon in the run');
});

test('ranges: humidity and cloud 0..100, directions in [0, 360), speeds non-negative, pressure near the site mean', () => {
  for (const { site, issue } of CASES) {
    const c = run(site, issue).columns;
    const p0 = 101325 * Math.exp(-site.elevationM / 8400);
    for (let k = 0; k <= MAX_STEP; k++) {
      const bad =
        !(c[F.rh2m]![k]! >= 0 && c[F.rh2m]![k]! <= 100) ||
        !(c[F.tcc]![k]! >= 0 && c[F.tcc]![k]! <= 100) ||
        !(c[F.dir10]![k]! >= 0 && c[F.dir10]![k]! < 360) ||
        !(c[F.dir100]![k]! >= 0 && c[F.dir100]![k]! < 360) ||
        SPEEDS.some((e) => !(c[e]![k]! >= 0 && c[e]![k]! < 40)) ||
        Math.abs(c[F.psfc]![k]! - p0) > 4000 ||
        !(c[F.t2m]![k]! > 220 && c[F.t2m]![k]! < 320) ||
        !(c[F.tp]![k]! < 5);
      if (bad) assert.fail(`${site.farmId} ${issue} k=${k}: ${c.map((col) => col[k]).join(',')}`);
    }
  }
});

test('wind grows with height: per record and on average spd10 < spd30 < spd50 < spd70 < spd100', () => {
  for (const { site, issue } of CASES) {
    const c = run(site, issue).columns;
    const means = SPEEDS.map((e) => mean(c[e]!));
    for (let j = 1; j < means.length; j++) assert.ok(means[j]! > means[j - 1]!, `${site.farmId}: ${means}`);
    for (let k = 0; k <= MAX_STEP; k++) {
      for (let j = 1; j < SPEEDS.length; j++) {
        if (c[SPEEDS[j]!]![k]! < c[SPEEDS[j - 1]!]![k]!) assert.fail(`${site.farmId} k=${k}`);
      }
    }
    assert.ok(means[0]! > 1.5 && means[0]! < 10, `${site.farmId} mean spd10 ${means[0]}`);
    // Directions veer with height, by some degrees.
    let veer = 0;
    for (let k = 0; k <= MAX_STEP; k++) veer += ((c[F.dir100]![k]! - c[F.dir10]![k]! + 540) % 360) - 180;
    veer /= MAX_STEP + 1;
    assert.ok(veer > 3 && veer < 45, `${site.farmId} veer ${veer}`);
  }
});

test('fields move smoothly from one 15-minute record to the next', () => {
  for (const { site, issue } of CASES) {
    const c = run(site, issue).columns;
    for (let k = 1; k <= MAX_STEP; k++) {
      const turn = Math.abs(((c[F.dir10]![k]! - c[F.dir10]![k - 1]! + 540) % 360) - 180);
      const jump =
        Math.abs(c[F.t2m]![k]! - c[F.t2m]![k - 1]!) > 2 ||
        Math.abs(c[F.psfc]![k]! - c[F.psfc]![k - 1]!) > 150 ||
        Math.abs(c[F.spd10]![k]! - c[F.spd10]![k - 1]!) > 2 ||
        Math.abs(c[F.tcc]![k]! - c[F.tcc]![k - 1]!) > 15 ||
        turn > 15;
      if (jump) assert.fail(`${site.farmId} ${issue} k=${k}`);
    }
  }
});

test('temperature: seasonal level, daily maximum in the local afternoon, humidity lowest when warmest', () => {
  let days = 0;
  let afternoon = 0;
  for (const { site, issue } of CASES) {
    const c = run(site, issue).columns;
    const t = c[F.t2m]!;
    const m = mean(t);
    if (issue === WINTER && site.lat > 38) assert.ok(m < 273.15, `${site.farmId} winter mean ${m}`);
    if (issue === SUMMER) assert.ok(m > 283 && m < 308, `${site.farmId} summer mean ${m}`);
    // Local mean solar days inside the run, to the nearest record.
    const offset = (site.lon / 360) * DAY;
    const firstDay = Math.ceil((issue + offset) / DAY) * DAY - offset;
    for (let start = firstDay; start + DAY <= issue + MAX_STEP * STEP_MS; start += DAY) {
      const k0 = Math.round((start - issue) / STEP_MS);
      let best = k0;
      for (let k = k0; k < k0 + 96; k++) if (t[k]! > t[best]!) best = k;
      const hour = ((best - k0) * STEP_MS) / H;
      days++;
      if (hour >= 12 && hour <= 18) afternoon++;
    }
    assert.ok(correlation(t, c[F.rh2m]!) < 0, `${site.farmId} rh vs t2m`);
  }
  assert.ok(afternoon / days > 0.8, `${afternoon} of ${days} days peak in the afternoon`);
});

test('cloud brings the rain: mostly dry, small amounts under high cloud', () => {
  let records = 0;
  let wet = 0;
  for (const { site, issue } of CASES) {
    const c = run(site, issue).columns;
    for (let k = 1; k <= MAX_STEP; k++) {
      records++;
      if (c[F.tp]![k]! > 0) {
        wet++;
        assert.ok(c[F.tcc]![k]! > 70, `${site.farmId} k=${k} rain from ${c[F.tcc]![k]} % cloud`);
      }
    }
  }
  assert.ok(wet > 0 && wet / records < 0.2, `${wet} wet records of ${records}`);
});

test('consecutive runs agree closely, but not exactly, at the same valid time', () => {
  let shortDiff = 0;
  let longDiff = 0;
  let shortN = 0;
  let longN = 0;
  const [newer, older] = demoIssues(SUMMER + 3 * H, 2) as [number, number];
  for (const site of DEMO_SITES) {
    const a = run(site, older).columns[F.t2m]!;
    const b = run(site, newer).columns[F.t2m]!;
    const shift = (newer - older) / STEP_MS;
    let identical = 0;
    for (let kb = 0; kb + shift <= MAX_STEP; kb++) {
      const d = Math.abs(a[kb + shift]! - b[kb]!);
      if (d === 0) identical++;
      if (kb < 96) {
        shortDiff += d;
        shortN++;
      } else if (kb > 1000) {
        longDiff += d;
        longN++;
      }
    }
    assert.ok(identical < 200, `${site.farmId}: ${identical} identical values`);
  }
  shortDiff /= shortN;
  longDiff /= longN;
  assert.ok(shortDiff > 0.05 && shortDiff < 1.5, `mean |dT| in the first day ${shortDiff}`);
  assert.ok(longDiff > shortDiff, `error should grow with lead: ${shortDiff} then ${longDiff}`);
});
