/**
 * forecastd webhooks add | list | remove | retry through the real command line
 * on a real store: the secret printed once, the default name, the checks
 * (URL, registered sites, names), the list and its JSON, and the errors.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openStore } from '../../src/store/openStore.js';
import { importFarms, runCli } from '../helpers/cli.js';
import { testDbUrl } from '../helpers/fixtures.js';

let db = '';
let drop: () => Promise<void>;

const hooks = (args: string[]) => runCli(['webhooks', ...args, '--db', db]);

before(async () => {
  const t = await testDbUrl();
  db = t.url;
  drop = t.drop;
  await importFarms(db, t.dir);
});
after(async () => drop?.());

describe('forecastd webhooks', () => {
  test('add prints the secret once, alone on stdout; the name defaults to the host; list shows the endpoint, never the secret', async () => {
    const a = await hooks(['add', 'https://hooks.example.com/forecast?x=1']);
    assert.equal(a.code, 0, a.stderr);
    assert.match(a.stdout, /^whsec_[A-Za-z0-9+/]{43}=\n$/);
    assert.match(a.stderr, /added webhook "hooks\.example\.com" for every site/);
    const b = await hooks(['add', 'http://127.0.0.1:9/desk', '--name', 'desk', '--farms', 'WF_A,PV_B']);
    assert.equal(b.code, 0, b.stderr);
    assert.notEqual(a.stdout, b.stdout);

    const list = await hooks(['list']);
    assert.equal(list.code, 0, list.stderr);
    const lines = list.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^NAME\s+URL\s+FARMS\s+LAST ATTEMPT\s+RESULT\s+PENDING\s+STATE$/);
    assert.match(lines[1]!, /^desk\s+http:\/\/127\.0\.0\.1:9\/desk\s+WF_A,PV_B\s+-\s+-\s+0\s+active$/);
    assert.match(lines[2]!, /^hooks\.example\.com\s+https:\/\/hooks\.example\.com\/forecast\?x=1\s+all\s+-\s+-\s+0\s+active$/);
    assert.ok(!list.stdout.includes('whsec_'));

    const json = await hooks(['list', '--json']);
    assert.equal(json.code, 0, json.stderr);
    const parsed = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
    assert.deepEqual(
      parsed.map((w) => [w.name, w.url, w.farms, w.last_attempt, w.last_result, w.pending, w.state]),
      [
        ['desk', 'http://127.0.0.1:9/desk', ['WF_A', 'PV_B'], null, null, 0, 'active'],
        ['hooks.example.com', 'https://hooks.example.com/forecast?x=1', 'all', null, null, 0, 'active'],
      ],
    );
    assert.ok(!json.stdout.includes('whsec_'));
    // The store keeps the secret that was printed (it signs with it).
    const store = await openStore(db);
    try {
      const stored = await store.listWebhooks();
      assert.equal(stored.find((w) => w.name === 'desk')!.secret, b.stdout.trim());
    } finally {
      await store.close();
    }
  });

  test('refused: a URL that is not http(s), a site that is not registered, a name taken, a bad name', async () => {
    for (const url of ['ftp://example.com/x', 'not a url', 'file:///etc/passwd', 'https://user:pw@example.com/']) {
      const r = await hooks(['add', url]);
      assert.equal(r.code, 2, url);
      assert.match(r.stderr, /^forecastd webhooks: the URL "[^"]*" (must start with http:\/\/ or https:\/\/|is not a URL|must not hold a user name or password)/, url);
      assert.equal(r.stdout, '');
    }
    const unknown = await hooks(['add', 'https://a.example.com/', '--farms', 'WF_A,NOPE']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /site "NOPE" not registered/);
    assert.equal(unknown.stdout, '');
    const taken = await hooks(['add', 'https://b.example.com/', '--name', 'desk']);
    assert.equal(taken.code, 1);
    assert.match(taken.stderr, /already named "desk"/);
    assert.equal(taken.stdout, '');
    // A name made from the host is made unique instead: a second endpoint of one receiver.
    for (const [path, expected] of [['/one', 'c.example.com'], ['/two', 'c.example.com-2'], ['/three', 'c.example.com-3']] as const) {
      const r = await hooks(['add', `https://c.example.com${path}`]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, new RegExp(`^added webhook "${expected.replace(/\./g, '\\.')}" for every site`));
    }
    for (const name of ['c.example.com', 'c.example.com-2', 'c.example.com-3']) assert.equal((await hooks(['remove', name])).code, 0);
    const badName = await hooks(['add', 'https://b.example.com/', '--name', 'a b']);
    assert.equal(badName.code, 2);
    assert.match(badName.stderr, /webhook name "a b" must be 1-64 of/);
    const names = JSON.parse((await hooks(['list', '--json'])).stdout) as Array<{ name: string }>;
    assert.deepEqual(names.map((w) => w.name), ['desk', 'hooks.example.com'], 'nothing was added');
  });

  test('usage: a subcommand is needed, options belong to their subcommand, NAME is needed', async () => {
    for (const args of [[], ['frobnicate'], ['add'], ['remove'], ['retry', 'a', 'b'], ['list', '--name', 'x'], ['remove', 'desk', '--farms', 'WF_A'], ['list', '--rate', '1']]) {
      const r = await hooks(args);
      assert.equal(r.code, 2, args.join(' '));
    }
  });

  test('retry and remove: an unknown name is an error; retry with nothing pending says so; remove removes', async () => {
    const retryUnknown = await hooks(['retry', 'nope']);
    assert.equal(retryUnknown.code, 1);
    assert.match(retryUnknown.stderr, /no webhook is named "nope"/);
    const retry = await hooks(['retry', 'desk']);
    assert.equal(retry.code, 0, retry.stderr);
    assert.match(retry.stderr, /no pending deliveries/);
    const removeUnknown = await hooks(['remove', 'nope']);
    assert.equal(removeUnknown.code, 1);
    assert.match(removeUnknown.stderr, /no webhook is named "nope"/);
    const removed = await hooks(['remove', 'desk']);
    assert.equal(removed.code, 0, removed.stderr);
    const names = JSON.parse((await hooks(['list', '--json'])).stdout) as Array<{ name: string }>;
    assert.deepEqual(names.map((w) => w.name), ['hooks.example.com']);
    // The name is free again.
    assert.equal((await hooks(['add', 'https://c.example.com/', '--name', 'desk'])).code, 0);
  });
});
