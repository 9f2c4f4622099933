import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { describe, it } from 'node:test';
import { DEFAULT_RANGE } from '../../src/domain/limits.js';
import { DEFAULT_BODY_DISK_MB, DEFAULT_CACHE, DEFAULT_RUN_DISK_MB } from '../../src/http/context.js';
import { DEFAULT_DB } from '../../src/store/openStore.js';
import { ALL_SETTINGS, COMMAND_NAMES, SETTINGS, defaultOf, settingsOf } from '../../src/settings/definitions.js';
import { SettingError, UsageError } from '../../src/settings/errors.js';
import { displayValue, resolveSettings, type SettingsInput } from '../../src/settings/resolve.js';
import { serveOptions } from '../../src/settings/serveOptions.js';

/** An input with the given environment and files (path -> text); every other path does not exist. */
function input(env: Record<string, string> = {}, files: Record<string, string> = {}): SettingsInput {
  return { env, readFile: (path) => files[path] };
}

const fails = (fn: () => unknown, message: RegExp | string): void => {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof UsageError, String(err));
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    assert.ok(!err.message.includes('\n'), 'one line');
    return true;
  });
};

describe('resolveSettings: sources and precedence', () => {
  it('takes each setting from the source of highest precedence: flag > env > file > default', () => {
    const files = { './forecastd.config.json': JSON.stringify({ port: 1001, host: '10.0.0.1', 'log-level': 'info', 'match-radius-km': 7 }) };
    const env = { FORECASTD_PORT: '2002', FORECASTD_HOST: '10.0.0.2' };
    const s = resolveSettings('serve', ['--port', '3003'], input(env, files));
    assert.deepEqual([s.value('port'), s.source('port')], [3003, 'flag']);
    assert.deepEqual([s.value('host'), s.source('host')], ['10.0.0.2', 'env']);
    assert.deepEqual([s.value('log-level'), s.source('log-level')], ['info', 'file']);
    assert.deepEqual([s.value('match-radius-km'), s.source('match-radius-km')], [7, 'file']);
    assert.deepEqual([s.value('db'), s.source('db')], [DEFAULT_DB, 'default']);
    assert.deepEqual([s.value('config'), s.source('config')], ['./forecastd.config.json', 'default']);
  });

  it('defaults come from the constants the rest of the code uses', () => {
    const s = resolveSettings('serve', [], input());
    assert.deepEqual(s.value('range'), DEFAULT_RANGE);
    assert.equal(s.value('cache-mb'), DEFAULT_CACHE.seriesMb + DEFAULT_CACHE.bodyMb);
    assert.equal(s.value('latest-max-age'), DEFAULT_CACHE.latestMaxAgeS);
    assert.equal(s.value('headers-timeout'), 10_000);
    assert.equal(s.value('request-timeout'), 30_000);
    assert.equal(s.value('keep-alive-timeout'), 5_000);
    assert.equal(s.value('auth'), 'auto');
    assert.equal(s.value('redis'), undefined);
    assert.equal(s.value('anon-rate'), undefined);
    assert.deepEqual(s.value('cors-origin'), []);
    assert.equal(s.value('access-log'), false);
    assert.equal(s.value('config'), undefined);
  });

  it('reads --name=value, --name value, switches, and every kind from text', () => {
    const s = resolveSettings(
      'serve',
      ['--port=0', '--range', '-10,-5,10,5', '--match-radius-km', '2.5', '--access-log', '--headers-timeout', '1.5s', '--cors-origin', 'https://a.example,http://localhost:3000', '--auth=off', '--default-rate', '0.5'],
      input(),
    );
    assert.equal(s.value('port'), 0);
    assert.deepEqual(s.value('range'), { lonMin: -10, latMin: -5, lonMax: 10, latMax: 5 });
    assert.equal(s.value('match-radius-km'), 2.5);
    assert.equal(s.value('access-log'), true);
    assert.equal(s.value('headers-timeout'), 1500);
    assert.deepEqual(s.value('cors-origin'), ['https://a.example', 'http://localhost:3000']);
    assert.equal(s.value('auth'), 'off');
    assert.equal(s.value('default-rate'), 0.5);
  });

  it('reads every kind from a JSON file, as JSON values or as the text a flag takes', () => {
    const file = JSON.stringify({
      port: '8081',
      range: [71, 1, 139, 59],
      'access-log': true,
      'cors-origin': ['https://a.example'],
      'request-timeout': '2m',
      'anon-rate': 3,
      redis: 'redis://cache:6379',
    });
    const s = resolveSettings('serve', ['--config', 'c.json'], input({}, { 'c.json': file }));
    assert.equal(s.value('port'), 8081);
    assert.deepEqual(s.value('range'), { lonMin: 71, latMin: 1, lonMax: 139, latMax: 59 });
    assert.equal(s.value('access-log'), true);
    assert.deepEqual(s.value('cors-origin'), ['https://a.example']);
    assert.equal(s.value('request-timeout'), 120_000);
    assert.equal(s.value('anon-rate'), 3);
    assert.equal(s.value('redis'), 'redis://cache:6379');
    assert.deepEqual([s.value('config'), s.source('config')], ['c.json', 'flag']);
  });

  it('a switch in the environment is true/false/1/0', () => {
    assert.equal(resolveSettings('serve', [], input({ FORECASTD_ACCESS_LOG: '1' })).value('access-log'), true);
    assert.equal(resolveSettings('serve', [], input({ FORECASTD_ACCESS_LOG: 'false' })).value('access-log'), false);
    fails(() => resolveSettings('serve', [], input({ FORECASTD_ACCESS_LOG: 'yes' })), /^setting access-log from env FORECASTD_ACCESS_LOG: must be true or false, got "yes"$/);
  });

  it('FORECASTD_CONFIG names the file when no --config does; --config wins over it', () => {
    const files = { 'a.json': '{"port": 1}', 'b.json': '{"port": 2}', './forecastd.config.json': '{"port": 3}' };
    assert.equal(resolveSettings('serve', [], input({ FORECASTD_CONFIG: 'a.json' }, files)).value('port'), 1);
    assert.equal(resolveSettings('serve', ['--config', 'b.json'], input({ FORECASTD_CONFIG: 'a.json' }, files)).value('port'), 2);
    assert.equal(resolveSettings('serve', [], input({}, files)).value('port'), 3);
  });

  it('the last of a repeated flag wins', () => {
    assert.equal(resolveSettings('serve', ['--port', '1', '--port', '2'], input()).value('port'), 2);
  });

  it('keeps positionals in order for commands that take them, and after --', () => {
    const s = resolveSettings('ingest', ['a.csv', '--db', 'x.db', 'b', '--', '--c.csv'], input(), { positionals: true });
    assert.deepEqual(s.positionals, ['a.csv', 'b', '--c.csv']);
    assert.equal(s.value('db'), 'x.db');
    fails(() => resolveSettings('serve', ['extra'], input()), 'unexpected argument "extra"');
  });
});

