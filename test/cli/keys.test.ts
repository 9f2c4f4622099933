/**
 * forecastd keys through the real command line, against a running server in
 * another process: the printed key, the list (never a key), name reuse, and
 * create / roll / revoke seen by the server within 2 s.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { checkKeyForm, KEY_LENGTH } from '../../src/access/keyFormat.js';
import { runCli, serve, type Served } from '../helpers/cli.js';
import { eventually, farmsCsv, runCsv, testDbUrl } from '../helpers/fixtures.js';

let db = '';
let dir = '';
let drop: () => Promise<void>;
let server: Served;

const status = async (path: string, headers: Record<string, string> = {}): Promise<number> =>
  (await fetch(server.base + path, { headers })).status;
const withKey = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

/** How long until probe() holds, ms; fails past 2 s (the contract's bound) with some slack for a loaded machine. */
async function seenWithin(probe: () => Promise<boolean>): Promise<number> {
  const t0 = Date.now();
  const ok = await eventually(probe, (r) => r, 2500);
  const ms = Date.now() - t0;
  assert.ok(ok, `not seen after ${ms} ms`);
  return ms;
}

async function keysCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCli(['keys', ...args, '--db', db]);
}

before(async () => {
  ({ dir, drop, url: db } = await testDbUrl());
  writeFileSync(join(dir, 'farms.csv'), farmsCsv());
  writeFileSync(join(dir, 'WF_A_2026112000.csv'), runCsv('2026112000', { steps: [0, 1] }));
  assert.equal((await runCli(['farms', 'import', join(dir, 'farms.csv'), '--db', db])).code, 0);
  assert.equal((await runCli(['ingest', join(dir, 'WF_A_2026112000.csv'), '--db', db])).code, 0);
  // The most talkative log level: whatever is logged, no key may be in it (checked at the end).
  server = await serve(['--db', db, '--workers', '1', '--log-level', 'trace']);
});

after(async () => {
  await server?.stop();
  await drop?.();
});

