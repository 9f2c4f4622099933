/**
 * Durations as settings take them: a decimal number and a unit, with nothing
 * between them: `250ms`, `90s`, `1.5m`, `3h`, `2d`. Pure.
 */

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
type Unit = keyof typeof UNIT_MS;

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;

/**
 * Milliseconds of a duration text, or undefined when the text is not one: no
 * unit (`10`; but `0` alone is zero), a space (`5 s`), a sign (`-1s`), another unit (`1w`), empty, or
 * an amount that is not a whole number of milliseconds (`1.5ms`) or too large.
 */
export function parseDuration(text: string): number | undefined {
  // Zero needs no unit (`keys roll --grace 0`: at once).
  if (text === '0') return 0;
  const m = DURATION.exec(text);
  if (m === null) return undefined;
  const [, amount, unit] = m as unknown as [string, string, Unit];
  const ms = Number(amount) * UNIT_MS[unit];
  // Decimal fractions are inexact in binary: 1.1s is 1100.0000000000002 ms.
  const whole = Math.round(ms);
  if (Math.abs(ms - whole) > ms * 1e-12 || !Number.isSafeInteger(whole)) return undefined;
  return whole;
}

/** The shortest text parseDuration reads back as ms: the largest unit that divides it. */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (ms !== 0 && ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  }
  return ms === 0 ? '0s' : `${ms}ms`;
}
