/**
 * Times as the console shows them: Beijing time (UTC+8, no daylight saving) whatever the browser's own
 * zone, computed from the instant rather than through the browser's clock settings.
 */

export const BEIJING_OFFSET_MS = 8 * 3600_000;
export const STEP_MS = 15 * 60_000;

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

interface Parts {
  y: number;
  mo: number;
  d: number;
  h: number;
  mi: number;
}

function partsAt(ms: number, offsetMs: number): Parts {
  const t = new Date(ms + offsetMs);
  return { y: t.getUTCFullYear(), mo: t.getUTCMonth() + 1, d: t.getUTCDate(), h: t.getUTCHours(), mi: t.getUTCMinutes() };
}

/** `2026-11-25 08:00` in Beijing time. */
export function beijingText(ms: number): string {
  const p = partsAt(ms, BEIJING_OFFSET_MS);
  return `${p.y}-${pad(p.mo)}-${pad(p.d)} ${pad(p.h)}:${pad(p.mi)}`;
}

/** `2026-11-25 00:00 UTC`. */
export function utcText(ms: number): string {
  const p = partsAt(ms, 0);
  return `${p.y}-${pad(p.mo)}-${pad(p.d)} ${pad(p.h)}:${pad(p.mi)} UTC`;
}

/** The instant a run starts, from its name `yyyyMMddHH` (UTC). */
export function issueStartMs(issue: string): number {
  return Date.UTC(Number(issue.slice(0, 4)), Number(issue.slice(4, 6)) - 1, Number(issue.slice(6, 8)), Number(issue.slice(8, 10)));
}

/** An API time (`2026-11-25T08:00:00+08:00` or `…Z`) as an instant; NaN when it is not one. */
export function apiTimeMs(text: string): number {
  // Only ISO texts with an explicit offset: Date.parse alone also reads free-form texts, and a time without an
  // offset as the browser's local time.
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/.test(text) ? Date.parse(text) : NaN;
}

/** The value of a `datetime-local` field showing this instant in Beijing time: `2026-11-25T08:00`. */
export function beijingInputValue(ms: number): string {
  return beijingText(ms).replace(' ', 'T');
}

/** A `datetime-local` value read as Beijing time; NaN when it is not one. */
export function fromBeijingInput(value: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?$/.exec(value);
  if (m === null) return NaN;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5])) - BEIJING_OFFSET_MS;
  // Date.UTC rolls over (02-30 -> 03-02, 24:00 -> next day): only a real date and time reads back the same.
  return beijingInputValue(ms) === value.slice(0, 16) ? ms : NaN;
}

/** A query parameter value for the API's start and end: Beijing time with its offset, `2026-11-25T08:00+08:00`. */
export function apiParamText(ms: number): string {
  return beijingInputValue(ms) + '+08:00';
}

/** Hours between the run's start and a valid time, as the `+36h` a forecaster reads. */
export function leadText(issueMs: number, ms: number): string {
  const minutes = Math.round((ms - issueMs) / 60_000);
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return m === 0 ? `+${h}h` : `+${h}h${pad(m)}`;
}
