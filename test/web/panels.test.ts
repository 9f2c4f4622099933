import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ELEMENT_NAMES } from '../../src/domain/elements.js';
import { CHANGE_FIELD, PANELS, panelsFor } from '../../web/src/panels.js';

const allFields = (panels: readonly { fields: readonly string[] }[]): string[] => panels.flatMap((p) => [...p.fields]);

describe('PANELS', () => {
  it('names only catalogue fields, each once', () => {
    const named = allFields(PANELS);
    assert.equal(new Set(named).size, named.length);
    for (const f of named) assert.ok(ELEMENT_NAMES.includes(f), f);
    assert.ok(ELEMENT_NAMES.includes(CHANGE_FIELD));
    assert.equal(new Set(PANELS.map((p) => p.id)).size, PANELS.length);
  });
});

describe('panelsFor', () => {
  it('places every catalogue field in exactly one panel when all are chosen', () => {
    const panels = panelsFor(ELEMENT_NAMES);
    const placed = allFields(panels);
    assert.deepEqual([...placed].sort(), [...ELEMENT_NAMES].sort());
    assert.equal(placed.length, ELEMENT_NAMES.length);
    // All of them by a designed panel: none falls back to a panel of its own.
    assert.deepEqual(
      panels.map((p) => p.id),
      PANELS.map((p) => p.id),
    );
    assert.deepEqual(panels, PANELS.map((p) => ({ ...p })));
  });

  it('keeps only the chosen fields and drops empty panels', () => {
    const panels = panelsFor(['t2m', 'spd100', 'spd10']);
    assert.deepEqual(panels, [
      { id: 'wind', title: 'Wind speed by height', fields: ['spd10', 'spd100'], style: 'lines' },
      { id: 'temperature', title: 'Temperature at 2 m', fields: ['t2m'], style: 'lines' },
    ]);
    // PANELS itself is not cut down.
    assert.deepEqual(PANELS.find((p) => p.id === 'wind')?.fields, ['spd10', 'spd30', 'spd50', 'spd70', 'spd100']);
    assert.equal(panelsFor(['tp'])[0]?.style, 'bars');
    assert.equal(panelsFor(['dir100'])[0]?.style, 'points');
  });

  it('follows the order of PANELS, not of the choice', () => {
    const reversed = [...ELEMENT_NAMES].reverse();
    assert.deepEqual(
      panelsFor(reversed).map((p) => p.id),
      PANELS.map((p) => p.id),
    );
    assert.deepEqual(
      panelsFor(['psfc', 'tp', 'sr', 'tr']).map((p) => [p.id, p.fields]),
      [
        ['radiation', ['tr', 'sr']],
        ['precipitation', ['tp']],
        ['pressure', ['psfc']],
      ],
    );
  });

  it('gives a field no panel names a panel of its own, after the designed ones', () => {
    const panels = panelsFor(['ws200', 'spd100', 'vis']);
    assert.deepEqual(panels, [
      { id: 'wind', title: 'Wind speed by height', fields: ['spd100'], style: 'lines' },
      { id: 'ws200', title: 'ws200', fields: ['ws200'], style: 'lines' },
      { id: 'vis', title: 'vis', fields: ['vis'], style: 'lines' },
    ]);
  });

  it('places a field chosen twice once', () => {
    const panels = panelsFor(['spd100', 'ws200', 'spd100', 'ws200']);
    assert.deepEqual(allFields(panels), ['spd100', 'ws200']);
    assert.equal(panels.length, 2);
  });

  it('is empty for no fields', () => {
    assert.deepEqual(panelsFor([]), []);
  });
});
