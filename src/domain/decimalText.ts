/**
 * Text of a value stored as a scaled integer s with d decimals (value = s / 10^d):
 * the plain decimal with trailing zeros dropped. It parses to the same double
 * as s / 10^d, because that division is correctly rounded from the same exact
 * decimal. Integer-to-text is far cheaper than double-to-text.
 */
const ZEROS = '000000000';

export function scaledText(s: number, d: number): string {
  if (d === 0) return '' + s;
  const neg = s < 0;
  let digits = '' + (neg ? -s : s);
  if (digits.length <= d) digits = ZEROS.slice(0, d - digits.length + 1) + digits;
  const cut = digits.length - d;
  let end = digits.length;
  while (end > cut && digits.charCodeAt(end - 1) === 48) end--;
  const text = end === cut ? digits.slice(0, cut) : digits.slice(0, cut) + '.' + digits.slice(cut, end);
  return neg ? '-' + text : text;
}
