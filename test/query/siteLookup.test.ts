/**
 * The nearest site to a point, on a real store through the read model: the search for candidates crosses the
 * antimeridian (and takes every longitude near a pole), and ties and the radius hold there as elsewhere.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ApiError } from '../../src/domain/errors.js';
import { ReadModel } from '../../src/query/readModel.js';
import { EVERY_SITE } from '../../src/query/scope.js';
import { farmNear, type SiteRules } from '../../src/query/siteLookup.js';
import type { Store } from '../../src/store/store.js';
import { testStore } from '../helpers/fixtures.js';

let store: Store;
let cleanup: () => Promise<void>;
let reads: ReadModel;
const WORLD: SiteRules = { range: { lonMin: -180, latMin: -90, lonMax: 180, latMax: 90 }, matchRadiusKm: 5 };

before(async () => {
  ({ store, cleanup } = await testStore());
  await store.upsertFarms([
    { farmId: 'EAST', lat: 0, lon: 179.99, name: 'east of the date line', extra: [] },
    { farmId: 'WEST', lat: 10, lon: -179.995, name: 'west of the date line', extra: [] },
    { farmId: 'POLE', lat: 89.99, lon: 0, name: 'near the pole', extra: [] },
  ]);
  reads = new ReadModel(store, 1 << 20);
  await reads.sync();
});
after(() => cleanup());

const near = (lat: number, lon: number): string => (farmNear(reads, WORLD, lat, lon, EVERY_SITE) as { farmId: string }).farmId;

test('a site just across the antimeridian is found from either side, and ±180 is one meridian', () => {
  assert.equal(near(0, -179.99), 'EAST');
  assert.equal(near(0, -180), 'EAST');
  assert.equal(near(0, 180), 'EAST');
  assert.equal(near(10, 179.999), 'WEST');
  assert.equal(near(10, -179.99), 'WEST');
});

test('near a pole every longitude is searched; beyond the radius still nothing', () => {
  assert.equal(near(89.99, 180), 'POLE');
  assert.equal(near(89.995, -90), 'POLE');
  assert.throws(() => near(0, -179.9), (err: unknown) => err instanceof ApiError && /No registered site lies within 5 km/.test(err.message));
});
