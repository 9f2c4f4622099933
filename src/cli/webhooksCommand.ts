/** forecastd webhooks add | list | remove | retry (INTERFACE.md section 14). */
import type { SettingsInput } from '../settings/resolve.js';
import { UsageError } from './usage.js';

export async function webhooksCommand(_args: string[], _input: SettingsInput): Promise<number> {
  throw new UsageError('webhooks is not available yet', 'webhooks');
}
