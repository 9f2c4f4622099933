/**
 * The `date_time` texts of a run's grid, rendered once per issue time and shared
 * by every site of that run (formatting a date costs far more than indexing).
 */
import { MAX_STEP, STEP_MS } from './run.js';
import { asciiBytes } from './byteSink.js';
import { formatBeijing } from './time.js';

const KEEP = 64;
const tables = new Map<number, readonly string[]>();

/** texts[k] = Beijing date_time of issue + k * 15 min, k = 0 ... 1440. */
export function gridTexts(issueMs: number): readonly string[] {
  let t = tables.get(issueMs);
  if (t === undefined) {
    t = Array.from({ length: MAX_STEP + 1 }, (_, k) => formatBeijing(issueMs + k * STEP_MS));
    if (tables.size >= KEEP) tables.delete(tables.keys().next().value as number);
    tables.set(issueMs, t);
  }
  return t;
}

/** Width of one Beijing date_time text, `yyyy-MM-ddTHH:mm:ss+08:00`. */
export const DATE_TEXT_BYTES = 25;
const byteTables = new Map<number, Uint8Array>();

/** The grid's date_time texts as ASCII, DATE_TEXT_BYTES per step k, one block per issue. */
export function gridDateBytes(issueMs: number): Uint8Array {
  let t = byteTables.get(issueMs);
  if (t === undefined) {
    t = asciiBytes(gridTexts(issueMs).join(''));
    if (t.length !== (MAX_STEP + 1) * DATE_TEXT_BYTES) throw new Error('date_time texts must be fixed-width');
    if (byteTables.size >= KEEP) byteTables.delete(byteTables.keys().next().value as number);
    byteTables.set(issueMs, t);
  }
  return t;
}
