/** The README's settings table, rendered from the definitions (npm run docs:settings writes it). */
import { ALL_SETTINGS, defaultOf, defaultText, envName, originsOf, type SettingDef } from './definitions.js';

export const BEGIN_MARKER = '<!-- settings:begin -->';
export const END_MARKER = '<!-- settings:end -->';

const cell = (text: string): string => text.replace(/\|/g, '\\|');
const code = (text: string): string => `\`${text}\``;

function meaning(def: SettingDef): string {
  const notes: string[] = [];
  if (def.unit !== undefined) notes.push(`unit: ${def.unit}`);
  if (def.secret !== undefined) notes.push(def.secret === 'all' ? 'secret' : 'its password is printed as ***');
  const from = originsOf(def);
  if (from.length === 1) notes.push(`${from[0]} only`);
  else if (!from.includes('file')) notes.push('not in the config file');
  return def.help + (notes.length > 0 ? ` (${notes.join('; ')})` : '');
}

function defaultCell(def: SettingDef): string {
  if (def.defaultText !== undefined || defaultOf(def) === undefined) return defaultText(def);
  return code(defaultText(def));
}

/** The table, one row per setting in definition order, ending with a newline. */
export function renderSettingsTable(): string {
  const rows = ALL_SETTINGS.map((def) =>
    [
      code(def.name),
      code(`--${def.name}${def.arg === undefined ? '' : ` ${def.arg}`}`),
      originsOf(def).includes('env') ? code(envName(def.name)) : '',
      defaultCell(def),
      meaning(def),
      def.commands.join(', '),
    ]
      .map(cell)
      .join(' | '),
  );
  return ['| setting | flag | environment | default | meaning | commands |', '|---|---|---|---|---|---|', ...rows.map((r) => `| ${r} |`)].join('\n') + '\n';
}

/** The text between the markers, or undefined when they are missing. */
export function betweenMarkers(doc: string): string | undefined {
  const start = doc.indexOf(BEGIN_MARKER);
  const end = doc.indexOf(END_MARKER);
  if (start < 0 || end < start) return undefined;
  return doc.slice(start + BEGIN_MARKER.length, end).replace(/^\n/, '');
}

/** The document with the table put between the markers; throws when they are missing. */
export function withSettingsTable(doc: string): string {
  const start = doc.indexOf(BEGIN_MARKER);
  const end = doc.indexOf(END_MARKER);
  if (start < 0 || end < start) throw new Error(`the document lacks ${BEGIN_MARKER} ... ${END_MARKER}`);
  return doc.slice(0, start + BEGIN_MARKER.length) + '\n' + renderSettingsTable() + doc.slice(end);
}
