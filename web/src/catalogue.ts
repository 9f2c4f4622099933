/**
 * The data fields as the console shows them. The catalogue itself comes from the API (GET /api/v1/elements);
 * this module only decides how a unit is displayed: temperature in °C, accumulated radiation as the mean
 * flux over the 15 minutes (W m-2), pressure in hPa. Everything else is shown as delivered.
 */

export interface ElementDef {
  readonly name: string;
  readonly description: string;
  readonly unit: string;
  readonly kind: 'instant' | 'accumulated';
}

export interface Display {
  /** The unit the value is shown in. */
  readonly unit: string;
  /** From the delivered value to the shown one. */
  readonly convert: (v: number) => number;
  /** Says how the shown value relates to the delivered one, when it differs. */
  readonly note: string;
}

const SECONDS_PER_STEP = 900;

export function displayOf(def: ElementDef): Display {
  if (def.unit === 'K') return { unit: '°C', convert: (v) => v - 273.15, note: 'delivered in K; shown in °C (K − 273.15)' };
  if (def.unit === 'Pa') return { unit: 'hPa', convert: (v) => v / 100, note: 'delivered in Pa; shown in hPa' };
  if (def.kind === 'accumulated' && def.unit === 'J m-2') {
    return {
      unit: 'W m-2 (mean)',
      convert: (v) => v / SECONDS_PER_STEP,
      note: 'delivered as J m-2 over the 15 minutes ending at the time; shown as the mean W m-2 (÷ 900)',
    };
  }
  // Precipitation: kg m-2 is a millimetre of water, the unit everyone reads it in.
  if (def.kind === 'accumulated') return { unit: `${def.unit.startsWith('kg m-2') ? 'mm' : def.unit} per 15 min`, convert: (v) => v, note: 'amount over the 15 minutes ending at the time' };
  return { unit: def.unit === 'degree' ? '°' : def.unit, convert: (v) => v, note: '' };
}
