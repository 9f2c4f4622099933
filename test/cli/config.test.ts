/** forecastd config and settings from every source, through the real command line. */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { settingsOf } from '../../src/settings/definitions.js';
import { runCli, serve, type CliResult } from '../helpers/cli.js';
import { farmsCsv, tempDir } from '../helpers/fixtures.js';

/** No FORECASTD_* variable of the test's own environment leaks into the command. */
const CLEAN: NodeJS.ProcessEnv = Object.fromEntries(Object.keys(process.env).filter((k) => k.startsWith('FORECASTD_')).map((k) => [k, undefined]));

let dir: string;
let cleanup: () => void;
before(() => ({ dir, cleanup } = tempDir('forecastd-config-')));
after(() => cleanup());

/** Runs forecastd in a fresh folder holding the given ./forecastd.config.json (none when undefined). */
async function inFolder(args: string[], env: NodeJS.ProcessEnv = {}, config?: string): Promise<CliResult> {
  const cwd = mkdtempSync(join(dir, 'cwd-'));
  if (config !== undefined) writeFileSync(join(cwd, 'forecastd.config.json'), config);
  return runCli(args, { ...CLEAN, ...env }, cwd);
}

/** The text output of config as name -> [value, source]. */
function table(stdout: string): Map<string, [string, string]> {
  const rows = stdout.trimEnd().split('\n').map((line) => line.split(/ {2,}/));
  for (const r of rows) assert.equal(r.length, 3, r.join('|'));
  return new Map(rows.map(([name, value, source]) => [name!, [value!, source!]]));
}

/** Exit 2 and exactly one stderr line, `forecastd CMD: setting NAME from SOURCE: …`. */
function refused(r: CliResult, command: string, line: RegExp): void {
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, '');
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.ok(lines[0]!.startsWith(`forecastd ${command}: `), lines[0]);
  assert.match(lines[0]!.slice(`forecastd ${command}: `.length), line);
}