describe('resolveSettings: what it refuses', () => {
  it('a bad value from each source, naming the setting and the source', () => {
    fails(() => resolveSettings('serve', ['--port', 'abc'], input()), 'setting port from flag --port: must be a whole number from 0 to 65535, got "abc"');
    fails(() => resolveSettings('serve', [], input({ FORECASTD_PORT: 'abc' })), 'setting port from env FORECASTD_PORT: must be a whole number from 0 to 65535, got "abc"');
    fails(
      () => resolveSettings('serve', [], input({}, { './forecastd.config.json': '{"port": 70000}' })),
      'setting port from file ./forecastd.config.json: must be a whole number from 0 to 65535, got 70000',
    );
    fails(() => resolveSettings('serve', [], input({}, { './forecastd.config.json': '{"port": 80.5}' })), /^setting port from file .*got 80\.5$/);
    fails(() => resolveSettings('serve', [], input({}, { './forecastd.config.json': '{"access-log": "yes"}' })), /^setting access-log from file .*: must be true or false/);
    fails(() => resolveSettings('serve', [], input({}, { './forecastd.config.json': '{"range": [1, 2, 3]}' })), /^setting range from file .*: must be four numbers/);
  });

  it('a value that a source of higher precedence overrides is still checked', () => {
    fails(() => resolveSettings('serve', ['--port', '1'], input({ FORECASTD_PORT: 'x' })), /^setting port from env FORECASTD_PORT:/);
    fails(() => resolveSettings('serve', ['--port', '1'], input({}, { './forecastd.config.json': '{"port": "x"}' })), /^setting port from file/);
  });

  it('each kind refuses what it should', () => {
    const bad: [string, string][] = [
      ['workers', '0'],
      ['workers', '-1'],
      ['match-radius-km', '-1'],
      ['match-radius-km', ''],
      ['default-rate', '0'],
      ['default-burst', '0'],
      ['log-level', 'loud'],
      ['auth', 'maybe'],
      ['range', '1,2,3'],
      ['range', '10,0,5,10'],
      ['headers-timeout', '10'],
      ['headers-timeout', '0s'],
      ['request-timeout', '5 s'],
      ['keep-alive-timeout', '1w'],
      ['cors-origin', 'https://a.example/'],
      ['cors-origin', 'a.example'],
      ['cors-origin', 'https://a.example/path'],
      ['redis', 'http://cache:6379'],
      ['redis', 'cache:6379'],
      ['db', 'sqlite:'],
      ['db', ''],
      ['host', ''],
    ];
    for (const [name, value] of bad) {
      fails(() => resolveSettings('serve', [`--${name}=${value}`], input()), new RegExp(`^setting ${name} from flag --${name}: must be `));
    }
  });

  it('a switch alone is on; --name=false turns off what the environment or a config file turned on', () => {
    const log = (args: string[], env: Record<string, string> = {}): unknown => resolveSettings('serve', args, input(env)).value('access-log');
    assert.equal(log(['--access-log']), true);
    assert.equal(log(['--access-log=false'], { FORECASTD_ACCESS_LOG: 'true' }), false);
    assert.equal(log(['--access-log=true']), true);
    assert.equal(log([], { FORECASTD_ACCESS_LOG: 'true' }), true);
  });

  it('unknown flags, options of other commands, values for switches and missing values', () => {
    fails(() => resolveSettings('serve', ['--nope'], input()), 'setting nope from flag --nope: no such option');
    // A retired setting says what replaced it, from a flag and from a file alike.
    fails(
      () => resolveSettings('serve', ['--series-cache-mb', '64'], input()),
      'setting series-cache-mb from flag --series-cache-mb: retired: --cache-mb sizes every cache now (one sixth of it holds runs)',
    );
    fails(() => resolveSettings('serve', ['--runs', '3'], input()), 'setting runs from flag --runs: not an option of serve (it is one of demo)');
    fails(() => resolveSettings('serve', ['--json'], input()), /^setting json from flag --json: not an option of serve/);
    fails(() => resolveSettings('serve', ['--access-log=maybe'], input()), /^setting access-log from flag --access-log: must be true or false/);
    fails(() => resolveSettings('serve', ['--port'], input()), 'setting port from flag --port: needs a value: --port N');
    fails(() => resolveSettings('serve', ['--db', '--port', '1'], input()), /^setting db from flag --db: needs a value/);
    fails(() => resolveSettings('serve', ['-x'], input()), 'unknown option -x');
  });

  it('the config file: unknown keys, keys that cannot be in a file, malformed JSON, not an object, missing, unreadable', () => {
    const file = (text: string) => input({}, { './forecastd.config.json': text });
    fails(
      () => resolveSettings('serve', [], file('{"body-cache-mb": 64}')),
      'setting body-cache-mb from file ./forecastd.config.json: retired: --cache-mb sizes every cache now (five sixths of it hold rendered answers)',
    );
    fails(() => resolveSettings('serve', [], file('{"prot": 80}')), 'setting prot from file ./forecastd.config.json: no such setting');
    fails(() => resolveSettings('serve', [], file('{"config": "x.json"}')), 'setting config from file ./forecastd.config.json: cannot be set in a config file');
    fails(() => resolveSettings('config', [], file('{"json": true}')), /^setting json from file .*: cannot be set in a config file$/);
    fails(() => resolveSettings('serve', [], file('{\n  "port": 80,\n}')), 'setting config from default: "./forecastd.config.json" is not valid JSON at line 3, column 1');
    fails(() => resolveSettings('serve', [], file('[]')), /must hold a JSON object whose keys are setting names$/);
    fails(() => resolveSettings('serve', [], file('null')), /must hold a JSON object/);
    fails(() => resolveSettings('serve', ['--config', 'missing.json'], input()), 'setting config from flag --config: no such file "missing.json"');
    fails(() => resolveSettings('serve', [], input({ FORECASTD_CONFIG: 'missing.json' })), 'setting config from env FORECASTD_CONFIG: no such file "missing.json"');
    const unreadable: SettingsInput = {
      env: {},
      readFile: () => {
        throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
      },
    };
    fails(() => resolveSettings('serve', ['--config', 'x.json'], unreadable), 'setting config from flag --config: cannot read "x.json" (EACCES)');
  });

  it('a malformed file is reported without quoting its content', () => {
    assert.throws(
      () => resolveSettings('serve', [], input({}, { './forecastd.config.json': 'password: hunter2' })),
      (err: Error) => !err.message.includes('hunter2') && /not valid JSON/.test(err.message),
    );
  });

  it('a bad secret value is reported with its password hidden', () => {
    assert.throws(
      () => resolveSettings('serve', ['--redis', 'http://:hunter2@cache:6379'], input()),
      (err: Error) => err.message === 'setting redis from flag --redis: must be a redis:// or rediss:// URL, got "http://:***@cache:6379"',
    );
  });
});

