import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  clearSkyGhi,
  cloudTransmittance,
  cosZenith,
  erbsDiffuseFraction,
  intervalRadiation,
  localSolarHour,
  solarElevationDeg,
  sunriseSolarHour,
} from '../../src/demo/solar.js';

const H = 3_600_000;
const MIN = 60_000;

/** The instant of the highest sun on a UTC day, searched minute by minute. */
function solarNoon(lat: number, lon: number, dayMs: number): number {
  let best = dayMs;
  for (let t = dayMs; t < dayMs + 24 * H; t += MIN) {
    if (cosZenith(lat, lon, t) > cosZenith(lat, lon, best)) best = t;
  }
  return best;
}

test('noon sun height: 90 - latitude + declination at solstices and equinoxes', () => {
  const lat = 39.9;
  const lon = 116.4; // Beijing
  const cases: [number, number][] = [
    [Date.UTC(2025, 5, 21), 90 - lat + 23.44],
    [Date.UTC(2025, 11, 21), 90 - lat - 23.44],
    [Date.UTC(2025, 2, 20), 90 - lat],
  ];
  for (const [day, expected] of cases) {
    const noon = solarNoon(lat, lon, day - 8 * H);
    assert.ok(Math.abs(solarElevationDeg(lat, lon, noon) - expected) < 0.6, new Date(day).toISOString());
    // Solar noon is at local solar time 12 and near 12:00 - 4 min/degree * (lon - 120) Beijing time.
    assert.ok(Math.abs(localSolarHour(lon, noon) - 12) < 2 / 60);
    const beijingMinutes = ((noon + 8 * H) % (24 * H)) / MIN;
    assert.ok(Math.abs(beijingMinutes - (12 * 60 - 4 * (lon - 120))) < 20, String(beijingMinutes));
  }
});

test('sunrise hour agrees with where the elevation crosses zero', () => {
  for (const [lat, lon] of [[47.35, 123.92], [29.63, 91.05], [40.52, 95.78]] as const) {
    for (const day of [Date.UTC(2025, 0, 15), Date.UTC(2025, 6, 1)]) {
      let t = day - 12 * H;
      while (solarElevationDeg(lat, lon, t) > 0) t += MIN;
      while (solarElevationDeg(lat, lon, t) <= 0) t += MIN;
      assert.ok(Math.abs(localSolarHour(lon, t) - sunriseSolarHour(lat, t)) < 0.05, `${lat} ${day}`);
    }
  }
});

test('clear-sky model, cloud reduction and diffuse split stay physical', () => {
  assert.equal(clearSkyGhi(0, 0), 0);
  assert.equal(clearSkyGhi(-0.3, 1000), 0);
  assert.ok(Math.abs(clearSkyGhi(1, 0) - 1098 * Math.exp(-0.057)) < 1e-9);
  assert.ok(clearSkyGhi(1, 3000) > clearSkyGhi(1, 0));
  assert.equal(cloudTransmittance(0), 1);
  assert.equal(cloudTransmittance(100), 0.25);
  let prev = 1;
  for (let c = 0; c <= 100; c += 5) {
    const f = cloudTransmittance(c);
    assert.ok(f <= prev);
    prev = f;
  }
  for (let kt = 0; kt <= 1; kt += 0.01) {
    const kd = erbsDiffuseFraction(kt);
    assert.ok(kd >= 0.16 && kd <= 1, String(kt));
  }
  // The three Erbs pieces meet at their boundaries.
  assert.ok(Math.abs(erbsDiffuseFraction(0.22) - erbsDiffuseFraction(0.2200001)) < 1e-3);
  assert.ok(Math.abs(erbsDiffuseFraction(0.8) - erbsDiffuseFraction(0.8000001)) < 1e-3);
});

test('interval radiation: zero at night, positive and bounded around noon', () => {
  const lat = 36.42;
  const lon = 94.9;
  const night = Date.UTC(2025, 5, 21, 20); // 02 local solar time
  const r = intervalRadiation(lat, lon, 2800, night, 0);
  assert.equal(r.direct, 0);
  assert.equal(r.diffuse, 0);
  const noon = solarNoon(lat, lon, Date.UTC(2025, 5, 21));
  const clear = intervalRadiation(lat, lon, 2800, noon + 7.5 * MIN, 0);
  const meanWm2 = (clear.direct + clear.diffuse) / 900;
  assert.ok(meanWm2 > 900 && meanWm2 < 1361, String(meanWm2));
  assert.ok(clear.direct > clear.diffuse);
  const overcast = intervalRadiation(lat, lon, 2800, noon + 7.5 * MIN, 100);
  assert.ok(overcast.direct + overcast.diffuse < 0.3 * (clear.direct + clear.diffuse));
  assert.ok(overcast.diffuse > overcast.direct);
});
