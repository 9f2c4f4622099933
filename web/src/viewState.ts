/**
 * What the console shows, as the page's query string, so that a link reproduces the view:
 * `/?view=site&farm=WF_GS01&issue=2026112500&start=2026-11-25T08:00&end=…&fields=spd100,t2m`.
 * Times here are Beijing time without an offset, as the window fields show them.
 */

import { fromBeijingInput } from './time.js';

export type ViewName = 'sites' | 'runs' | 'site';

export interface ViewState {
  readonly view: ViewName;
  /** The sites list's search text. */
  readonly q?: string;
  readonly farm?: string;
  readonly issue?: string;
  readonly start?: string;
  readonly end?: string;
  /** The chosen fields; absent means every field. */
  readonly fields?: readonly string[];
}

const VIEWS: readonly ViewName[] = ['sites', 'runs', 'site'];
const ISSUE = /^\d{10}$/;
const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/;
const FARM_ID = /^[A-Za-z0-9_.-]{1,64}$/;

/** Reads a query string; whatever is malformed is dropped rather than trusted. */
export function parseViewState(search: string): ViewState {
  const p = new URLSearchParams(search);
  const farm = p.get('farm') ?? undefined;
  const viewText = p.get('view') ?? '';
  const view: ViewName = (VIEWS as readonly string[]).includes(viewText) ? (viewText as ViewName) : farm !== undefined ? 'site' : 'sites';
  const pick = (name: string, re: RegExp): string | undefined => {
    const v = p.get(name);
    return v !== null && re.test(v) ? v : undefined;
  };
  // A real Beijing date and time (not 02-30 or 24:00), or nothing.
  const time = (name: string): string | undefined => {
    const v = pick(name, LOCAL_TIME);
    return v !== undefined && !Number.isNaN(fromBeijingInput(v)) ? v : undefined;
  };
  const fieldsText = p.get('fields');
  const fields = fieldsText === null ? undefined : fieldsText.split(',').filter((f) => /^[a-z0-9_]{1,32}$/.test(f));
  const q = p.get('q') ?? undefined;
  return {
    view: view === 'site' && (farm === undefined || !FARM_ID.test(farm)) ? 'sites' : view,
    ...(q ? { q } : {}),
    ...(farm !== undefined && FARM_ID.test(farm) ? { farm } : {}),
    ...opt('issue', pick('issue', ISSUE)),
    ...opt('start', time('start')),
    ...opt('end', time('end')),
    ...(fields !== undefined && fields.length > 0 ? { fields } : {}),
  };
}

const opt = <K extends string>(key: K, v: string | undefined): { [k in K]?: string } => (v === undefined ? {} : ({ [key]: v } as { [k in K]: string }));

/** The query string of a state, `?…`, in a stable order; what is default is left out. */
export function formatViewState(s: ViewState): string {
  const p = new URLSearchParams();
  p.set('view', s.view);
  if (s.q) p.set('q', s.q);
  if (s.view === 'site' && s.farm !== undefined) {
    p.set('farm', s.farm);
    if (s.issue !== undefined) p.set('issue', s.issue);
    if (s.start !== undefined) p.set('start', s.start);
    if (s.end !== undefined) p.set('end', s.end);
    if (s.fields !== undefined) p.set('fields', s.fields.join(','));
  }
  return '?' + p.toString().replace(/%2C/g, ',').replace(/%3A/g, ':');
}