describe('forecastd keys', () => {
  let first = '';

  test('create prints the key alone on one line of stdout, in its form; the server asks for keys from then on', async () => {
    assert.equal(await status('/api/v1/farms'), 200, 'no key exists yet: open');
    // A budget the probes below cannot drain (a roll keeps the bucket of the name).
    const r = await keysCli(['create', '--name', 'desk-1', '--rate', '500', '--burst', '50000']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^fcd_[0-9A-Za-z]{38}\n$/);
    first = r.stdout.trim();
    assert.equal(first.length, KEY_LENGTH);
    assert.ok(checkKeyForm(first));
    assert.ok(!r.stderr.includes(first), 'the key is printed once, on stdout');
    await seenWithin(async () => (await status('/api/v1/farms')) === 401);
    assert.equal(await status('/api/v1/farms', withKey(first)), 200);
  });

  test('a live name cannot be used again', async () => {
    const r = await keysCli(['create', '--name', 'desk-1']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /desk-1/);
    assert.equal(r.stdout, '');
  });

  test('list shows name, prefix, attributes and state, never a key', async () => {
    const text = await keysCli(['list']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^NAME\s+PREFIX\s+FARMS\s+RATE\s+BURST\s+ADMIN\s+CREATED\s+EXPIRES\s+LAST USED\s+STATE$/m);
    assert.match(text.stdout, new RegExp(`^desk-1\\s+${first.slice(0, 8)}\\s+all\\s+500\\s+50000\\s+no\\s.*\\sactive$`, 'm'));
    const json = await keysCli(['list', '--json']);
    const keys = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
    assert.deepEqual(
      keys.map((k) => [k.name, k.prefix, k.farms, k.rate, k.burst, k.admin, k.state]),
      [['desk-1', first.slice(0, 8), 'all', 500, 50000, false, 'active']],
    );
    for (const out of [text.stdout, json.stdout]) assert.ok(!out.includes(first.slice(8, 20)), 'no part of the key beyond its prefix');
  });

  test('roll: the new key works at once, the old one until the grace ends; --grace 0 stops it at once', async () => {
    const r = await keysCli(['roll', 'desk-1', '--grace', '1h']);
    assert.equal(r.code, 0, r.stderr);
    const second = r.stdout.trim();
    assert.ok(checkKeyForm(second) && second !== first);
    await seenWithin(async () => (await status('/api/v1/farms', withKey(second))) === 200);
    assert.equal(await status('/api/v1/farms', withKey(first)), 200, 'the old key still works in its grace');
    const listed = JSON.parse((await keysCli(['list', '--json'])).stdout) as Array<{ state: string; rate: number }>;
    assert.deepEqual(listed.map((k) => k.state).sort(), ['active', 'expiring']);
    assert.deepEqual(listed.map((k) => k.rate), [500, 500], 'the new key has the same attributes');
    const now = await keysCli(['roll', 'desk-1', '--grace', '0']);
    assert.equal(now.code, 0, now.stderr);
    const third = now.stdout.trim();
    await seenWithin(async () => (await status('/api/v1/farms', withKey(second))) === 401);
    assert.equal(await status('/api/v1/farms', withKey(first)), 401);
    assert.equal(await status('/api/v1/farms', withKey(third)), 200);
    first = third;
  });

  test('revoke: the key stops working within 2 s', async () => {
    // Another live key keeps keys required (with auth auto, revoking the last one opens the server again).
    const keeper = await keysCli(['create', '--name', 'keeper']);
    assert.equal(keeper.code, 0, keeper.stderr);
    const r = await keysCli(['revoke', 'desk-1']);
    assert.equal(r.code, 0, r.stderr);
    await seenWithin(async () => (await status('/api/v1/farms', withKey(first))) === 401);
    const again = await keysCli(['revoke', 'desk-1']);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /no live key is named "desk-1"/);
  });

  test('a scoped key sees its sites only', async () => {
    const r = await keysCli(['create', '--name', 'farm-a', '--farms', 'WF_A']);
    assert.equal(r.code, 0, r.stderr);
    const key = r.stdout.trim();
    await seenWithin(async () => (await status('/api/v1/farms', withKey(key))) === 200);
    const farms = (await (await fetch(`${server.base}/api/v1/farms`, { headers: withKey(key) })).json()) as { data: { items: { farm_id: string }[] } };
    assert.deepEqual(farms.data.items.map((f) => f.farm_id), ['WF_A']);
    assert.equal(await status('/api/v1/forecast?farm_id=PV_B', withKey(key)), 404);
  });

  test('an admin key created with --farms sees every site, and is listed so, with a note that the scope is not kept', async () => {
    const r = await keysCli(['create', '--name', 'ops-scoped', '--farms', 'WF_A', '--admin']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /an admin key sees every site; --farms is not kept/);
    const listed = (JSON.parse((await keysCli(['list', '--json'])).stdout) as { name: string; farms: unknown; admin: boolean }[]).find((k) => k.name === 'ops-scoped');
    assert.deepEqual([listed?.farms, listed?.admin], ['all', true]);
    const key = r.stdout.trim();
    await seenWithin(async () => (await status('/api/v1/farms', withKey(key))) === 200);
    const farms = (await (await fetch(`${server.base}/api/v1/farms`, { headers: withKey(key) })).json()) as { data: { items: unknown[] } };
    assert.ok(farms.data.items.length > 1, 'every site');
  });

  test('a scope naming a site that is not registered is refused (exit 1), and no key is made', async () => {
    const r = await keysCli(['create', '--name', 'typo', '--farms', 'WF_A,WF_NOPE']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /site "WF_NOPE" not registered/);
    const listed = await keysCli(['list', '--json']);
    assert.ok(!(JSON.parse(listed.stdout) as { name: string }[]).some((k) => k.name === 'typo'));
  });

  test('no key the server was sent, good or bad, is in its log', async () => {
    const r = await keysCli(['create', '--name', 'log-probe']);
    const key = r.stdout.trim();
    await seenWithin(async () => (await status('/api/v1/farms', withKey(key))) === 200);
    await status('/api/v1/farms', { 'x-api-key': key.slice(0, -1) + 'x' });
    await status('/api/v1/nope', withKey(key));
    await status('/api/v1/forecast?farm_id=NOPE', { 'x-api-key': key });
    const log = server.stderr();
    assert.ok(!log.includes(key.slice(4, 36)), 'a key is in the log');
    assert.ok(!log.includes(first.slice(4, 36)), 'a key is in the log');
  });

  test('bad arguments are usage errors (exit 2) naming what is wrong', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['create'], /--name/],
      [['create', '--name', 'x y'], /key name/],
      [['create', '--name', 'ok', '--rate', '-1'], /rate/],
      [['create', '--name', 'ok', '--burst', '0'], /burst/],
      [['create', '--name', 'ok', '--farms', 'A,,B'], /farms/],
      [['roll', 'desk-1', '--grace', '8d'], /grace/],
      [['roll'], /NAME/],
      [['revoke', 'a', 'b'], /NAME/],
      [['list', '--grace', '1h'], /does not take --grace/],
      [['rotate', 'x'], /unknown keys subcommand/],
    ];
    for (const [args, message] of cases) {
      const r = await keysCli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message, args.join(' '));
    }
  });
});
