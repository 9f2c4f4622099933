/** The `elements` query parameter: names separated by commas, possibly repeated. */
import { ELEMENT_COUNT, elementIndex } from './elements.js';
import { badParameter } from './errors.js';

export const ALL_ELEMENTS: readonly number[] = Object.freeze(Array.from({ length: ELEMENT_COUNT }, (_, i) => i));

/**
 * Catalogue indexes selected by the `elements` values (each value one
 * comma-separated list), in catalogue order without duplicates. Absent means all.
 */
export function parseElements(values: readonly string[] | undefined): readonly number[] {
  if (values === undefined) return ALL_ELEMENTS;
  const chosen = new Set<number>();
  for (const value of values) {
    for (const raw of value.split(',')) {
      const name = raw.trim();
      if (name === '') {
        throw badParameter('Query parameter elements holds an empty field name.');
      }
      const i = elementIndex(name);
      if (i < 0) {
        throw badParameter(`Query parameter elements names an unknown field "${name}"; see /api/v1/elements.`);
      }
      chosen.add(i);
    }
  }
  return [...chosen].sort((a, b) => a - b);
}
