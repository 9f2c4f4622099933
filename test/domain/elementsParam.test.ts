import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ELEMENT_NAMES } from '../../src/domain/elements.js';
import { ApiError } from '../../src/domain/errors.js';
import { parseElements } from '../../src/domain/elementsParam.js';

const names = (idx: readonly number[]): string[] => idx.map((i) => ELEMENT_NAMES[i]!);

const bad = (values: string[], pattern?: RegExp) =>
  assert.throws(
    () => parseElements(values),
    (e: unknown) =>
      e instanceof ApiError && e.code === 40001 && e.status === 400 && /elements/.test(e.message) && (!pattern || pattern.test(e.message)),
    JSON.stringify(values),
  );

describe('parseElements', () => {
  it('absent selects all fifteen in catalogue order', () => {
    assert.deepEqual(names(parseElements(undefined)), [
      't2m', 'rh2m', 'psfc', 'tcc', 'tp', 'spd10', 'dir10', 'spd30', 'spd50', 'spd70', 'spd100', 'dir100', 'tr', 'dr', 'sr',
    ]);
  });

  it('reads a comma list', () => {
    assert.deepEqual(names(parseElements(['t2m,spd100,tr'])), ['t2m', 'spd100', 'tr']);
    assert.deepEqual(names(parseElements(['psfc'])), ['psfc']);
  });

  it('returns catalogue order whatever the request order', () => {
    assert.deepEqual(names(parseElements(['sr,tr,t2m,dir100'])), ['t2m', 'dir100', 'tr', 'sr']);
    assert.deepEqual(parseElements(['sr,dr,tr']), [12, 13, 14]);
  });

  it('joins repeated values', () => {
    assert.deepEqual(names(parseElements(['tr', 't2m', 'spd100,rh2m'])), ['t2m', 'rh2m', 'spd100', 'tr']);
  });

  it('ignores spaces around names', () => {
    assert.deepEqual(names(parseElements([' t2m , spd100 ', '\ttr'])), ['t2m', 'spd100', 'tr']);
  });

  it('collapses duplicates', () => {
    assert.deepEqual(names(parseElements(['t2m,t2m', 't2m', 'tr,t2m'])), ['t2m', 'tr']);
  });

  it('all fifteen named in reverse come back in catalogue order', () => {
    assert.deepEqual(names(parseElements([[...ELEMENT_NAMES].reverse().join(',')])), [...ELEMENT_NAMES]);
  });

  it('an unknown name is 40001 naming it', () => {
    bad(['t2m,wind'], /"wind"/);
    bad(['T2M'], /"T2M"/);
    bad(['t2m', 'date_time'], /"date_time"/);
    bad(['t2 m'], /"t2 m"/);
  });

  it('an empty value or empty item is 40001', () => {
    bad(['']);
    bad(['  ']);
    bad(['t2m,,tr']);
    bad(['t2m,']);
    bad([',t2m']);
    bad(['t2m', '']);
    bad(['t2m, ,tr']);
  });
});
