import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { boundingDegrees, distanceKm, inRange, parseRange } from '../../src/domain/geo.js';
import { DEFAULT_RANGE } from '../../src/domain/limits.js';

const near = (a: number, b: number, tol: number, what = '') => assert.ok(Math.abs(a - b) <= tol, `${what} ${a} vs ${b}`);

describe('distanceKm', () => {
  it('is zero for the same point', () => {
    assert.equal(distanceKm(40.5, 95.25, 40.5, 95.25), 0);
  });

  it('one degree of latitude is about 111.2 km anywhere', () => {
    near(distanceKm(0, 0, 1, 0), 111.19, 0.05);
    near(distanceKm(40, 95, 41, 95), 111.19, 0.05);
    near(distanceKm(-60, -120, -61, -120), 111.19, 0.05);
  });

  it('one degree of longitude shrinks with cos(lat)', () => {
    near(distanceKm(0, 100, 0, 101), 111.19, 0.05);
    near(distanceKm(60, 100, 60, 101), 111.19 * 0.5, 0.1);
  });

  it('knows a real distance (Beijing to Shanghai, about 1068 km)', () => {
    near(distanceKm(39.9042, 116.4074, 31.2304, 121.4737), 1067, 5);
  });

  it('half the globe is pi R, across the antimeridian and between poles', () => {
    near(distanceKm(90, 0, -90, 0), Math.PI * 6371.0088, 1e-6);
    near(distanceKm(0, 179.5, 0, -179.5), 111.19, 0.05);
  });

  it('is symmetric (property)', () => {
    const lat = fc.double({ min: -90, max: 90, noNaN: true });
    const lon = fc.double({ min: -180, max: 180, noNaN: true });
    fc.assert(
      fc.property(lat, lon, lat, lon, (a, b, c, d) => {
        const x = distanceKm(a, b, c, d);
        near(x, distanceKm(c, d, a, b), 1e-9);
        assert.ok(x >= 0 && x <= Math.PI * 6371.0088 + 1e-9);
      }),
    );
  });
});

describe('inRange', () => {
  const box = DEFAULT_RANGE;

  it('edges are inclusive', () => {
    assert.ok(inRange(box, 0, 70));
    assert.ok(inRange(box, 60, 140));
    assert.ok(inRange(box, 0, 140));
    assert.ok(inRange(box, 60, 70));
    assert.ok(inRange(box, 30, 105));
  });

  it('anything beyond an edge is out', () => {
    assert.ok(!inRange(box, -0.0001, 100));
    assert.ok(!inRange(box, 60.0001, 100));
    assert.ok(!inRange(box, 30, 69.9999));
    assert.ok(!inRange(box, 30, 140.0001));
  });

  it('takes lat first and lon second', () => {
    // (lat 100, lon 50) is not (lat 50, lon 100)
    assert.ok(inRange(box, 50, 100));
    assert.ok(!inRange(box, 100, 50));
  });
});

describe('parseRange', () => {
  it('reads lonMin,latMin,lonMax,latMax', () => {
    assert.deepEqual(parseRange('70,0,140,60'), { lonMin: 70, latMin: 0, lonMax: 140, latMax: 60 });
    assert.deepEqual(parseRange(' -180 , -90 , 180 , 90 '), { lonMin: -180, latMin: -90, lonMax: 180, latMax: 90 });
    assert.deepEqual(parseRange('100.5,20.25,100.5,20.25'), { lonMin: 100.5, latMin: 20.25, lonMax: 100.5, latMax: 20.25 });
  });

  it('rejects malformed or impossible boxes with a message naming the input', () => {
    for (const bad of [
      '',
      '70,0,140',
      '70,0,140,60,1',
      '70,,140,60',
      'a,0,140,60',
      '70,0,140,Infinity',
      '70,0,140,NaN',
      '140,0,70,60',
      '70,60,140,0',
      '-181,0,140,60',
      '70,0,181,60',
      '70,-91,140,60',
      '70,0,140,91',
    ]) {
      assert.throws(() => parseRange(bad), (e: unknown) => e instanceof Error && e.message.includes(`"${bad}"`), JSON.stringify(bad));
    }
  });
});

describe('boundingDegrees', () => {
  it('grows with the radius and with latitude', () => {
    const a = boundingDegrees(0, 5);
    const b = boundingDegrees(0, 10);
    const c = boundingDegrees(60, 5);
    assert.ok(b.dLat > a.dLat && b.dLon > a.dLon);
    assert.ok(c.dLon > a.dLon);
    assert.equal(c.dLat, a.dLat);
    assert.ok(a.dLat > 5 / 111.2 && a.dLat < 5 / 110);
  });

  it('the box contains every point within the radius (property)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -89.999, max: 89.999, noNaN: true }),
        fc.double({ min: -170, max: 170, noNaN: true }),
        fc.double({ min: 0.01, max: 500, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 2 * Math.PI, noNaN: true }),
        (lat, lon, radius, frac, bearing) => {
          // the point at distance frac*radius along the bearing (spherical destination formula)
          const R = 6371.0088;
          const d = (frac * radius) / R;
          const p1 = (lat * Math.PI) / 180;
          const p2 = Math.asin(Math.sin(p1) * Math.cos(d) + Math.cos(p1) * Math.sin(d) * Math.cos(bearing));
          const l2 =
            (lon * Math.PI) / 180 +
            Math.atan2(Math.sin(bearing) * Math.sin(d) * Math.cos(p1), Math.cos(d) - Math.sin(p1) * Math.sin(p2));
          const plat = (p2 * 180) / Math.PI;
          const plon = (l2 * 180) / Math.PI; // lon + a difference in (-180, 180]
          if (distanceKm(lat, lon, plat, plon) > radius) return; // rounding at the rim
          const { dLat, dLon } = boundingDegrees(lat, radius);
          assert.ok(Math.abs(plat - lat) <= dLat, `lat ${plat} outside ${lat}±${dLat}`);
          assert.ok(Math.abs(plon - lon) <= dLon, `lon ${plon} outside ${lon}±${dLon} (lat ${lat}, r ${radius})`);
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('a circle that reaches a pole spans every longitude', () => {
    // from 89.99N a site on the far side of the pole is only ~1.7 km away
    assert.ok(distanceKm(89.99, 0, 89.995, 179) < 5);
    assert.ok(boundingDegrees(89.99, 5).dLon >= 180);
    assert.ok(boundingDegrees(-89.99, 5).dLon >= 180);
    // close to but not reaching the pole: the circle spans far more than 26 degrees of longitude
    assert.ok(distanceKm(89.93, 0, 89.95, 40) < 5.1);
    assert.ok(boundingDegrees(89.93, 5.1).dLon >= 40);
  });

  it('is finite and at most 360 degrees of longitude', () => {
    for (const lat of [-90, -45, 0, 45, 89.9, 90]) {
      const { dLat, dLon } = boundingDegrees(lat, 5);
      assert.ok(Number.isFinite(dLat) && Number.isFinite(dLon) && dLon <= 360 && dLon > 0);
    }
  });
});
