/**
 * Text of a value stored as a scaled integer s with d decimals (value = s / 10^d):
 * the plain decimal with trailing zeros dropped. It parses to the same double
 * as s / 10^d, because that division is correctly rounded from the same exact
 * decimal. Integer-to-text is far cheaper than double-to-text, and for up to
 * three decimals the fraction comes from a table.
 */
const ZEROS = '000000000';

function fractionTable(d: number): string[] {
  const p = 10 ** d;
  return Array.from({ length: p }, (_, f) => {
    if (f === 0) return '';
    const digits = String(f).padStart(d, '0').replace(/0+$/, '');
    return '.' + digits;
  });
}

const FRACTIONS: readonly (readonly string[])[] = [[''], fractionTable(1), fractionTable(2), fractionTable(3)];
const POW10 = [1, 10, 100, 1000];

function generic(s: number, d: number): string {
  const neg = s < 0;
  let digits = '' + (neg ? -s : s);
  if (digits.length <= d) digits = ZEROS.slice(0, d - digits.length + 1) + digits;
  const cut = digits.length - d;
  let end = digits.length;
  while (end > cut && digits.charCodeAt(end - 1) === 48) end--;
  const text = end === cut ? digits.slice(0, cut) : digits.slice(0, cut) + '.' + digits.slice(cut, end);
  return neg ? '-' + text : text;
}

export function scaledText(s: number, d: number): string {
  if (d === 0) return '' + s;
  if (d > 3 || s > 1e12 || s < -1e12) return generic(s, d);
  const p = POW10[d]!;
  if (s >= 0) {
    const whole = Math.floor(s / p);
    return whole + FRACTIONS[d]![s - whole * p]!;
  }
  const a = -s;
  const whole = Math.floor(a / p);
  return '-' + whole + FRACTIONS[d]![a - whole * p]!;
}
