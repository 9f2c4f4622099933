/**
 * serve --read-db: reads go to the replica, writes (ingest) to the primary, and
 * a replica that lags is tolerated: a run appears once the replica has it.
 * The "replica" here is a second database that the test fills itself, which
 * lets it control the lag exactly.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCli, serve } from '../helpers/cli.js';
import { farmsCsv, runCsv, tempDir } from '../helpers/fixtures.js';
import { freshPgDatabase, pgTestOptions } from '../helpers/pg.js';

const options = await pgTestOptions();
let primary: Awaited<ReturnType<typeof freshPgDatabase>>;
let replica: Awaited<ReturnType<typeof freshPgDatabase>>;
let dir: string;
let cleanup: () => void;

before(async () => {
  ({ dir, cleanup } = tempDir());
  if (options.skip) return;
  [primary, replica] = await Promise.all([freshPgDatabase(), freshPgDatabase()]);
});
after(async () => {
  cleanup();
  if (options.skip) return;
  await primary.drop();
  await replica.drop();
});

test('reads come from the replica; a lagging run appears once the replica has it', options, async () => {
  writeFileSync(join(dir, 'farms.csv'), farmsCsv());
  for (const db of [primary, replica]) {
    const r = await runCli(['farms', 'import', join(dir, 'farms.csv'), '--db', db.url]);
    assert.equal(r.code, 0, r.stderr);
  }
  const s = await serve(['--db', primary.url, '--read-db', replica.url, '--workers', '1']);
  try {
    writeFileSync(join(dir, 'WF_A_2026112000.csv'), runCsv('2026112000'));
    const ing = await runCli(['ingest', join(dir, 'WF_A_2026112000.csv'), '--db', primary.url]);
    assert.equal(ing.code, 0, ing.stderr);
    // The primary has it; the replica does not yet, and the server reads the replica.
    await sleep(1200);
    assert.equal((await fetch(`${s.base}/api/v1/forecast?farm_id=WF_A`)).status, 404);
    assert.equal(((await (await fetch(`${s.base}/api/v1/forecast/issues`)).json()) as { data: { total: number } }).data.total, 0);

    // The replica catches up.
    const copy = await runCli(['migrate-store', '--from', primary.url, '--to', replica.url]);
    assert.equal(copy.code, 0, copy.stderr);
    const caughtUp = performance.now();
    let status = 0;
    while (performance.now() - caughtUp < 3000) {
      status = (await fetch(`${s.base}/api/v1/forecast?farm_id=WF_A`)).status;
      if (status === 200) break;
      await sleep(50);
    }
    assert.equal(status, 200, 'served once the replica has the run');
    assert.ok(performance.now() - caughtUp < 2000, 'within the poll interval');
  } finally {
    assert.equal(await s.stop(), 0, s.stderr());
  }
});
