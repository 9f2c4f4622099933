/**
 * Time values of the interface, as epoch milliseconds. Pure functions: the
 * clock, where needed, is passed in by the caller.
 */

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
/** Beijing time is UTC+8 all year (no daylight saving). */
export const BEIJING_OFFSET_MS = 8 * HOUR_MS;
export const BEIJING_OFFSET = '+08:00';

const pad2 = (n: number): string => (n < 10 ? '0' : '') + n;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeapYear = (y: number): boolean => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

function isRealDate(y: number, mo: number, d: number): boolean {
  if (mo < 1 || mo > 12 || d < 1) return false;
  return d <= (mo === 2 && isLeapYear(y) ? 29 : DAYS_IN_MONTH[mo - 1]!);
}

/**
 * Days from 1970-01-01 to y-mo-d in the proleptic Gregorian calendar (as Date
 * counts), by arithmetic: counted from 1 March of a 400-year era, so that the
 * leap day falls last in each year.
 */
function daysFromCivil(y: number, mo: number, d: number): number {
  const ys = mo <= 2 ? y - 1 : y;
  const era = Math.floor(ys / 400);
  const yoe = ys - era * 400;
  const mp = mo > 2 ? mo - 3 : mo + 9;
  const doy = Math.floor((153 * mp + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

function utcMs(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number): number {
  return daysFromCivil(y, mo, d) * 86_400_000 + h * HOUR_MS + mi * MINUTE_MS + s * 1000 + ms;
}

/** An issue (run) name `yyyyMMddHH` in UTC -> epoch ms, or null when it is not a real date and hour. */
export function parseIssue(text: string): number | null {
  if (!/^\d{10}$/.test(text)) return null;
  const y = Number(text.slice(0, 4));
  const mo = Number(text.slice(4, 6));
  const d = Number(text.slice(6, 8));
  const h = Number(text.slice(8, 10));
  if (!isRealDate(y, mo, d) || h > 23) return null;
  return utcMs(y, mo, d, h, 0, 0, 0);
}

function fields(ms: number): [string, string, string, string, string, string] {
  const t = new Date(ms);
  return [
    String(t.getUTCFullYear()).padStart(4, '0'),
    pad2(t.getUTCMonth() + 1),
    pad2(t.getUTCDate()),
    pad2(t.getUTCHours()),
    pad2(t.getUTCMinutes()),
    pad2(t.getUTCSeconds()),
  ];
}

export function formatIssue(ms: number): string {
  const [y, mo, d, h] = fields(ms);
  return `${y}${mo}${d}${h}`;
}

/** `yyyy-MM-ddTHH:mm:ssZ` */
export function formatUtc(ms: number): string {
  const [y, mo, d, h, mi, s] = fields(ms);
  return `${y}-${mo}-${d}T${h}:${mi}:${s}Z`;
}

/** `yyyy-MM-ddTHH:mm:ss+08:00` */
export function formatBeijing(ms: number): string {
  const [y, mo, d, h, mi, s] = fields(ms + BEIJING_OFFSET_MS);
  return `${y}-${mo}-${d}T${h}:${mi}:${s}${BEIJING_OFFSET}`;
}

// yyyy-MM-dd, then optionally [T or space]HH:mm[:ss[.fff]] and an offset:
// Z, ±HH:mm, ±HHmm, or " HH:mm" / " HHmm" (a '+' decoded to a space).
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(?:(Z)|([+\- ])(\d{2}):?(\d{2}))?)?$/;

/**
 * A `start` / `end` value or a CSV `date_time` -> epoch ms, or null when it is
 * not one of the accepted forms. No offset means Beijing time.
 */
export function parseDateTime(text: string): number | null {
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const [, ys, mos, ds, hs, mis, ss, fs, z, sign, ohs, oms] = m;
  const y = Number(ys);
  const mo = Number(mos);
  const d = Number(ds);
  if (!isRealDate(y, mo, d)) return null;
  const h = hs === undefined ? 0 : Number(hs);
  const mi = mis === undefined ? 0 : Number(mis);
  const s = ss === undefined ? 0 : Number(ss);
  const frac = fs === undefined ? 0 : Number(fs.padEnd(3, '0'));
  if (h > 23 || mi > 59 || s > 59) return null;
  let offsetMs = BEIJING_OFFSET_MS;
  if (z !== undefined) {
    offsetMs = 0;
  } else if (sign !== undefined) {
    const oh = Number(ohs);
    const om = Number(oms);
    if (oh > 23 || om > 59) return null;
    offsetMs = (sign === '-' ? -1 : 1) * (oh * HOUR_MS + om * MINUTE_MS);
  }
  return utcMs(y, mo, d, h, mi, s, frac) - offsetMs;
}
