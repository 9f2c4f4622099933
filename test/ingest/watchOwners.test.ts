import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { watchLayout } from '../../src/ingest/watchClaims.js';
import { ALIVE, Owner, Peers } from '../../src/ingest/watchOwners.js';
import { tempDir } from '../helpers/fixtures.js';

test('owners: a live one of this host stays; one whose process is gone, or without heartbeat, is gone at once', async () => {
  const t = tempDir();
  try {
    const layout = watchLayout(t.dir);
    const me = await Owner.start(layout);
    const live = await Owner.start(layout);
    // A heartbeat written by a process of this host that has exited.
    const beat = JSON.parse(readFileSync(join(live.dir, ALIVE), 'utf8')) as { pid: number };
    const exited = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    mkdirSync(join(layout.claims, 'exited'));
    writeFileSync(join(layout.claims, 'exited', ALIVE), JSON.stringify({ ...beat, pid: Number(exited.stdout), beat: 0 }));
    mkdirSync(join(layout.claims, 'silent'));
    const peers = new Peers(layout, me.id, 30_000);
    assert.deepEqual((await peers.gone()).sort(), ['exited', 'silent']);
    // Its own folder and a live process's are never gone.
    assert.ok(!(await peers.gone()).includes(live.id));
    // Stopped with a claim it could not finish: its heartbeat goes, the claim stays for others.
    writeFileSync(join(live.dir, 'abc_1_2_X_2026112000.csv'), 'x');
    await live.release();
    assert.ok((await peers.gone()).includes(live.id));
    // Stopped with nothing left: the folder goes too.
    await me.release();
    assert.ok(!(await new Peers(layout, 'other', 30_000).gone()).includes(me.id));
  } finally {
    t.cleanup();
  }
});

test('owners on another host: gone once their heartbeat has not changed for the lease, on this host\'s clock', async () => {
  const t = tempDir();
  try {
    const layout = watchLayout(t.dir);
    const me = await Owner.start(layout);
    let now = 0;
    const peers = new Peers(layout, me.id, 30_000, () => now);
    const alive = join(layout.claims, 'far', ALIVE);
    mkdirSync(join(layout.claims, 'far'));
    const write = (n: number): void => writeFileSync(alive, JSON.stringify({ host: 'elsewhere', pid: 1, start: '1', beat: n }));
    write(0);
    assert.deepEqual(await peers.gone(), []);
    now = 29_000;
    assert.deepEqual(await peers.gone(), []);
    write(1); // a beat: the lease starts again
    assert.deepEqual(await peers.gone(), []);
    now = 58_000;
    assert.deepEqual(await peers.gone(), []);
    now = 59_001;
    assert.deepEqual(await peers.gone(), ['far']);
    // Taking over moves its claims and removes its folder.
    writeFileSync(join(layout.claims, 'far', 'abc_1_2_X_2026112000.csv'), 'x');
    assert.deepEqual(await peers.takeOver('far', me.dir), ['abc_1_2_X_2026112000.csv']);
    assert.equal(readFileSync(join(me.dir, 'abc_1_2_X_2026112000.csv'), 'utf8'), 'x');
    assert.deepEqual(await peers.gone(), []);
  } finally {
    t.cleanup();
  }
});
