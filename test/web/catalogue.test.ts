import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ELEMENTS } from '../../src/domain/elements.js';
import { displayOf, type ElementDef } from '../../web/src/catalogue.js';

const byName = (name: string): ElementDef => {
  const e = ELEMENTS.find((d) => d.name === name);
  assert.ok(e, name);
  return e;
};

describe('displayOf', () => {
  it('gives every field of the catalogue a display', () => {
    const expected: Record<string, string> = {
      t2m: '°C',
      rh2m: '%',
      psfc: 'hPa',
      tcc: '%',
      tp: 'mm per 15 min',
      spd10: 'm s-1',
      dir10: '°',
      spd30: 'm s-1',
      spd50: 'm s-1',
      spd70: 'm s-1',
      spd100: 'm s-1',
      dir100: '°',
      tr: 'W m-2 (mean)',
      dr: 'W m-2 (mean)',
      sr: 'W m-2 (mean)',
    };
    assert.deepEqual(
      Object.fromEntries(ELEMENTS.map((e) => [e.name, displayOf(e).unit])),
      expected,
    );
    for (const e of ELEMENTS) {
      const d = displayOf(e);
      assert.equal(typeof d.convert(1), 'number', e.name);
      assert.ok(Number.isFinite(d.convert(1)), e.name);
      // A note exactly when the shown value or unit means something other than what is delivered.
      const changed = e.unit === 'K' || e.unit === 'Pa' || e.kind === 'accumulated';
      assert.equal(d.note !== '', changed, e.name);
      if (!changed) assert.equal(d.convert(12.5), 12.5, e.name);
    }
  });

  it('shows temperature in °C', () => {
    const d = displayOf(byName('t2m'));
    assert.equal(d.convert(273.15), 0);
    assert.ok(Math.abs(d.convert(300) - 26.85) < 1e-9);
    assert.ok(Math.abs(d.convert(253.15) - -20) < 1e-9);
  });

  it('shows accumulated radiation as the mean flux over 15 minutes', () => {
    for (const name of ['tr', 'dr', 'sr']) {
      const d = displayOf(byName(name));
      assert.equal(d.convert(900), 1, name);
      assert.equal(d.convert(0), 0, name);
      assert.equal(d.convert(450_000), 500, name);
    }
  });

  it('shows pressure in hPa', () => {
    const d = displayOf(byName('psfc'));
    assert.equal(d.convert(101325), 1013.25);
    assert.equal(d.unit, 'hPa');
  });

  it('leaves accumulated precipitation as delivered, per 15 minutes', () => {
    const d = displayOf(byName('tp'));
    assert.equal(d.convert(0.7), 0.7);
    // kg m-2 of water is a millimetre.
    assert.equal(d.unit, 'mm per 15 min');
  });

  it('decides by unit and kind, not by name', () => {
    const def = (unit: string, kind: 'instant' | 'accumulated'): ElementDef => ({ name: 'x', description: 'x', unit, kind });
    assert.equal(displayOf(def('K', 'instant')).convert(274.15), 1);
    assert.equal(displayOf(def('Pa', 'instant')).convert(200), 2);
    // J m-2 that is not an amount over the step is not divided.
    const inst = displayOf(def('J m-2', 'instant'));
    assert.equal(inst.unit, 'J m-2');
    assert.equal(inst.convert(900), 900);
    const acc = displayOf(def('mm', 'accumulated'));
    assert.equal(acc.unit, 'mm per 15 min');
    assert.equal(acc.convert(3), 3);
    assert.equal(displayOf(def('kg m-2', 'accumulated')).unit, 'mm per 15 min');
    assert.equal(displayOf(def('kg m-2', 'accumulated')).convert(0.25), 0.25);
    assert.equal(displayOf(def('cm', 'accumulated')).unit, 'cm per 15 min');
    assert.equal(displayOf(def('degree', 'instant')).unit, '°');
    const other = displayOf(def('m s-1', 'instant'));
    assert.equal(other.unit, 'm s-1');
    assert.equal(other.note, '');
    assert.equal(other.convert(-4.25), -4.25);
  });
});
