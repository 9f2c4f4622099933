/**
 * Event streams of two serve processes over one PostgreSQL database: a client
 * of each hears a run ingested by the command line (a third process) within a
 * second, with the same events and the same ids; a client that leaves one
 * process and resumes on the other with its Last-Event-ID misses nothing and
 * gets nothing twice.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { serve, type Served } from '../helpers/cli.js';
import { FARMS, tempDir } from '../helpers/fixtures.js';
import { freshPgDatabase, pgTestOptions } from '../helpers/pg.js';
import { openStream, type SseEvent } from '../helpers/sse.js';
import { ingest } from '../events/support.js';
import { importFarms } from '../helpers/cli.js';

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
  await importFarms(db.url, dir, FARMS);
  [a, b] = await Promise.all([serve(['--db', db.url, '--workers', '1']), serve(['--db', db.url, '--workers', '1'])]);
});

after(async () => {
  if (options.skip) return;
  assert.equal(await a.stop(), 0, a.stderr());
  assert.equal(await b.stop(), 0, b.stderr());
  await db.drop();
  cleanupDir();
});

const rows = (events: readonly SseEvent[]): Array<[number, string, string]> => events.map((e) => [e.id, e.event, e.data]);

test('clients of two processes hear an ingest by the CLI within a second, with the same ids', options, async () => {
  const onA = await openStream(`${a.base}/api/v1/events`);
  const onB = await openStream(`${b.base}/api/v1/events`);
  await ingest(db.url, dir, [['WF_A', '2026112000'], ['PV_B', '2026112000']]);
  const t0 = performance.now();
  const two = (e: readonly SseEvent[]): boolean => e.filter((x) => x.event === 'run').length === 2 && e.some((x) => x.event === 'issue');
  const [heardA, heardB] = await Promise.all([onA.until(two, 3000), onB.until(two, 3000)]);
  for (const h of [heardA, heardB]) assert.ok(h.at(-1)!.at - t0 < 1000, `${Math.round(h.at(-1)!.at - t0)} ms after the ingest ended`);
  assert.deepEqual(rows(heardA), rows(heardB));

  // A client of A leaves, the run completes meanwhile, and it resumes on B from its last id.
  const last = heardA.at(-1)!.id;
  onA.close();
  await ingest(db.url, dir, [['WF_C', '2026112000']]);
  const done = (e: readonly SseEvent[]): boolean => e.some((x) => x.event === 'issue' && JSON.parse(x.data).status === 'complete');
  const all = await onB.until(done, 3000);
  const resumed = await openStream(`${b.base}/api/v1/events`, { 'last-event-id': String(last) });
  const missed = all.filter((e) => e.id > last);
  const got = await resumed.until((e) => e.length >= missed.length, 3000);
  assert.deepEqual(rows(got), rows(missed));
  // And on A, from the same id, the same.
  const onA2 = await openStream(`${a.base}/api/v1/events`, { 'last-event-id': String(last) });
  assert.deepEqual(rows(await onA2.until((e) => e.length >= missed.length, 3000)), rows(missed));
  for (const s of [onB, resumed, onA2]) {
    assert.deepEqual(s.parser.errors, []);
    s.close();
  }
});
