/** The API key the person entered, kept for the browser session only (never in the URL, never in localStorage). */

const NAME = 'forecastd.apiKey';

export function storedKey(): string | undefined {
  try {
    return sessionStorage.getItem(NAME) ?? undefined;
  } catch {
    return undefined;
  }
}

export function storeKey(key: string | undefined): void {
  try {
    if (key === undefined) sessionStorage.removeItem(NAME);
    else sessionStorage.setItem(NAME, key);
  } catch {
    // Storage disabled: the key lives as long as the page.
  }
}

/** What may be shown of a key: its public prefix, as `keys list` shows it. */
export function keyPrefix(key: string): string {
  return key.slice(0, 8) + '…';
}
