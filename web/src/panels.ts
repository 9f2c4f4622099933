/**
 * The meteogram's panels: which fields are drawn together, and how. A field the catalogue has and no panel
 * names (a later catalogue) gets a panel of its own, so nothing delivered is left out.
 */

export type PanelStyle = 'lines' | 'points' | 'bars';

export interface PanelDef {
  readonly id: string;
  readonly title: string;
  readonly fields: readonly string[];
  readonly style: PanelStyle;
}

export const PANELS: readonly PanelDef[] = [
  { id: 'wind', title: 'Wind speed by height', fields: ['spd10', 'spd30', 'spd50', 'spd70', 'spd100'], style: 'lines' },
  { id: 'direction', title: 'Wind direction (from which it blows)', fields: ['dir10', 'dir100'], style: 'points' },
  { id: 'temperature', title: 'Temperature at 2 m', fields: ['t2m'], style: 'lines' },
  { id: 'radiation', title: 'Radiation', fields: ['tr', 'dr', 'sr'], style: 'lines' },
  { id: 'humidity', title: 'Humidity and cloud cover', fields: ['rh2m', 'tcc'], style: 'lines' },
  { id: 'precipitation', title: 'Precipitation', fields: ['tp'], style: 'bars' },
  { id: 'pressure', title: 'Surface pressure', fields: ['psfc'], style: 'lines' },
];

/** The field whose change from the previous run gets a panel of its own: what traders watch first. */
export const CHANGE_FIELD = 'spd100';

/** The panels that hold any of `fields`, each with only those, plus one per field no panel names. */
export function panelsFor(fields: readonly string[]): PanelDef[] {
  const chosen = new Set(fields);
  const out: PanelDef[] = [];
  const placed = new Set<string>();
  for (const p of PANELS) {
    const own = p.fields.filter((f) => chosen.has(f));
    for (const f of own) placed.add(f);
    if (own.length > 0) out.push({ ...p, fields: own });
  }
  for (const f of fields) {
    if (placed.has(f)) continue;
    placed.add(f);
    out.push({ id: f, title: f, fields: [f], style: 'lines' });
  }
  return out;
}
