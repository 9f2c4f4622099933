/** Hiding secrets in setting values before they are printed. Pure. */

export const MASK = '***';

/**
 * The URL with its password replaced by ***: `postgres://user:***@host/db`,
 * and a `password=` query parameter too. The user information runs to the last
 * `@`, so a password holding an unencoded `@`, `/` or `?` is hidden whole; when
 * in doubt more is hidden, never less. With `userIsSecret` (Redis, whose
 * clients may read `redis://SECRET@host` as a password) a user name without a
 * password is hidden as well.
 */
export function maskUrl(text: string, userIsSecret = false): string {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(text);
  let out = text;
  if (scheme !== null) {
    const start = scheme[0].length;
    const at = text.lastIndexOf('@');
    if (at >= start) {
      const userinfo = text.slice(start, at);
      const colon = userinfo.indexOf(':');
      const masked = colon >= 0 ? `${userinfo.slice(0, colon + 1)}${MASK}` : userIsSecret && userinfo !== '' ? MASK : userinfo;
      out = text.slice(0, start) + masked + text.slice(at);
    }
  }
  return out.replace(/([?&]password=)[^&#]*/gi, `$1${MASK}`);
}
