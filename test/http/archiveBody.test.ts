/**
 * The bulk download's body on a real store: runs are read ahead of the entry being rendered, the bytes are
 * those of reading one run at a time, and a failed read ends the stream with its error (never an
 * unhandled rejection of a read asked ahead); entries kept as copies on disk are read back, until one is
 * slower than rendering.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Readable } from 'node:stream';
import { DiskRing } from '../../src/cache/diskRing.js';
import { archiveBody, READ_AHEAD, type EntryCopies } from '../../src/http/archiveBody.js';
import { BodyCache, type BodyCopyMeta } from '../../src/http/bodyCache.js';
import { planArchive, type ArchivePlan } from '../../src/query/archivePlan.js';
import { EVERY_SITE } from '../../src/query/scope.js';
import type { Store } from '../../src/store/store.js';
import { seed, tempDir, testStore, type FarmFixture } from '../helpers/fixtures.js';

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

/** A bulk download's entries found and kept in a body cache whose copies on disk are in the given ring. */
async function copiesIn(ring: DiskRing<BodyCopyMeta>): Promise<{ copies: EntryCopies; bodies: BodyCache }> {
  const bodies = new BodyCache(0, ring);
  const farms = new Map((await store.listFarms(0, 100)).items.map((f) => [f.farmId, f]));
  const copies: EntryCopies = {
    entry: (key) => bodies.entry(key),
    keepEntry: (key, bytes, crc) => bodies.keepEntry(key, bytes, crc),
    farm: (farmId) => farms.get(farmId),
  };
  return { copies, bodies };
}

test('entries kept as copies are read back; once a copy comes from the disk, the rest are rendered; the same bytes', async () => {
  const tmp = tempDir('forecastd-entries-');
  const rendered = await drain(archiveBody(store, plan));
  // No read counts as one from the disk, however long the machine takes.
  const fast = await copiesIn(new DiskRing<BodyCopyMeta>({ dir: tmp.dir, capacityBytes: 8 << 20, slowReadMs: 60_000 }));
  // Every read counts as one from the disk, and none sends the next to libuv's threads.
  let diskReads = 0;
  const slow = await copiesIn(
    new DiskRing<BodyCopyMeta>({ dir: tmp.dir, capacityBytes: 8 << 20, slowReadMs: -1, coolMs: 0, diskReads: () => diskReads++ }),
  );
  try {
    for (const { copies, bodies } of [fast, slow]) {
      assert.ok((await drain(archiveBody(store, plan, copies))).equals(rendered), 'rendered and kept');
      await bodies.diskSettled();
      assert.ok(bodies.diskStats()!.bytes > 0, 'entries kept');
      assert.ok((await drain(archiveBody(store, plan, copies))).equals(rendered), 'read back');
    }
    assert.equal(fast.bodies.diskStats()!.counts.syncReads, SITES.length, 'every entry read back');
    assert.equal(slow.bodies.diskStats()!.counts.syncReads, 1, 'the first entry read back, the rest rendered');
  } finally {
    await fast.bodies.close();
    await slow.bodies.close();
    tmp.cleanup();
  }
});
