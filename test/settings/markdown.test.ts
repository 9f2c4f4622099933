import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ALL_SETTINGS, envName, originsOf } from '../../src/settings/definitions.js';
import { betweenMarkers, renderSettingsTable, withSettingsTable } from '../../src/settings/markdown.js';

const README = new URL('../../../README.md', import.meta.url);

describe('the README settings table', () => {
  it('equals the table rendered from the definitions (run npm run docs:settings after changing a setting)', () => {
    const readme = readFileSync(README, 'utf8');
    assert.equal(betweenMarkers(readme), renderSettingsTable());
  });

  it('has one row per setting naming its flag, environment variable and commands', () => {
    const rows = renderSettingsTable().trimEnd().split('\n').slice(2);
    assert.equal(rows.length, ALL_SETTINGS.length);
    for (const [i, def] of ALL_SETTINGS.entries()) {
      const cells = rows[i]!.split(' | ');
      assert.equal(cells[0], `| \`${def.name}\``);
      assert.match(cells[1]!, new RegExp(`^\`--${def.name}[ \`]`));
      // Settings taken from the command line only (json, the attributes of one key) have no variable.
      assert.equal(cells[2], originsOf(def).includes('env') ? `\`${envName(def.name)}\`` : '');
      assert.equal(cells[5], `${def.commands.join(', ')} |`);
    }
  });

  it('shows a default that depends on the machine in words, and others as values', () => {
    const table = renderSettingsTable();
    assert.match(table, /\| `workers` \|[^\n]*\| number of cores \|/);
    assert.match(table, /\| `headers-timeout` \|[^\n]*\| `10s` \|/);
    assert.match(table, /\| `from` \|[^\n]*\| required \|/);
  });

  it('withSettingsTable replaces only what is between the markers', () => {
    const doc = 'before\n<!-- settings:begin -->\nold table\n<!-- settings:end -->\nafter\n';
    const out = withSettingsTable(doc);
    assert.ok(out.startsWith('before\n<!-- settings:begin -->\n| setting |'));
    assert.ok(out.endsWith('|\n<!-- settings:end -->\nafter\n'));
    assert.ok(!out.includes('old table'));
    assert.equal(withSettingsTable(out), out);
    assert.throws(() => withSettingsTable('no markers'), /lacks/);
  });
});
