/**
 * A client that stops reading is disconnected once what is queued for it
 * passes the bound, and meanwhile a client that reads gets every event
 * promptly: one slow client holds no memory beyond the bound and slows no one.
 *
 * The kernel takes several MB of a socket's answer before anything queues in
 * the process, some 20,000 events: they are written into the SQLite log in
 * bulk, as putRun would append them one by one (a real publication follows).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { openStore } from '../../src/store/openStore.js';
import type { Store } from '../../src/store/store.js';
import { tempDir } from '../helpers/fixtures.js';
import { openStream } from '../helpers/sse.js';
import { listen, publish, sleep } from './support.js';

let store: Store;
let writer: Store;
let bulk: Database.Database;
let cleanup: () => void;
let app: FastifyInstance;
let base = '';
/** The longest farm_id there may be: the longest events. */
const FARM = 'F'.repeat(64);
/** The default bound: batches of a thousand entries (about 250 kB here) come well within it. */
const BOUND = 1 << 20;
/**
 * Entries appended per round: one batch of the hub's. Rounds of four batches (1 MB) once took 1.9 s to reach
 * the reader on a core shared with parallel tests, all of it this process's own work on the four.
 */
const BATCH = 1000;

before(async () => {
  const t = tempDir();
  cleanup = t.cleanup;
  const file = join(t.dir, 'store.db');
  store = await openStore(`sqlite:${file}`);
  await store.upsertFarms([{ farmId: FARM, lat: 40, lon: 95, name: 'Long', extra: [] }]);
  writer = await openStore(`sqlite:${file}`);
  bulk = new Database(file);
  ({ app, base } = await listen(store, { access: { auth: 'off' }, events: { bufferBytes: BOUND } }));
});

after(async () => {
  await app?.close();
  await writer?.close();
  bulk?.close();
  cleanup?.();
});

/** A value of this process's metrics. */
async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

test('a client that never reads is dropped while a reader gets every event at once', async () => {
  const reader = await openStream(`${base}/api/v1/events`);
  // A client that sends its request and never reads a byte of the answer.
  const slow = net.connect(Number(new URL(base).port), '127.0.0.1');
  slow.on('error', () => undefined);
  await new Promise((r) => slow.once('connect', r));
  slow.write('GET /api/v1/events HTTP/1.1\r\nHost: x\r\n\r\n');
  await sleep(100);
  assert.equal(await metric('forecastd_sse_clients'), 2);

  // What putRun appends: a run entry per publication (replacements of one site's run here).
  const append = bulk.prepare(`INSERT INTO events (kind, farm_id, issue, revision, at) VALUES ('run', ?, ?, ?, ?)`);
  const appendMany = bulk.transaction((n: number, from: number) => {
    for (let i = 0; i < n; i++) append.run(FARM, '2026112000', from + i, Date.now());
  });
  // The first publication through the store, so that the run is known to hold data.
  await publish(writer, FARM, '2026112000');
  let published = 1;
  await reader.until((e) => e.length === 2);
  let delays: number[] = [];
  // Each round appends a batch, then waits for the reader to have it all: how long that takes is the delay
  // a slow client would add if it could.
  while ((await metric('forecastd_sse_dropped_total')) === 0) {
    assert.ok(published < 100_000, 'the slow client was never dropped');
    const t0 = performance.now();
    appendMany(BATCH, 1000 + published);
    published += BATCH;
    const events = await reader.until((e) => e.filter((x) => x.event === 'run').length === published, 3000);
    delays.push(events.at(-1)!.at - t0);
  }
  assert.equal(await metric('forecastd_sse_clients'), 1, 'the slow client is gone, the reader stays');
  // A few more after the drop: the reader goes on.
  for (let i = 0; i < 50; i++) await publish(writer, FARM, '2026112000');
  published += 50;
  await reader.until((e) => e.filter((x) => x.event === 'run').length === published, 3000);
  assert.deepEqual(reader.parser.errors, []);
  const runs = reader.parser.events.filter((e) => e.event === 'run');
  assert.equal(new Set(runs.map((e) => e.id)).size, published, 'every event once');
  delays = delays.sort((a, b) => a - b);
  // A batch is read by the next poll (300 ms) and written at once: well within a second, drop or not.
  assert.ok(delays.at(-1)! < 1000, `a batch reached the reader ${Math.round(delays.at(-1)!)} ms after it was committed`);
  reader.close();
  slow.destroy();
});
