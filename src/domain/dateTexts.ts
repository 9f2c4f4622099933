/**
 * The `date_time` texts of a run's grid, rendered once per issue time and shared
 * by every site of that run (formatting a date costs far more than indexing).
 */
import { keepRecent } from '../cache/keepRecent.js';
import { MAX_STEP, STEP_MS } from './run.js';
import { formatBeijing } from './time.js';

/** texts[k] = Beijing date_time of issue + k * 15 min, k = 0 ... 1440. */
export const gridTexts = keepRecent(64, (issueMs: number): readonly string[] =>
  Array.from({ length: MAX_STEP + 1 }, (_, k) => formatBeijing(issueMs + k * STEP_MS)),
);

/** Width of one Beijing date_time text, `yyyy-MM-ddTHH:mm:ss+08:00`. */
export const DATE_TEXT_BYTES = 25;

/** The same texts as bytes, DATE_TEXT_BYTES per step k, for readers that compare bytes (as words) rather than strings. */
export const gridBytes = keepRecent(64, (issueMs: number): DataView => {
  const out = new Uint8Array((MAX_STEP + 1) * DATE_TEXT_BYTES);
  gridTexts(issueMs).forEach((date, k) => {
    if (date.length !== DATE_TEXT_BYTES) throw new Error('date_time texts must be fixed-width');
    for (let i = 0; i < DATE_TEXT_BYTES; i++) out[k * DATE_TEXT_BYTES + i] = date.charCodeAt(i);
  });
  return new DataView(out.buffer);
});
