/**
 * Two serve processes over one PostgreSQL database: a run ingested through the
 * command line is served by both within 1 s of the commit, and a replaced run
 * is served new by both.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { importFarms, runCli, serve, type Served } from '../helpers/cli.js';
import { cellValue, runCsv, tempDir } from '../helpers/fixtures.js';
import { freshPgDatabase, pgTestOptions } from '../helpers/pg.js';

const options = await pgTestOptions();
let db: Awaited<ReturnType<typeof freshPgDatabase>>;
let dir: string;
let cleanupDir: () => void;
let a: Served;
let b: Served;

before(async () => {
  if (options.skip) return;
  db = await freshPgDatabase();
  ({ dir, cleanup: cleanupDir } = tempDir());
  await importFarms(db.url, dir);
  [a, b] = await Promise.all([serve(['--db', db.url, '--workers', '1']), serve(['--db', db.url, '--workers', '1'])]);
});
after(async () => {
  if (options.skip) return;
  assert.equal(await a.stop(), 0, a.stderr());
  assert.equal(await b.stop(), 0, b.stderr());
  await db.drop();
  cleanupDir();
});

/** Polls a server until the first record's t2m is `want`; returns how long after `since` it was seen. */
async function seenWithin(s: Served, want: number, since: number): Promise<number> {
  for (;;) {
    const res = await fetch(`${s.base}/api/v1/forecast?farm_id=WF_A&size=1&elements=t2m`);
    if (res.status === 200) {
      const body = (await res.json()) as { data: { items: { t2m: number }[] } };
      if (body.data.items[0]?.t2m === want) return performance.now() - since;
    }
    if (performance.now() - since > 5000) return Infinity;
    await sleep(20);
  }
}

test('an ingest through the CLI is served by both processes within 1 s; a replacement too', options, async () => {
  // Both processes have answered (and cached) before the run exists.
  for (const s of [a, b]) assert.equal((await fetch(`${s.base}/api/v1/forecast?farm_id=WF_A`)).status, 404);

  writeFileSync(join(dir, 'WF_A_2026112000.csv'), runCsv('2026112000'));
  let r = await runCli(['ingest', join(dir, 'WF_A_2026112000.csv'), '--db', db.url]);
  assert.equal(r.code, 0, r.stderr);
  let committed = performance.now();
  const first = cellValue('2026112000', 0, 0);
  for (const s of [a, b]) assert.ok((await seenWithin(s, first, committed)) < 1000, 'served within 1 s');

  // Replace the run with other values while both serve (and cache) the old one.
  writeFileSync(join(dir, 'WF_A_2026112000.csv'), runCsv('2026112000', { value: (k, e) => 1000 + k + e }));
  r = await runCli(['ingest', join(dir, 'WF_A_2026112000.csv'), '--db', db.url]);
  assert.equal(r.code, 0, r.stderr);
  committed = performance.now();
  for (const s of [a, b]) assert.ok((await seenWithin(s, 1000, committed)) < 1000, 'new values within 1 s');
});