describe('resolveSettings: what it ignores', () => {
  it('a file key of a setting of another command only, unchecked', () => {
    const files = { './forecastd.config.json': JSON.stringify({ port: 'not checked by ingest', runs: 3, db: 'x.db' }) };
    const s = resolveSettings('ingest', [], input({}, files), { positionals: true });
    assert.equal(s.value('db'), 'x.db');
    assert.deepEqual([...s.settings.keys()], ['config', 'db', 'watch', 'settle', 'ingest-threads']);
    // serve takes port, and refuses it.
    fails(() => resolveSettings('serve', [], input({}, files)), /^setting port from file/);
  });

  it('environment variables of settings the command does not take, and FORECASTD_* variables that name no setting', () => {
    const env = { FORECASTD_PORT: 'abc', FORECASTD_RUNS: 'x', FORECASTD_CLUSTER_WORKER: '1', FORECASTD_NOT_A_SETTING: '?', FORECASTD_JSON: 'maybe' };
    const s = resolveSettings('ingest', [], input(env), { positionals: true });
    assert.equal(s.source('db'), 'default');
    // FORECASTD_JSON: json is a flag only, even for the command that takes it.
    assert.equal(resolveSettings('config', [], input({ FORECASTD_JSON: 'true' })).value('json'), false);
  });
});

