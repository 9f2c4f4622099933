/** npm run docs:settings: writes the settings table into README.md between its markers. */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withSettingsTable } from '../src/settings/markdown.js';

const readme = fileURLToPath(new URL('../../README.md', import.meta.url));
const before = readFileSync(readme, 'utf8');
const after = withSettingsTable(before);
if (after === before) {
  process.stdout.write('README.md: settings table already up to date\n');
} else {
  writeFileSync(readme, after);
  process.stdout.write('README.md: settings table rewritten\n');
}
