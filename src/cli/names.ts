/** The names an operator gives to what the CLI keeps by name (API keys, webhook endpoints): one rule for both. */
import { UsageError } from './usage.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/;

/** Refuses a name outside the rule, naming what it names (`key`, `webhook`) and the command to show help for. */
export function checkName(name: string | undefined, what: 'key' | 'webhook', command: string): void {
  if (name !== undefined && !NAME.test(name)) {
    throw new UsageError(`${what} name "${name.slice(0, 80)}" must be 1-64 of A-Z a-z 0-9 _ . @ - and start with a letter or digit`, command);
  }
}
