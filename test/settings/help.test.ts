import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { helpText } from '../../src/cli/usage.js';
import { ALL_SETTINGS, COMMAND_NAMES, settingsOf } from '../../src/settings/definitions.js';

describe('--help of each command', () => {
  it('lists exactly the settings the command takes, each with its help line', () => {
    for (const command of COMMAND_NAMES) {
      const text = helpText(command);
      const listed = [...text.matchAll(/^ {2}--([a-z-]+)/gm)].map((m) => m[1]);
      assert.deepEqual(listed, settingsOf(command).map((d) => d.name), command);
      assert.match(text, /^  -h, --help +show this help$/m);
      for (const def of settingsOf(command)) assert.ok(text.includes(def.help), `${command}: ${def.name}`);
    }
  });

  it('shows defaults with their unit, and a machine-dependent default in words', () => {
    const serve = helpText('serve');
    assert.match(serve, /--cache-mb MB +memory for the caches of each serving process: .* \(default 300 MB\)/);
    assert.match(serve, /--workers N +processes serving the port \(node:cluster\) \(default number of cores\)/);
    assert.match(serve, /--headers-timeout DURATION\n +cut off .* \(default 10s\)/);
    assert.match(helpText('migrate-store'), /--from URL +the store to copy from \(required\)/);
  });

  it('keeps each command\'s own introduction', () => {
    assert.match(helpText('serve'), /^Usage: forecastd serve \[options\]\n\nServe the HTTP API\./);
    assert.match(helpText('ingest'), /Exit status: 0 all files taken; 1 some rejected; 2 usage error\.\n$/);
    assert.match(helpText('main'), /^ {2}config +print the effective settings/m);
  });

  it('every setting appears in the help of some command', () => {
    const all = COMMAND_NAMES.map((c) => helpText(c)).join('\n');
    for (const def of ALL_SETTINGS) assert.ok(all.includes(`--${def.name}`), def.name);
  });
});
