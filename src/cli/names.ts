/**
 * The names an operator gives to what the CLI keeps by name (API keys, webhook endpoints), and the sites
 * their scopes name: one rule for both.
 */
import type { Store } from '../store/store.js';
import { UsageError } from './usage.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/;

/** Refuses a name outside the rule, naming what it names (`key`, `webhook`) and the command to show help for. */
export function checkName(name: string | undefined, what: 'key' | 'webhook', command: string): void {
  if (name !== undefined && !NAME.test(name)) {
    throw new UsageError(`${what} name "${name.slice(0, 80)}" must be 1-64 of A-Z a-z 0-9 _ . @ - and start with a letter or digit`, command);
  }
}

/**
 * Why a scope naming these sites is refused, or undefined when every one is registered: a site that is not
 * is a typing mistake far more often than a site still to come, and the key or webhook would see less than
 * its owner believes.
 */
export async function unregisteredSites(store: Store, farms: readonly string[] | null | undefined): Promise<string | undefined> {
  const unknown: string[] = [];
  for (const id of farms ?? []) if ((await store.getFarm(id)) === undefined) unknown.push(id);
  if (unknown.length === 0) return undefined;
  const one = unknown.length === 1;
  return `${one ? 'site' : 'sites'} ${unknown.map((id) => `"${id}"`).join(', ')} not registered; import ${one ? 'it' : 'them'} with "forecastd farms import" first`;
}
