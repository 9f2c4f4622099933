import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_RANGE, FARM_ID_PATTERN } from '../../src/domain/limits.js';
import { inRange } from '../../src/domain/geo.js';
import { DEMO_SITES, FARMS_CSV_HEADER, demoFarmsCsv, type DemoSite } from '../../src/demo/sites.js';

test('24 demo sites with unique, valid farm ids inside the default service range', () => {
  assert.equal(DEMO_SITES.length, 24);
  assert.equal(new Set(DEMO_SITES.map((s) => s.farmId)).size, 24);
  for (const s of DEMO_SITES) {
    assert.match(s.farmId, FARM_ID_PATTERN);
    assert.ok(inRange(DEFAULT_RANGE, s.lat, s.lon), `${s.farmId} at ${s.lat},${s.lon}`);
    assert.ok(s.elevationM >= 0 && s.elevationM < 5000, s.farmId);
    assert.ok(s.capacityMw > 0, s.farmId);
    assert.ok(s.name.length > 0 && !/[,"\r\n]/.test(s.name), s.name);
    assert.equal(s.farmId.startsWith(s.kind === 'wind' ? 'WF_' : 'PV_'), true, s.farmId);
  }
});

test('a mix of wind and solar across the northern and western provinces', () => {
  const wind = DEMO_SITES.filter((s) => s.kind === 'wind').length;
  assert.ok(wind >= 10 && wind <= 14, `wind sites: ${wind}`);
  const provinces = new Set(DEMO_SITES.map((s) => s.province));
  for (const p of ['Inner Mongolia', 'Gansu', 'Xinjiang', 'Qinghai', 'Ningxia', 'Hebei', 'Tibet']) {
    assert.ok(provinces.has(p), p);
  }
});

test('farms CSV: exact header, one LF-terminated row per site, cells that read back', () => {
  const text = demoFarmsCsv();
  assert.ok(!text.includes('\r'));
  assert.ok(text.endsWith('\n'));
  const lines = text.split('\n');
  assert.equal(lines.pop(), '');
  assert.equal(lines[0], 'farm_id,lat,lon,name,kind,province,elevation_m,capacity_mw');
  assert.equal(lines[0], FARMS_CSV_HEADER);
  assert.equal(lines.length, 1 + DEMO_SITES.length);
  lines.slice(1).forEach((line, i) => {
    const cells = line.split(',');
    assert.equal(cells.length, 8, line);
    const s = DEMO_SITES[i]!;
    assert.deepEqual(cells, [
      s.farmId,
      String(s.lat),
      String(s.lon),
      s.name,
      s.kind,
      s.province,
      String(s.elevationM),
      String(s.capacityMw),
    ]);
  });
});

test('farms CSV of a subset, and refusal of a name that would break the row', () => {
  assert.equal(demoFarmsCsv([]), FARMS_CSV_HEADER + '\n');
  assert.equal(demoFarmsCsv(DEMO_SITES.slice(0, 3)).split('\n').length, 5);
  const bad: DemoSite = { ...DEMO_SITES[0]!, name: 'Jiuquan, Wind Farm' };
  assert.throws(() => demoFarmsCsv([bad]), /comma/);
});
