import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { clipRing, regionOutline, ringPath } from '../../scripts/regionOutline.js';
import { OUTLINE_BOX, project } from '../../web/src/map/projection.js';

type Ring = [number, number][];

const inBox = ([lon, lat]: [number, number]): boolean =>
  lon >= OUTLINE_BOX.lonMin - 1e-9 && lon <= OUTLINE_BOX.lonMax + 1e-9 && lat >= OUTLINE_BOX.latMin - 1e-9 && lat <= OUTLINE_BOX.latMax + 1e-9;

const PATH = /^(M-?\d+ -?\d+(l-?\d+ -?\d+)+z)+$/;

/** The absolute points of path data made of `M x y`, relative `l dx dy` and `z`, one list per subpath. */
const pathPoints = (d: string): [number, number][][] => {
  const out: [number, number][][] = [];
  let x = 0;
  let y = 0;
  for (const m of d.matchAll(/([Mlz])(?:(-?\d+) (-?\d+))?/g)) {
    if (m[1] === 'z') continue;
    if (m[1] === 'M') {
      x = Number(m[2]);
      y = Number(m[3]);
      out.push([[x, y]]);
    } else {
      x += Number(m[2]);
      y += Number(m[3]);
      out[out.length - 1]!.push([x, y]);
    }
  }
  return out;
};

describe('clipRing', () => {
  it('leaves a ring wholly inside unchanged', () => {
    const ring: Ring = [
      [100, 30],
      [110, 30],
      [110, 40],
      [100, 40],
      [100, 30],
    ];
    assert.deepEqual(clipRing(ring), ring);
  });

  it('cuts a ring crossing the box edge at the edge', () => {
    // A square straddling the west edge (lon 50).
    const ring: Ring = [
      [40, 30],
      [60, 30],
      [60, 40],
      [40, 40],
      [40, 30],
    ];
    const clipped = clipRing(ring);
    assert.ok(clipped.length >= 4);
    for (const p of clipped) assert.ok(inBox(p), JSON.stringify(p));
    assert.deepEqual(
      [...new Set(clipped.map((p) => p.join(',')))].sort(),
      ['50,30', '50,40', '60,30', '60,40'],
    );
  });

  it('cuts a slanted edge where it crosses', () => {
    const ring: Ring = [
      [150, 70],
      [170, 80],
      [150, 80],
    ];
    const clipped = clipRing(ring);
    for (const p of clipped) assert.ok(inBox(p), JSON.stringify(p));
    // The edge (150, 70) → (170, 80) crosses lat 75 at lon 160.
    assert.ok(clipped.some(([lon, lat]) => Math.abs(lon - 160) < 1e-9 && lat === 75));
    assert.ok(clipped.some(([lon, lat]) => lon === 150 && lat === 70));
  });

  it('cuts a ring larger than the box to the box', () => {
    const ring: Ring = [
      [0, -50],
      [180, -50],
      [180, 85],
      [0, 85],
    ];
    const clipped = clipRing(ring);
    for (const p of clipped) assert.ok(inBox(p), JSON.stringify(p));
    const b = OUTLINE_BOX;
    assert.deepEqual(
      [...new Set(clipped.map((p) => p.join(',')))].sort(),
      [`${b.lonMax},${b.latMax}`, `${b.lonMax},${b.latMin}`, `${b.lonMin},${b.latMax}`, `${b.lonMin},${b.latMin}`].sort(),
    );
  });

  it('gives nothing for a ring wholly outside', () => {
    assert.deepEqual(
      clipRing([
        [0, 0],
        [10, 0],
        [10, 10],
        [0, 10],
        [0, 0],
      ]),
      [],
    );
    assert.deepEqual(
      clipRing([
        [100, 80],
        [110, 80],
        [110, 85],
      ]),
      [],
    );
    assert.deepEqual(clipRing([]), []);
  });
});

describe('ringPath', () => {
  const triangle: Ring = [
    [100, 30],
    [110, 30],
    [110, 40],
    [100, 30],
  ];

  it('is relative path data from M to z, in whole units', () => {
    const d = ringPath(triangle);
    assert.match(d, PATH);
    assert.ok(d.startsWith('M'));
    assert.ok(d.endsWith('z'));
    const [points] = pathPoints(d);
    assert.deepEqual(
      points,
      triangle.map(([lon, lat]) => {
        const p = project(lon, lat);
        return [Math.round(p.x), Math.round(p.y)];
      }),
    );
  });

  it('drops points that round onto the one before', () => {
    const d = ringPath([
      [100, 30],
      [100, 30],
      [100.001, 30.001],
      [110, 30],
      [110, 30],
      [110, 40],
      [100, 30],
    ]);
    assert.equal(d, ringPath(triangle));
    assert.equal(d.match(/l/g)?.length, 3);
    assert.doesNotMatch(d, /l0 0/);
  });

  it('is empty for fewer than three points', () => {
    assert.equal(ringPath([]), '');
    assert.equal(ringPath([[100, 30]]), '');
    assert.equal(
      ringPath([
        [100, 30],
        [110, 30],
      ]),
      '',
    );
    assert.equal(
      ringPath([
        [100, 30],
        [100, 30],
        [100.01, 30],
        [110, 30],
        [110, 30],
      ]),
      '',
    );
  });
});

describe('regionOutline', () => {
  let outline: { name: string; d: string }[];
  before(() => {
    outline = regionOutline();
  });

  it('holds China with a path', () => {
    const china = outline.find((c) => c.name === 'China');
    assert.ok(china);
    assert.match(china.d, PATH);
    assert.ok(china.d.length > 1000);
  });

  it('is small enough to ship', () => {
    assert.ok(JSON.stringify(outline).length < 200 * 1024, `${JSON.stringify(outline).length} bytes`);
  });

  it('holds only countries with land in the box, every path well formed and inside it', () => {
    const names = new Set(outline.map((c) => c.name));
    for (const n of ['Mongolia', 'Japan', 'India', 'Kazakhstan']) assert.ok(names.has(n), n);
    for (const n of ['Brazil', 'France', 'United States of America', 'South Africa']) assert.ok(!names.has(n), n);
    const a = project(OUTLINE_BOX.lonMin, OUTLINE_BOX.latMax);
    const b = project(OUTLINE_BOX.lonMax, OUTLINE_BOX.latMin);
    for (const c of outline) {
      assert.match(c.d, PATH, c.name);
      for (const sub of pathPoints(c.d)) {
        assert.ok(sub.length >= 3, c.name);
        for (const [x, y] of sub) {
          assert.ok(x >= Math.floor(a.x) && x <= Math.ceil(b.x) && y >= Math.floor(a.y) && y <= Math.ceil(b.y), `${c.name}: ${x} ${y}`);
        }
      }
    }
  });
});
