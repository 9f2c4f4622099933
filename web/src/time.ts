/**
 * Times as the console shows them: Beijing time (UTC+8, no daylight saving) whatever the browser's own
 * zone, computed from the instant rather than through the browser's clock settings. What a run's name, an
 * API time and the offset are is the server's own pure core (src/domain), bundled in, not a second copy.
 */
import { STEP_MS } from '../../src/domain/run.js';
import { BEIJING_OFFSET, BEIJING_OFFSET_MS, parseDateTime, parseIssue } from '../../src/domain/time.js';

export { BEIJING_OFFSET_MS, STEP_MS };

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

/** The instant a run starts, from its name `yyyyMMddHH` (UTC); NaN when it is not a real date and hour. */
export function issueStartMs(issue: string): number {
  return parseIssue(issue) ?? NaN;
}

/**
 * An API time (`2026-11-25T08:00:00+08:00` or `…Z`) as an instant, read as the API reads its own parameters
 * (a time without an offset is Beijing time, never the browser's); NaN when it is not one.
 */
export function apiTimeMs(text: string): number {
  return parseDateTime(text) ?? NaN;
}

/** The value of a `datetime-local` field showing this instant in Beijing time: `2026-11-25T08:00`. */
export function beijingInputValue(ms: number): string {
  return beijingText(ms).replace(' ', 'T');
}

/** The shape of a `datetime-local` value: a date and a time, no offset. */
const LOCAL_INPUT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/;

/** A `datetime-local` value read as Beijing time (as the API reads a time without offset); NaN when it is not one. */
export function fromBeijingInput(value: string): number {
  return LOCAL_INPUT.test(value) ? (parseDateTime(value) ?? NaN) : NaN;
}

/** A query parameter value for the API's start and end: Beijing time with its offset, `2026-11-25T08:00+08:00`. */
export function apiParamText(ms: number): string {
  return beijingInputValue(ms) + BEIJING_OFFSET;
}

/** Hours between the run's start and a valid time, as the `+36h` a forecaster reads. */
export function leadText(issueMs: number, ms: number): string {
  const minutes = Math.round((ms - issueMs) / 60_000);
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return m === 0 ? `+${h}h` : `+${h}h${pad(m)}`;
}