describe('forecastd config', () => {
  test('shows each setting with the source it came from: flag > env > file > default', async () => {
    const file = JSON.stringify({ port: 1001, host: '10.0.0.1', 'log-level': 'info', 'keep-alive-timeout': '7s', runs: 9 });
    const r = await inFolder(['config', '--port', '3003', '--access-log'], { FORECASTD_PORT: '2002', FORECASTD_HOST: '10.0.0.2' }, file);
    assert.equal(r.code, 0, r.stderr);
    const t = table(r.stdout);
    assert.deepEqual(t.get('port'), ['3003', 'flag']);
    assert.deepEqual(t.get('access-log'), ['true', 'flag']);
    assert.deepEqual(t.get('host'), ['10.0.0.2', 'env']);
    assert.deepEqual(t.get('log-level'), ['info', 'file']);
    assert.deepEqual(t.get('keep-alive-timeout'), ['7s', 'file']);
    assert.deepEqual(t.get('match-radius-km'), ['5', 'default']);
    assert.deepEqual(t.get('config'), ['./forecastd.config.json', 'default']);
    assert.deepEqual(t.get('redis'), ['(unset)', 'default']);
    assert.deepEqual([...t.keys()], settingsOf('serve').map((d) => d.name));
    assert.ok(!t.has('runs'), 'a setting of another command is not shown');
    // Columns: every source starts at the same position.
    const at = new Set(r.stdout.trimEnd().split('\n').map((l) => l.search(/(default|file|env|flag)$/)));
    assert.equal(at.size, 1, r.stdout);
  });

  test('--json prints {"name": {"value", "source"}} for every serve setting, values as a config file holds them', async () => {
    const r = await inFolder(['config', '--json', '--cors-origin', 'https://a.example', '--range=71,1,139,59'], { FORECASTD_WORKERS: '3' });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Record<string, { value: unknown; source: string }>;
    assert.deepEqual(Object.keys(out), settingsOf('serve').map((d) => d.name));
    for (const [name, entry] of Object.entries(out)) assert.deepEqual(Object.keys(entry).sort(), ['source', 'value'], name);
    assert.deepEqual(out.port, { value: 8080, source: 'default' });
    assert.deepEqual(out.workers, { value: 3, source: 'env' });
    assert.deepEqual(out['cors-origin'], { value: ['https://a.example'], source: 'flag' });
    assert.deepEqual(out.range, { value: '71,1,139,59', source: 'flag' });
    assert.deepEqual(out['headers-timeout'], { value: '10s', source: 'default' });
    assert.deepEqual(out['access-log'], { value: false, source: 'default' });
    assert.deepEqual(out.redis, { value: null, source: 'default' });
    assert.deepEqual(out.config, { value: null, source: 'default' });
  });

  test('the printed JSON values, used as a config file, give the same settings', async () => {
    const first = await inFolder(['config', '--json', '--port', '9', '--headers-timeout', '1.5s', '--cors-origin', 'http://localhost:3000', '--access-log']);
    const values = Object.fromEntries(
      Object.entries(JSON.parse(first.stdout) as Record<string, { value: unknown }>)
        .filter(([name, e]) => name !== 'config' && e.value !== null)
        .map(([name, e]) => [name, e.value]),
    );
    const second = await inFolder(['config', '--json'], {}, JSON.stringify(values));
    assert.equal(second.code, 0, second.stderr);
    const back = JSON.parse(second.stdout) as Record<string, { value: unknown; source: string }>;
    for (const [name, value] of Object.entries(values)) assert.deepEqual(back[name], { value, source: 'file' }, name);
  });

  test('passwords inside URLs never appear: --db, --read-db, --redis, from flags, the environment and the file', async () => {
    const flags = ['--db', 'postgres://alice:DbPassw0rd@db1:5432/forecastd', '--read-db', 'postgres://bob:ReadPassw0rd@db2/forecastd', '--redis', 'redis://:RedisPassw0rd@cache:6379/0'];
    for (const json of [false, true]) {
      const r = await inFolder(['config', ...flags, ...(json ? ['--json'] : [])]);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(!r.stdout.includes('Passw0rd'), r.stdout);
      assert.ok(r.stdout.includes('postgres://alice:***@db1:5432/forecastd'), r.stdout);
      assert.ok(r.stdout.includes('postgres://bob:***@db2/forecastd'), r.stdout);
      assert.ok(r.stdout.includes('redis://:***@cache:6379/0'), r.stdout);
    }
    const viaEnv = await inFolder(['config', '--json'], { FORECASTD_DB: 'postgres://alice:EnvPassw0rd@db1/forecastd' }, JSON.stringify({ redis: 'redis://u:FilePassw0rd@cache' }));
    assert.equal(viaEnv.code, 0, viaEnv.stderr);
    assert.ok(!viaEnv.stdout.includes('Passw0rd'), viaEnv.stdout);
    const out = JSON.parse(viaEnv.stdout) as Record<string, { value: unknown; source: string }>;
    assert.deepEqual(out.db, { value: 'postgres://alice:***@db1/forecastd', source: 'env' });
    assert.deepEqual(out.redis, { value: 'redis://u:***@cache', source: 'file' });
  });

  test('--config names the file, also through FORECASTD_CONFIG, instead of ./forecastd.config.json', async () => {
    const named = join(dir, 'named.json');
    writeFileSync(named, '{"port": 4004}');
    const r = await inFolder(['config', '--json', '--config', named], {}, '{"port": 5005}');
    const out = JSON.parse(r.stdout) as Record<string, { value: unknown; source: string }>;
    assert.deepEqual(out.port, { value: 4004, source: 'file' });
    assert.deepEqual(out.config, { value: named, source: 'flag' });
    const viaEnv = JSON.parse((await inFolder(['config', '--json'], { FORECASTD_CONFIG: named }, '{"port": 5005}')).stdout) as typeof out;
    assert.deepEqual(viaEnv.port, { value: 4004, source: 'file' });
    assert.deepEqual(viaEnv.config, { value: named, source: 'env' });
  });
});

