/** The options part of each command's --help, generated from the definitions. */
import { defaultText, envName, settingsOf, type CommandName, type SettingDef } from './definitions.js';

const COLUMN = 25;

/** `(default 128 MB)`, or nothing for a switch that is off and for a setting with neither default nor a word on it. */
function defaultNote(def: SettingDef): string {
  if (def.required) return ' (required)';
  if (def.default === undefined && def.defaultText === undefined) return '';
  if (def.kind.isSwitch && def.default === false) return '';
  const unit = def.defaultText === undefined && def.unit !== undefined ? ` ${def.unit}` : '';
  return ` (default ${defaultText(def)}${unit})`;
}

function optionLine(left: string, right: string): string {
  const pad = left.length <= COLUMN - 2 ? left.padEnd(COLUMN) : `${left}\n${' '.repeat(COLUMN)}`;
  return `${pad}${right}\n`;
}

/** The lines of `Options:` for a command, each setting with its default and unit, then -h. */
export function optionsHelp(command: CommandName): string {
  let out = '';
  for (const def of settingsOf(command)) {
    out += optionLine(`  --${def.name}${def.arg === undefined ? '' : ` ${def.arg}`}`, def.help + defaultNote(def));
  }
  return out + optionLine('  -h, --help', 'show this help');
}

/** How settings are given besides flags: the note under each command's options. */
export function sourcesNote(command: CommandName): string {
  const example = settingsOf(command).find((d) => d.name !== 'config')!;
  return `A setting can also be given as an environment variable (--${example.name}: ${envName(example.name)})
or as a key of a JSON config file ({"${example.name}": ...}), named by --config or
FORECASTD_CONFIG, else ./forecastd.config.json when it exists.
Precedence: flag > environment > file > default.
`;
}
