/** Wind and solar told apart: by colour and by shape, so colour-blind readers lose nothing (Okabe–Ito colours). */
import type { Farm } from '../api.js';

export type SiteKind = 'wind' | 'solar' | 'other';

export const KIND_COLOR: Record<SiteKind, string> = { wind: '#0072B2', solar: '#E69F00', other: '#6b7280' };
export const KIND_LABEL: Record<SiteKind, string> = { wind: 'Wind', solar: 'Solar', other: 'Other' };

export function kindOf(f: Farm): SiteKind {
  const k = typeof f.kind === 'string' ? f.kind.toLowerCase() : '';
  return k === 'wind' ? 'wind' : k === 'solar' || k === 'pv' ? 'solar' : 'other';
}
