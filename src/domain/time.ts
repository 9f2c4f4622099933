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

/** The n ASCII digits of text from `at` as a number, or -1 if any is not a digit. (Every request reads dates: no substrings.) */
function digitsAt(text: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/** An issue (run) name `yyyyMMddHH` in UTC -> epoch ms, or null when it is not a real date and hour. */
export function parseIssue(text: string): number | null {
  if (text.length !== 10) return null;
  const y = digitsAt(text, 0, 4);
  const mo = digitsAt(text, 4, 2);
  const d = digitsAt(text, 6, 2);
  const h = digitsAt(text, 8, 2);
  if (y < 0 || mo < 0 || d < 0 || h < 0) return null;
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
  const full = parseFullForm(text);
  return full !== undefined ? full : parseDateTimeGeneral(text);
}

/**
 * The full form `yyyy-MM-ddTHH:mm:ss±HH:mm` (what clients mostly send, and what
 * this service writes) read digit by digit, with the same checks as the
 * pattern; undefined for any other text, which the pattern reads.
 */
function parseFullForm(text: string): number | null | undefined {
  if (text.length !== 25) return undefined;
  const sep = text.charCodeAt(10);
  const sign = text.charCodeAt(19);
  if (
    text.charCodeAt(4) !== 45 ||
    text.charCodeAt(7) !== 45 ||
    (sep !== 84 && sep !== 32) ||
    text.charCodeAt(13) !== 58 ||
    text.charCodeAt(16) !== 58 ||
    (sign !== 43 && sign !== 45 && sign !== 32) ||
    text.charCodeAt(22) !== 58
  ) {
    return undefined;
  }
  const y = digitsAt(text, 0, 4);
  const mo = digitsAt(text, 5, 2);
  const d = digitsAt(text, 8, 2);
  const h = digitsAt(text, 11, 2);
  const mi = digitsAt(text, 14, 2);
  const s = digitsAt(text, 17, 2);
  const oh = digitsAt(text, 20, 2);
  const om = digitsAt(text, 23, 2);
  if (y < 0 || mo < 0 || d < 0 || h < 0 || mi < 0 || s < 0 || oh < 0 || om < 0) return undefined;
  return checkedMs(y, mo, d, h, mi, s, 0, sign === 45 ? -1 : 1, oh, om);
}

/** Epoch ms of a local date-time at offset sign × oh:om, or null when a field is out of range. Both readers end here. */
function checkedMs(
  y: number,
  mo: number,
  d: number,
  h: number,
  mi: number,
  s: number,
  ms: number,
  sign: number,
  oh: number,
  om: number,
): number | null {
  if (!isRealDate(y, mo, d) || h > 23 || mi > 59 || s > 59 || oh > 23 || om > 59) return null;
  return utcMs(y, mo, d, h, mi, s, ms) - sign * (oh * HOUR_MS + om * MINUTE_MS);
}

/**
 * parseDateTime for every accepted form, by the pattern. (parseDateTime reads
 * the full form itself first; exported so that tests hold both to the same
 * answers.)
 */
export function parseDateTimeGeneral(text: string): number | null {
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const [, ys, mos, ds, hs, mis, ss, fs, z, sign, ohs, oms] = m;
  const num = (t: string | undefined): number => (t === undefined ? 0 : Number(t));
  const frac = fs === undefined ? 0 : Number(fs.padEnd(3, '0'));
  // No offset means Beijing time; Z is +00:00.
  const [oh, om] = z !== undefined ? [0, 0] : sign !== undefined ? [Number(ohs), Number(oms)] : [BEIJING_OFFSET_MS / HOUR_MS, 0];
  return checkedMs(Number(ys), Number(mos), Number(ds), num(hs), num(mis), num(ss), frac, sign === '-' ? -1 : 1, oh, om);
}
