/** Settings are read in one place: the environment only by the CLI entry, arguments only by src/settings/. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SRC = join(ROOT, 'src');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const sources = tsFiles(SRC).map((path) => ({ file: relative(ROOT, path), text: readFileSync(path, 'utf8') }));

describe('where settings are read', () => {
  it('finds the sources it checks', () => {
    assert.ok(sources.length > 50, `${sources.length} files`);
    assert.ok(sources.some((s) => s.file === join('src', 'cli', 'main.ts')));
  });

  it('no file under src/ but src/cli/main.ts mentions process.env', () => {
    const readers = sources.filter((s) => /process\s*\.\s*env\b|process\[['"]env['"]\]/.test(s.text)).map((s) => s.file);
    assert.deepEqual(readers, [join('src', 'cli', 'main.ts')]);
  });

  it('no file under src/ uses parseArgs: the command line is read by src/settings/resolve.ts', () => {
    const users = sources.filter((s) => /\bparseArgs\b/.test(s.text)).map((s) => s.file);
    assert.deepEqual(users, []);
  });

  it('every command resolves its settings through resolveSettings', () => {
    const commands = sources.filter((s) => /src\/cli\/\w+Command\.ts$/.test(s.file.split('\\').join('/')));
    assert.ok(commands.length >= 6, commands.map((c) => c.file).join(', '));
    for (const c of commands) assert.match(c.text, /resolveSettings\('[a-z-]+', args, input/, c.file);
  });
});
