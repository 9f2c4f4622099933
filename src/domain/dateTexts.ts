/**
 * The `date_time` texts of a run's grid, made once per issue time and shared
 * by every site of that run (formatting a date costs far more than indexing).
 */
import { keepRecent } from '../cache/keepRecent.js';
import { MAX_STEP, STEP_MS } from './run.js';
import { BEIJING_OFFSET_MS, formatBeijing } from './time.js';

/** Width of one Beijing date_time text, `yyyy-MM-ddTHH:mm:ss+08:00`. */
export const DATE_TEXT_BYTES = 25;
/** Bytes of a text's date, `yyyy-MM-ddT`; the rest is its time of day and the offset. */
const DATE_PART_BYTES = 11;
const DAY_MS = 86_400_000;

function asciiText(text: string): Uint8Array {
  if (text.length !== DATE_TEXT_BYTES) throw new Error('date_time texts must be fixed-width');
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

/**
 * The Beijing date_time of issue + k * 15 min, k = 0 ... 1440, as bytes, DATE_TEXT_BYTES per step k, for
 * readers that compare bytes (as words) rather than strings. Pieced together from the grid's days (16) and
 * times of day (96 at most), each formatted once: formatting all 1,441 texts was a sixth of the first answer
 * after a start, and a new run's first answer pays it again (docs/performance.md).
 */
export const gridBytes = keepRecent(64, (issueMs: number): DataView => {
  const out = new Uint8Array((MAX_STEP + 1) * DATE_TEXT_BYTES);
  const dates = new Map<number, Uint8Array>();
  const times = new Map<number, Uint8Array>();
  for (let k = 0; k <= MAX_STEP; k++) {
    const ms = issueMs + k * STEP_MS;
    // Beijing keeps one offset all year: its days are UTC days shifted by it.
    const local = ms + BEIJING_OFFSET_MS;
    const day = Math.floor(local / DAY_MS);
    const timeOfDay = local - day * DAY_MS;
    let date = dates.get(day);
    if (date === undefined) dates.set(day, (date = asciiText(formatBeijing(ms)).subarray(0, DATE_PART_BYTES)));
    let time = times.get(timeOfDay);
    if (time === undefined) times.set(timeOfDay, (time = asciiText(formatBeijing(ms)).subarray(DATE_PART_BYTES)));
    out.set(date, k * DATE_TEXT_BYTES);
    out.set(time, k * DATE_TEXT_BYTES + DATE_PART_BYTES);
  }
  return new DataView(out.buffer);
});
