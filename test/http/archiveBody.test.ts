/**
 * The bulk download's body on a real store: runs are read ahead of the entry being rendered, the bytes are
 * those of reading one run at a time, and a failed read ends the stream with its error (never an
 * unhandled rejection of a read asked ahead).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Readable } from 'node:stream';
import { archiveBody, READ_AHEAD } from '../../src/http/archiveBody.js';
import { planArchive, type ArchivePlan } from '../../src/query/archivePlan.js';
import { EVERY_SITE } from '../../src/query/scope.js';
import type { Store } from '../../src/store/store.js';
import { seed, testStore, type FarmFixture } from '../helpers/fixtures.js';

const ISSUE = '2026112000';
const SITES: FarmFixture[] = Array.from({ length: 3 * READ_AHEAD }, (_, i) => ({ farmId: `WF_${i}`, lat: 40 + i / 10, lon: 95 + i / 10, name: `Wind ${i}` }));

let store: Store;
let cleanup: () => Promise<void>;
let plan: ArchivePlan;

before(async () => {
  ({ store, cleanup } = await testStore());
  await seed(store, SITES.map((s) => ({ farmId: s.farmId, issue: ISSUE })), SITES);
  plan = await planArchive(store, { issue: ISSUE }, EVERY_SITE);
});
after(() => cleanup());

async function drain(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The store with its run reads replaced by `read` (every other method its own). */
function withReads(read: Store['getRun']): Store {
  return new Proxy(store, { get: (target, key) => (key === 'getRun' ? read : Reflect.get(target, key)) });
}

test('runs are read ahead of the entry being written, and the archive is the same as read one at a time', async () => {
  let inFlight = 0;
  let most = 0;
  const asked: string[] = [];
  const ahead = withReads(async (farmId, issue) => {
    asked.push(farmId);
    most = Math.max(most, ++inFlight);
    try {
      return await store.getRun(farmId, issue);
    } finally {
      inFlight--;
    }
  });
  const body = await drain(archiveBody(ahead, plan));
  assert.equal(most, READ_AHEAD);
  assert.deepEqual(asked, plan.runs.map((r) => r.farmId), 'each run read once, in the archive order');
  // Reads that cannot overlap give the same archive.
  let previous: Promise<unknown> = Promise.resolve();
  const oneAtATime = withReads((farmId, issue) => {
    const read = previous.then(() => store.getRun(farmId, issue));
    previous = read.catch(() => undefined);
    return read;
  });
  assert.ok(body.equals(await drain(archiveBody(oneAtATime, plan))));
});

test('a failed read ends the archive with its error; the reads asked ahead of it are not unhandled rejections', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const failing = SITES[2]!.farmId;
    const broken = withReads(async (farmId, issue) => {
      // Every read after the failing one fails too, before the archive gets to await it.
      if (farmId >= failing) throw new Error(`store unavailable reading ${farmId}`);
      return store.getRun(farmId, issue);
    });
    await assert.rejects(drain(archiveBody(broken, plan)), /store unavailable reading WF_2\b/);
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});
