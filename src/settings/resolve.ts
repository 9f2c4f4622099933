/**
 * Resolves the settings of one command from its four sources: a flag
 * (`--name value`, `--name=value`, a switch alone), an environment variable
 * (FORECASTD_NAME), a JSON config file (named by --config / FORECASTD_CONFIG,
 * else ./forecastd.config.json when it exists) and the default. Precedence:
 * flag > env > file > default. Every value given is checked, also one that a
 * source of higher precedence overrides, so that a mistake never waits for
 * the day the override is removed.
 *
 * Decisions:
 * - A key of the file that is a setting of another command only is ignored
 *   (not even checked), so that one file can serve `serve`, `ingest` and the
 *   others; a key that names no setting at all, or one that cannot come from a
 *   file (`config`, `json`), is refused.
 * - The environment is shared by every command: a variable of a setting the
 *   command does not take is ignored, and so is a FORECASTD_* variable that
 *   names no setting (other tools, and the test suite, set some).
 * - Positionals (`ingest PATH...`, `farms import FILE`) are kept in order for
 *   the commands that take them; `--` ends the options.
 */
import {
  DEFAULT_CONFIG_FILE,
  SETTINGS,
  defaultOf,
  envName,
  notASetting,
  originsOf,
  settingsOf,
  takes,
  type CommandName,
  type Origin,
  type SettingDef,
  type SettingName,
  type ValueOf,
} from './definitions.js';
import { SettingError, UsageError } from './errors.js';
import { MASK, maskUrl } from './secrets.js';

export type Source = 'default' | Origin;

export interface ResolvedSetting {
  /** undefined: unset (a setting without a default that no source sets). */
  readonly value: unknown;
  readonly source: Source;
  /** Where it came from, as errors name it: `flag --port`, `env FORECASTD_PORT`, `file ./x.json`, `default`. */
  readonly from: string;
}

/** What resolving needs from the process: its environment and a way to read the config file. */
export interface SettingsInput {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** A file's text; undefined when there is no such file; throws on any other fault. */
  readonly readFile: (path: string) => string | undefined;
}

export class Resolved {
  constructor(
    readonly command: CommandName,
    /** Every setting of the command, in table order. */
    readonly settings: ReadonlyMap<string, ResolvedSetting>,
    readonly positionals: readonly string[],
  ) {}

  private get(name: string): ResolvedSetting {
    const s = this.settings.get(name);
    if (s === undefined) throw new Error(`${this.command} does not take the setting ${name}`);
    return s;
  }

  value<N extends SettingName>(name: N): ValueOf<N> {
    return this.get(name).value as ValueOf<N>;
  }

  source(name: SettingName): Source {
    return this.get(name).source;
  }

  /** An error about the setting's value (for checks that involve several settings). */
  error(name: SettingName, problem: string): SettingError {
    return new SettingError(name, this.get(name).from, problem);
  }
}

const isOwn = (name: string): name is SettingName => Object.prototype.hasOwnProperty.call(SETTINGS, name);
const defOf = (name: string): SettingDef | undefined => (isOwn(name) ? SETTINGS[name] : undefined);

/** A value as an error message may show it: secrets hidden. */
function shown(def: SettingDef, value: unknown): string {
  if (def.secret === 'all') return MASK;
  if (def.secret !== undefined && typeof value === 'string') return JSON.stringify(maskUrl(value, def.secret === 'url-user'));
  return JSON.stringify(value) ?? String(value);
}

function fromText(def: SettingDef, text: string, from: string): unknown {
  const v: unknown = def.kind.fromText(text);
  if (v === undefined) throw new SettingError(def.name, from, `must be ${def.kind.expects}, got ${shown(def, text)}`);
  return v;
}

function fromJson(def: SettingDef, json: unknown, from: string): unknown {
  const v: unknown = def.kind.fromJson(json);
  if (v === undefined) throw new SettingError(def.name, from, `must be ${def.kind.expects}, got ${shown(def, json)}`);
  return v;
}

interface Given {
  value: unknown;
  from: string;
}

function parseArgv(command: CommandName, argv: readonly string[], allowPositionals: boolean): { flags: Map<string, Given>; positionals: string[] } {
  const flags = new Map<string, Given>();
  const positionals: string[] = [];
  const positional = (arg: string): void => {
    if (!allowPositionals) throw new UsageError(`unexpected argument "${arg}"`, command);
    positionals.push(arg);
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      for (const rest of argv.slice(i + 1)) positional(rest);
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positional(arg);
      continue;
    }
    if (!arg.startsWith('--')) throw new UsageError(`unknown option ${arg}`, command);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const inline = eq < 0 ? undefined : arg.slice(eq + 1);
    const from = `flag --${name}`;
    const def = defOf(name);
    if (def === undefined) throw new SettingError(name, from, notASetting(name, 'no such option'));
    if (!takes(command, def) || !originsOf(def).includes('flag')) {
      throw new SettingError(name, from, `not an option of ${command} (it is one of ${def.commands.join(', ')})`);
    }
    if (def.kind.isSwitch) {
      // Alone it is on; --name=false turns off what the environment or a config file turned on. Never the
      // next argument, which may be a positional.
      flags.set(name, { value: inline === undefined ? true : fromText(def, inline, from), from });
      continue;
    }
    let text = inline;
    if (text === undefined) {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw new SettingError(name, from, `needs a value: --${name} ${def.arg ?? 'VALUE'}`);
      text = next;
      i++;
    }
    flags.set(name, { value: fromText(def, text, from), from });
  }
  return { flags, positionals };
}

