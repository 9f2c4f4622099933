/**
 * The element catalogue: the fifteen data fields of a forecast, in canonical
 * order. This list is the single definition read by the CSV reader and writer,
 * the HTTP schemas, the OpenAPI document and the demo generator.
 */

export type ElementKind = 'instant' | 'accumulated';

export interface ElementDef {
  readonly name: string;
  readonly description: string;
  readonly unit: string;
  readonly kind: ElementKind;
}

export const ELEMENTS: readonly ElementDef[] = Object.freeze([
  { name: 't2m', description: 'air temperature at 2 m', unit: 'K', kind: 'instant' },
  { name: 'rh2m', description: 'relative humidity at 2 m', unit: '%', kind: 'instant' },
  { name: 'psfc', description: 'surface air pressure', unit: 'Pa', kind: 'instant' },
  { name: 'tcc', description: 'total cloud cover', unit: '%', kind: 'instant' },
  { name: 'tp', description: 'total precipitation', unit: 'kg m-2 (= mm)', kind: 'accumulated' },
  { name: 'spd10', description: 'wind speed at 10 m', unit: 'm s-1', kind: 'instant' },
  {
    name: 'dir10',
    description: 'wind direction at 10 m, from which it blows, clockwise from north',
    unit: 'degree',
    kind: 'instant',
  },
  { name: 'spd30', description: 'wind speed at 30 m', unit: 'm s-1', kind: 'instant' },
  { name: 'spd50', description: 'wind speed at 50 m', unit: 'm s-1', kind: 'instant' },
  { name: 'spd70', description: 'wind speed at 70 m', unit: 'm s-1', kind: 'instant' },
  { name: 'spd100', description: 'wind speed at 100 m', unit: 'm s-1', kind: 'instant' },
  { name: 'dir100', description: 'wind direction at 100 m', unit: 'degree', kind: 'instant' },
  { name: 'tr', description: 'total (global horizontal) radiation', unit: 'J m-2', kind: 'accumulated' },
  { name: 'dr', description: 'direct radiation on the horizontal plane', unit: 'J m-2', kind: 'accumulated' },
  { name: 'sr', description: 'scattered (diffuse horizontal) radiation', unit: 'J m-2', kind: 'accumulated' },
] as const satisfies readonly ElementDef[]);

export const ELEMENT_COUNT = ELEMENTS.length;

export const ELEMENT_NAMES: readonly string[] = Object.freeze(ELEMENTS.map((e) => e.name));

/** Catalogue position of a field name, or -1 when the name is not a data field. */
export function elementIndex(name: string): number {
  return elementIndexAt(name, 0, name.length);
}

/** The catalogue's positions by name length, for elementIndexAt. */
const BY_LENGTH: readonly (readonly number[])[] = (() => {
  const out: number[][] = [];
  for (let i = 0; i < ELEMENT_COUNT; i++) (out[ELEMENT_NAMES[i]!.length] ??= []).push(i);
  for (let n = 0; n < out.length; n++) out[n] ??= [];
  return out;
})();

/**
 * elementIndex of text[start, end), read in place: a query names several fields in one value, and cutting
 * each name out of it made a string to hash per name.
 */
export function elementIndexAt(text: string, start: number, end: number): number {
  const length = end - start;
  if (length >= BY_LENGTH.length) return -1;
  const candidates = BY_LENGTH[length]!;
  for (let c = 0; c < candidates.length; c++) {
    const name = ELEMENT_NAMES[candidates[c]!]!;
    let k = 0;
    while (k < length && name.charCodeAt(k) === text.charCodeAt(start + k)) k++;
    if (k === length) return candidates[c]!;
  }
  return -1;
}
