import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fitView, OUTLINE_BOX, project, UNITS_PER_DEGREE, type ViewBox } from '../../../web/src/map/projection.js';

const X_PER_DEGREE = Math.cos((36 * Math.PI) / 180) * UNITS_PER_DEGREE;
const close = (a: number, b: number, eps = 1e-9): boolean => Math.abs(a - b) <= eps * Math.max(1, Math.abs(a), Math.abs(b));

const strictlyInside = (v: ViewBox, lon: number, lat: number): boolean => {
  const p = project(lon, lat);
  return p.x > v.x && p.x < v.x + v.width && p.y > v.y && p.y < v.y + v.height;
};

describe('project', () => {
  it('is equirectangular with longitudes shrunk by cos 36°', () => {
    const p = project(100, 36);
    assert.ok(close(p.x, 100 * X_PER_DEGREE));
    assert.equal(p.y, -36 * UNITS_PER_DEGREE);
    assert.ok(close(project(101, 30).x - project(100, 30).x, X_PER_DEGREE));
    assert.ok(close(project(101, 50).x - project(100, 50).x, X_PER_DEGREE));
    assert.equal(project(100, 31).y - project(100, 30).y, -UNITS_PER_DEGREE);
  });

  it('puts north up and east right', () => {
    assert.ok(project(100, 40).y < project(100, 30).y);
    assert.ok(project(110, 30).x > project(100, 30).x);
    assert.ok(project(100, -10).y > 0);
  });

  it('keeps shapes near 36° N in proportion', () => {
    // One degree east is cos 36° of one degree north there, as on the ground.
    const east = project(101, 36).x - project(100, 36).x;
    const north = project(100, 36).y - project(100, 37).y;
    assert.ok(close(east / north, Math.cos((36 * Math.PI) / 180)));
  });
});

describe('fitView', () => {
  it('holds every point, with a margin, in the asked aspect (property)', () => {
    // A fixed pseudo-random sequence (MINSTD): the same cases every run.
    let seed = 12345;
    const rnd = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let run = 0; run < 300; run++) {
      const n = 1 + Math.floor(rnd() * 30);
      // Spread from a few metres to the whole range, so both the minimum and the points' box decide.
      const spread = rnd() ** 3;
      const lon0 = 60 + rnd() * 90;
      const lat0 = rnd() * 60;
      const points = Array.from({ length: n }, () => ({ lon: lon0 + (rnd() - 0.5) * 90 * spread, lat: lat0 + (rnd() - 0.5) * 60 * spread }));
      const aspect = 0.3 + rnd() * 3.7;
      const v = fitView(points, aspect);
      assert.ok(close(v.width / v.height, aspect), `aspect ${v.width / v.height} vs ${aspect}`);
      for (const p of points) assert.ok(strictlyInside(v, p.lon, p.lat), JSON.stringify({ p, v }));
    }
  });

  it('leaves a margin around the spread of the points', () => {
    const points = [
      { lon: 75, lat: 20 },
      { lon: 130, lat: 50 },
      { lon: 100, lat: 35 },
    ];
    const v = fitView(points, 1.5);
    const a = project(75, 50);
    const b = project(130, 20);
    assert.ok(v.width >= (b.x - a.x) * 1.1 - 1e-9);
    assert.ok(v.height >= (b.y - a.y) * 1.1 - 1e-9);
    // Centred on the points' box.
    assert.ok(close(v.x + v.width / 2, (a.x + b.x) / 2));
    assert.ok(close(v.y + v.height / 2, (a.y + b.y) / 2));
    // Not much more than needed: the box touches the margin on one side.
    assert.ok(close(v.width, (b.x - a.x) * 1.1) || close(v.height, (b.y - a.y) * 1.1));
  });

  it('shows the surroundings of one point, at least minDegrees across', () => {
    for (const aspect of [0.5, 1, 16 / 9]) {
      const v = fitView([{ lon: 100, lat: 36 }], aspect);
      assert.ok(strictlyInside(v, 100, 36));
      const c = project(100, 36);
      assert.ok(close(v.x + v.width / 2, c.x));
      assert.ok(close(v.y + v.height / 2, c.y));
      assert.ok(v.width / X_PER_DEGREE >= 12, `width ${v.width / X_PER_DEGREE}°`);
      assert.ok(close(v.width / v.height, aspect));
      // And a wider minimum widens it.
      const wide = fitView([{ lon: 100, lat: 36 }], aspect, 30);
      assert.ok(wide.width / X_PER_DEGREE >= 30);
      assert.ok(wide.width > v.width);
    }
  });

  it('is the same for a point given many times and for that point once', () => {
    assert.deepEqual(fitView([{ lon: 100, lat: 36 }, { lon: 100, lat: 36 }], 2), fitView([{ lon: 100, lat: 36 }], 2));
  });

  it('shows the default service range when there are no points', () => {
    const v = fitView([], 1.6);
    for (const [lon, lat] of [
      [73, 18],
      [135, 18],
      [73, 54],
      [135, 54],
    ] as const) {
      assert.ok(strictlyInside(v, lon, lat), `${lon}, ${lat}`);
    }
    assert.ok(close(v.width / v.height, 1.6));
    // All of it lies within the outline's box, so the outline covers what is shown.
    assert.ok(v.x >= project(OUTLINE_BOX.lonMin, 0).x && v.x + v.width <= project(OUTLINE_BOX.lonMax, 0).x);
    assert.ok(v.y >= project(0, OUTLINE_BOX.latMax).y && v.y + v.height <= project(0, OUTLINE_BOX.latMin).y);
  });
});