describe('serveOptions', () => {
  it('carries every serve setting, the access and limit ones typed', () => {
    const s = resolveSettings('serve', ['--auth', 'required', '--anon-rate', '2', '--anon-burst', '10', '--redis', 'redis://cache:6379', '--max-in-flight', '9', '--keep-alive-timeout', '2s'], input());
    const o = serveOptions(s);
    assert.deepEqual(o.access, {
      auth: 'required',
      defaultRate: 20,
      defaultBurst: 200,
      authFailRate: 5,
      authFailBurst: 100,
      anonRate: 2,
      anonBurst: 10,
      redis: 'redis://cache:6379',
      corsOrigins: [],
      accessLog: false,
    });
    assert.deepEqual(o.limits, { maxInFlight: 9, headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 2000 });
  });

  it('keeps the wire front on unless --node-http-only is given', () => {
    const wire = (args: string[], env: Record<string, string> = {}): boolean => serveOptions(resolveSettings('serve', args, input(env))).wireFront;
    assert.equal(wire([]), true);
    assert.equal(wire(['--node-http-only']), false);
    assert.equal(wire([], { FORECASTD_NODE_HTTP_ONLY: 'true' }), false);
  });

  it('splits --cache-mb between rendered answers and runs, five to one; 0 turns both off', () => {
    const split = (args: string[]): unknown => {
      const { bodyMb, seriesMb, latestMaxAgeS } = serveOptions(resolveSettings('serve', args, input())).cache;
      return { bodyMb, seriesMb, latestMaxAgeS };
    };
    assert.deepEqual(split(['--cache-mb', '100']), { bodyMb: 83, seriesMb: 17, latestMaxAgeS: 60 });
    assert.deepEqual(split(['--cache-mb', '0', '--latest-max-age', '5']), { bodyMb: 0, seriesMb: 0, latestMaxAgeS: 5 });
    assert.deepEqual(split([]), { bodyMb: 250, seriesMb: 50, latestMaxAgeS: 60 });
  });

  it('takes --latest-max-age as a duration with a unit, or bare seconds; a part of a second is refused', () => {
    const maxAge = (args: string[], env: Record<string, string> = {}): number => serveOptions(resolveSettings('serve', args, input(env))).cache.latestMaxAgeS;
    assert.equal(maxAge(['--latest-max-age', '90s']), 90);
    assert.equal(maxAge(['--latest-max-age', '5m']), 300);
    assert.equal(maxAge(['--latest-max-age', '120']), 120);
    assert.equal(maxAge([], { FORECASTD_LATEST_MAX_AGE: '2h' }), 7200);
    for (const bad of ['1500ms', '-1s', '2y', 'soon']) {
      assert.throws(() => resolveSettings('serve', ['--latest-max-age', bad], input()), /latest-max-age/, bad);
    }
  });

  it("gives copies of runs --run-disk-mb and of rendered answers --body-disk-mb of disk, beside an SQLite store or in the system's temporary folder", () => {
    const disk = (args: string[]): unknown => {
      const { runDiskMb, bodyDiskMb, diskDir } = serveOptions(resolveSettings('serve', args, input())).cache;
      return { runDiskMb, bodyDiskMb, diskDir };
    };
    assert.deepEqual(disk(['--db', '/srv/forecasts/store.db']), { runDiskMb: DEFAULT_RUN_DISK_MB, bodyDiskMb: DEFAULT_BODY_DISK_MB, diskDir: '/srv/forecasts' });
    assert.deepEqual(disk(['--db', 'sqlite:data/x.db', '--run-disk-mb', '64', '--body-disk-mb', '32']), { runDiskMb: 64, bodyDiskMb: 32, diskDir: 'data' });
    assert.deepEqual(disk(['--db', 'postgres://h/db', '--run-disk-mb', '0', '--body-disk-mb', '0']), { runDiskMb: 0, bodyDiskMb: 0, diskDir: tmpdir() });
    fails(() => resolveSettings('serve', ['--run-disk-mb', '-1'], input()), /run-disk-mb/);
  });

  it('refuses a read replica without PostgreSQL on both sides, and a headers timeout longer than the request timeout', () => {
    fails(() => serveOptions(resolveSettings('serve', ['--db', 'x.db', '--read-db', 'postgres://h/db'], input())), 'setting read-db from flag --read-db: needs PostgreSQL URLs for both db and read-db');
    fails(
      () => serveOptions(resolveSettings('serve', ['--request-timeout', '5s'], input({ FORECASTD_HEADERS_TIMEOUT: '6s' }))),
      'setting headers-timeout from env FORECASTD_HEADERS_TIMEOUT: must not be longer than request-timeout (5s)',
    );
  });
});