describe('bad settings stop every command with exit 2 and one line naming the setting and its source', () => {
  test('a bad value from a flag, the environment and the file', async () => {
    refused(await inFolder(['config', '--port', 'abc']), 'config', /^setting port from flag --port: must be a whole number from 0 to 65535, got "abc"$/);
    refused(await inFolder(['config'], { FORECASTD_PORT: 'abc' }), 'config', /^setting port from env FORECASTD_PORT: must be a whole number from 0 to 65535, got "abc"$/);
    refused(await inFolder(['config'], {}, '{"port": "abc"}'), 'config', /^setting port from file \.\/forecastd\.config\.json: must be a whole number/);
    refused(await inFolder(['config', '--headers-timeout', '10']), 'config', /^setting headers-timeout from flag --headers-timeout: must be a duration/);
    refused(await inFolder(['config'], { FORECASTD_REQUEST_TIMEOUT: '5 s' }), 'config', /^setting request-timeout from env FORECASTD_REQUEST_TIMEOUT: must be a duration/);
    refused(await inFolder(['config'], {}, '{"auth": "sometimes"}'), 'config', /^setting auth from file \.\/forecastd\.config\.json: must be one of auto, required, off, got "sometimes"$/);
  });

  test('unknown flags and unknown keys of the file', async () => {
    refused(await inFolder(['config', '--prot', '80']), 'config', /^setting prot from flag --prot: no such option$/);
    refused(await inFolder(['serve', '--runs', '3']), 'serve', /^setting runs from flag --runs: not an option of serve/);
    refused(await inFolder(['config'], {}, '{"prot": 80}'), 'config', /^setting prot from file \.\/forecastd\.config\.json: no such setting$/);
  });

  test('a malformed file, a file that is not an object, and --config naming a missing file', async () => {
    refused(await inFolder(['config'], {}, '{"port": 80,}'), 'config', /^setting config from default: "\.\/forecastd\.config\.json" is not valid JSON at line 1, column 13$/);
    refused(await inFolder(['config'], {}, '"port"'), 'config', /must hold a JSON object whose keys are setting names$/);
    refused(await inFolder(['config', '--config', join(dir, 'missing.json')]), 'config', /^setting config from flag --config: no such file ".*missing\.json"$/);
    refused(await inFolder(['ingest', 'x.csv'], { FORECASTD_CONFIG: join(dir, 'missing.json') }), 'ingest', /^setting config from env FORECASTD_CONFIG: no such file/);
  });

  test('serve, ingest, farms, demo and migrate-store refuse before doing anything', async () => {
    refused(await inFolder(['serve', '--port', '0'], { FORECASTD_MAX_IN_FLIGHT: '0' }), 'serve', /^setting max-in-flight from env FORECASTD_MAX_IN_FLIGHT: /);
    refused(await inFolder(['serve', '--port', '0', '--db', 'x.db', '--read-db', 'postgres://h/db']), 'serve', /^setting read-db from flag --read-db: needs PostgreSQL URLs/);
    refused(await inFolder(['ingest', 'x.csv'], {}, '{"db": "sqlite:"}'), 'ingest', /^setting db from file \.\/forecastd\.config\.json: must be a store URL/);
    refused(await inFolder(['farms', 'import', 'f.csv', '--db='], {}), 'farms', /^setting db from flag --db: must be a store URL/);
    refused(await inFolder(['demo'], { FORECASTD_RUNS: '0' }), 'demo', /^setting runs from env FORECASTD_RUNS: must be a whole number from 1 to 60, got "0"$/);
    refused(await inFolder(['migrate-store', '--from', 'a.db', '--to', 'a.db']), 'migrate-store', /^setting to from flag --to: names the same store as from$/);
  });

  test('a command ignores file keys and environment variables of other commands', async () => {
    // ingest does not take port: the bad value is not its concern; nor is FORECASTD_PORT.
    const r = await inFolder(['ingest', 'nothing-here.csv'], { FORECASTD_PORT: 'abc', FORECASTD_NOT_A_SETTING: 'x' }, '{"port": "abc", "db": "sqlite:./store.db"}');
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /nothing-here\.csv: line 0, column 0/);
  });
});

describe('commands read their settings from the file and the environment', () => {
  test('farms import and serve take db from the config file named by FORECASTD_CONFIG and --config', async () => {
    const db = `sqlite:${join(dir, 'from-file.db')}`;
    const config = join(dir, 'store.json');
    writeFileSync(config, JSON.stringify({ db }));
    writeFileSync(join(dir, 'farms.csv'), farmsCsv());
    const imported = await runCli(['farms', 'import', join(dir, 'farms.csv')], { ...CLEAN, FORECASTD_CONFIG: config });
    assert.equal(imported.code, 0, imported.stderr);
    const s = await serve(['--config', config, '--workers', '1'], CLEAN);
    try {
      const farms = (await (await fetch(`${s.base}/api/v1/farms`)).json()) as { data: { total: number } };
      assert.equal(farms.data.total, 3);
    } finally {
      assert.equal(await s.stop(), 0, s.stderr());
    }
  });
});