/** Where the config file is: its path, where that came from, and whether it must exist. */
function configLocation(flags: Map<string, Given>, input: SettingsInput): { path: string; from: string; source: Source; explicit: boolean } {
  const flag = flags.get('config');
  if (flag !== undefined) return { path: flag.value as string, from: flag.from, source: 'flag', explicit: true };
  const name = envName('config');
  const env = input.env[name];
  if (env !== undefined) {
    const from = `env ${name}`;
    return { path: fromText(SETTINGS.config, env, from) as string, from, source: 'env', explicit: true };
  }
  return { path: DEFAULT_CONFIG_FILE, from: 'default', source: 'default', explicit: false };
}

/** "at line L, column C" of a JSON.parse error's position, without quoting the file (it may hold secrets). */
function jsonFault(err: unknown, text: string): string {
  const at = /position (\d+)/.exec((err as Error).message);
  if (at === null) return 'not valid JSON';
  const before = text.slice(0, Number(at[1])).split('\n');
  return `not valid JSON at line ${before.length}, column ${before[before.length - 1]!.length + 1}`;
}

/** The config file's entries, or undefined when no file is named and the default one does not exist. */
function readConfig(
  loc: ReturnType<typeof configLocation>,
  input: SettingsInput,
): Record<string, unknown> | undefined {
  let text: string | undefined;
  try {
    text = input.readFile(loc.path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new SettingError('config', loc.from, `cannot read "${loc.path}"${code === undefined ? '' : ` (${code})`}`);
  }
  if (text === undefined) {
    if (loc.explicit) throw new SettingError('config', loc.from, `no such file "${loc.path}"`);
    return undefined;
  }
  const body = text.replace(/^\uFEFF/, '');
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (err) {
    throw new SettingError('config', loc.from, `"${loc.path}" is ${jsonFault(err, body)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new SettingError('config', loc.from, `"${loc.path}" must hold a JSON object whose keys are setting names`);
  }
  return parsed as Record<string, unknown>;
}

export interface ResolveOptions {
  /** The command takes positional arguments (paths, a subcommand). */
  readonly positionals?: boolean;
}

/** Every setting of the command with its value and source; throws a UsageError naming the setting and source of the first fault. */
export function resolveSettings(command: CommandName, argv: readonly string[], input: SettingsInput, o: ResolveOptions = {}): Resolved {
  const { flags, positionals } = parseArgv(command, argv, o.positionals ?? false);
  const loc = configLocation(flags, input);
  const entries = readConfig(loc, input);

  const file = new Map<string, Given>();
  if (entries !== undefined) {
    const from = `file ${loc.path}`;
    for (const [key, json] of Object.entries(entries)) {
      const def = defOf(key);
      if (def === undefined) throw new SettingError(key, from, notASetting(key, 'no such setting'));
      if (!originsOf(def).includes('file')) throw new SettingError(key, from, 'cannot be set in a config file');
      if (!takes(command, def)) continue;
      file.set(key, { value: fromJson(def, json, from), from });
    }
  }

  const env = new Map<string, Given>();
  for (const def of settingsOf(command)) {
    if (def.name === 'config' || !originsOf(def).includes('env')) continue;
    const name = envName(def.name);
    const text = input.env[name];
    if (text !== undefined) env.set(def.name, { value: fromText(def, text, `env ${name}`), from: `env ${name}` });
  }

  const settings = new Map<string, ResolvedSetting>();
  for (const def of settingsOf(command)) {
    if (def.name === 'config') {
      settings.set('config', { value: entries === undefined ? undefined : loc.path, source: loc.source, from: loc.from });
      continue;
    }
    const flag = flags.get(def.name);
    const fromEnv = env.get(def.name);
    const fromFile = file.get(def.name);
    if (flag !== undefined) settings.set(def.name, { ...flag, source: 'flag' });
    else if (fromEnv !== undefined) settings.set(def.name, { ...fromEnv, source: 'env' });
    else if (fromFile !== undefined) settings.set(def.name, { ...fromFile, source: 'file' });
    else settings.set(def.name, { value: defaultOf(def), source: 'default', from: 'default' });
  }
  return new Resolved(command, settings, positionals);
}

/** A setting's value as `forecastd config` prints it: the form a config file takes, secrets hidden, null when unset. */
export function displayValue(def: SettingDef, value: unknown): unknown {
  if (value === undefined) return null;
  const json = def.kind.json(value);
  if (def.secret === 'all') return MASK;
  if (def.secret !== undefined && typeof json === 'string') return maskUrl(json, def.secret === 'url-user');
  return json;
}