describe('definitions', () => {
  it('every default is a value its own kind accepts, written and read back unchanged', () => {
    for (const def of ALL_SETTINGS) {
      const value = defaultOf(def);
      if (value === undefined) continue;
      assert.deepEqual(def.kind.fromText(def.kind.text(value)), value, def.name);
      assert.deepEqual(def.kind.fromJson(def.kind.json(value)), value, def.name);
    }
  });

  it('every command takes config; the serve-only settings are shown by config', () => {
    for (const command of COMMAND_NAMES) assert.ok(settingsOf(command).some((d) => d.name === 'config'), command);
    const serve = settingsOf('serve').map((d) => d.name);
    const config = settingsOf('config').map((d) => d.name);
    assert.deepEqual(config, [...serve, 'json']);
  });

  it('secret URLs are shown with the password hidden and unset settings as null', () => {
    assert.equal(displayValue(SETTINGS.db, 'postgres://u:pw@h/db'), 'postgres://u:***@h/db');
    assert.equal(displayValue(SETTINGS.redis, undefined), null);
    assert.equal(displayValue(SETTINGS['headers-timeout'], 90_000), '90s');
  });

  it('errors are SettingErrors carrying the setting and where it came from', () => {
    try {
      resolveSettings('serve', [], input({ FORECASTD_WORKERS: '0' }));
      assert.fail('no error');
    } catch (err) {
      assert.ok(err instanceof SettingError);
      assert.equal(err.setting, 'workers');
      assert.equal(err.from, 'env FORECASTD_WORKERS');
    }
  });
});
