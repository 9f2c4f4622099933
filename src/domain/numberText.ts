/**
 * Text of a stored value that parses back to the same double: the shortest
 * round-trip digits, but always as a plain decimal (never exponent notation,
 * which the CSV format does not allow) and keeping the sign of -0.
 */
export function numberText(v: number): string {
  if (Object.is(v, -0)) return '-0';
  const s = String(v);
  const e = s.indexOf('e');
  if (e < 0) return s;
  const neg = s[0] === '-';
  const mantissa = s.slice(neg ? 1 : 0, e);
  const exp = Number(s.slice(e + 1));
  const dot = mantissa.indexOf('.');
  const digits = dot < 0 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1);
  const pointAt = (dot < 0 ? mantissa.length : dot) + exp;
  let out: string;
  if (pointAt <= 0) out = '0.' + '0'.repeat(-pointAt) + digits;
  else if (pointAt >= digits.length) out = digits + '0'.repeat(pointAt - digits.length);
  else out = digits.slice(0, pointAt) + '.' + digits.slice(pointAt);
  return neg ? '-' + out : out;
}
