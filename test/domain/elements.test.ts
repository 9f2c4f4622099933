import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ELEMENT_NAMES, elementIndex, elementIndexAt } from '../../src/domain/elements.js';

describe('elementIndexAt', () => {
  it('finds every name in place, amid other text, as elementIndex finds it cut out', () => {
    ELEMENT_NAMES.forEach((name, i) => {
      assert.equal(elementIndexAt(name, 0, name.length), i, name);
      const text = `x,${name},y`;
      assert.equal(elementIndexAt(text, 2, 2 + name.length), i, text);
    });
  });

  it('agrees with elementIndex on prefixes, extensions, case and one-letter changes of every name', () => {
    const tried = new Set<string>();
    for (const name of ELEMENT_NAMES) {
      for (let n = 0; n <= name.length; n++) tried.add(name.slice(0, n));
      tried.add(name + '0').add(name.toUpperCase()).add(' ' + name).add(name + ' ');
      for (let k = 0; k < name.length; k++) tried.add(name.slice(0, k) + 'q' + name.slice(k + 1));
    }
    for (const t of ['', 'date_time', 'spd1000', 'dir1', 'spd', 'xxxxxxxxxxxxxxxxxxxx']) tried.add(t);
    for (const t of tried) {
      const text = `,${t};`;
      assert.equal(elementIndexAt(text, 1, 1 + t.length), elementIndex(t), JSON.stringify(t));
    }
  });
});
