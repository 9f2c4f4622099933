/**
 * forecastd config: prints the settings serve would run with, and where each
 * comes from. Takes every serve option, so that a command line can be checked
 * before it is used; secrets are printed as ***.
 */
import { SETTINGS } from '../settings/definitions.js';
import { displayValue, resolveSettings, type SettingsInput } from '../settings/resolve.js';
import { serveOptions } from '../settings/serveOptions.js';

/** A value on a line of text: as a flag would take it; (unset) for null, (none) for an empty list. */
function asText(value: unknown): string {
  if (value === null) return '(unset)';
  if (Array.isArray(value)) return value.length === 0 ? '(none)' : value.join(',');
  return String(value);
}

export async function configCommand(args: string[], input: SettingsInput): Promise<number> {
  const resolved = resolveSettings('config', args, input);
  // The checks serve makes across settings, so that what is printed is what serve would accept.
  serveOptions(resolved);
  const rows: { name: string; value: unknown; source: string }[] = [];
  for (const [name, s] of resolved.settings) {
    if (!SETTINGS[name as keyof typeof SETTINGS].commands.includes('serve')) continue;
    rows.push({ name, value: displayValue(SETTINGS[name as keyof typeof SETTINGS], s.value), source: s.source });
  }
  if (resolved.value('json')) {
    // One setting a line: {"name": {"value": ..., "source": "..."}, ...}
    const lines = rows.map((r) => `  ${JSON.stringify(r.name)}: ${JSON.stringify({ value: r.value, source: r.source })}`);
    process.stdout.write(`{\n${lines.join(',\n')}\n}\n`);
    return 0;
  }
  const texts = rows.map((r) => ({ ...r, text: asText(r.value) }));
  const nameWidth = Math.max(...texts.map((r) => r.name.length));
  const valueWidth = Math.max(...texts.map((r) => r.text.length));
  for (const r of texts) process.stdout.write(`${r.name.padEnd(nameWidth)}  ${r.text.padEnd(valueWidth)}  ${r.source}\n`);
  return 0;
}
