/** The `elements` query parameter: names separated by commas, possibly repeated. */
import { ELEMENT_COUNT, elementIndex, elementIndexAt } from './elements.js';
import { badParameter } from './errors.js';

export const ALL_ELEMENTS: readonly number[] = Object.freeze(Array.from({ length: ELEMENT_COUNT }, (_, i) => i));

/** A character that trim() keeps at the end of a name: printable ASCII. */
const isPlain = (c: number): boolean => c > 32 && c < 127;

/** The selection for each set of fields asked (a 15-bit mask): one shared, frozen array per set. */
const bySet = new Map<number, readonly number[]>();

/**
 * Catalogue indexes selected by the `elements` values (each value one
 * comma-separated list), in catalogue order without duplicates. Absent means all.
 */
export function parseElements(values: readonly string[] | undefined): readonly number[] {
  if (values === undefined) return ALL_ELEMENTS;
  let mask = 0;
  for (let v = 0; v < values.length; v++) {
    const value = values[v]!;
    for (let at = 0; at <= value.length; ) {
      let comma = value.indexOf(',', at);
      if (comma < 0) comma = value.length;
      // A name with no space or control character at either end is read in place; any other is trimmed first.
      const plain = comma > at && isPlain(value.charCodeAt(at)) && isPlain(value.charCodeAt(comma - 1));
      let i = plain ? elementIndexAt(value, at, comma) : -1;
      if (i < 0) {
        const name = value.slice(at, comma).trim();
        if (name === '') {
          throw badParameter('Query parameter elements holds an empty field name.');
        }
        i = elementIndex(name);
        if (i < 0) {
          throw badParameter(`Query parameter elements names an unknown field "${name}"; see /api/v1/elements.`);
        }
      }
      at = comma + 1;
      mask |= 1 << i;
    }
  }
  let chosen = bySet.get(mask);
  if (chosen === undefined) {
    const list: number[] = [];
    for (let i = 0; i < ELEMENT_COUNT; i++) if (mask & (1 << i)) list.push(i);
    chosen = Object.freeze(list);
    bySet.set(mask, chosen);
  }
  return chosen;
}
