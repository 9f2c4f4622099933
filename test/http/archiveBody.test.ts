/**
 * The bulk download's body on a real store: runs are read ahead of the entry being rendered, the bytes are
 * those of reading one run at a time, and a failed read ends the stream with its error (never an
 * unhandled rejection of a read asked ahead); entries kept as copies on disk are read back, until one is
 * slower than rendering; entries' buffers are reused once the socket and the disk write have taken them,
 * never before, also over a real port to a client that reads slowly.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createServer, get as httpGet, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DiskRing } from '../../src/cache/diskRing.js';
import { archiveParts, READ_AHEAD, REFILL_BELOW, SEND_QUEUE_BYTES, sendArchive, startingWith, type ArchivePart, type EntryCopies } from '../../src/http/archiveBody.js';
import { BufferPool, type Lease } from '../../src/http/bufferPool.js';
import { BodyCache, type BodyCopyMeta } from '../../src/http/bodyCache.js';
import { planArchive, type ArchivePlan } from '../../src/query/archivePlan.js';
import { EVERY_SITE } from '../../src/query/scope.js';
import type { Store, StoredRun } from '../../src/store/store.js';
import { openSeries } from '../../src/domain/codec.js';
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

/** The archive's bytes, each part copied and handed back as a socket would take it. */
async function drain(parts: AsyncIterable<ArchivePart>): Promise<Buffer> {
  return (await drainParts(parts)).archive;
}

/** The archive, and the bytes of its entries: the parts come as each entry's header then its data, then the directory. */
async function drainParts(parts: AsyncIterable<ArchivePart>): Promise<{ archive: Buffer; entryBytes: number }> {
  const chunks: Buffer[] = [];
  for await (const part of parts) {
    chunks.push(Buffer.from(part.bytes));
    part.release();
  }
  const entryBytes = chunks.slice(0, -1).reduce((sum, c, i) => sum + (i % 2 === 1 ? c.length : 0), 0);
  return { archive: Buffer.concat(chunks), entryBytes };
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
  const body = await drain(archiveParts(ahead, plan));
  assert.equal(most, READ_AHEAD);
  assert.deepEqual(asked, plan.runs.map((r) => r.farmId), 'each run read once, in the archive order');
  // Reads that cannot overlap give the same archive.
  let previous: Promise<unknown> = Promise.resolve();
  const oneAtATime = withReads((farmId, issue) => {
    const read = previous.then(() => store.getRun(farmId, issue));
    previous = read.catch(() => undefined);
    return read;
  });
  assert.ok(body.equals(await drain(archiveParts(oneAtATime, plan))));
});

test('runs are asked for in groups, so that the store reads each group together', async () => {
  // Reads asked for in one synchronous stretch form a group; the store's read thread takes a turn's reads in one hand-over.
  const groups: number[] = [];
  let current = 0;
  const grouped = withReads((farmId, issue) => {
    if (current++ === 0) queueMicrotask(() => (groups.push(current), (current = 0)));
    return store.getRun(farmId, issue);
  });
  await drain(archiveParts(grouped, plan));
  assert.equal(groups.reduce((a, b) => a + b, 0), plan.runs.length);
  assert.equal(groups[0], READ_AHEAD, 'the first group fills the read-ahead');
  for (const g of groups.slice(1, -1)) assert.ok(g >= READ_AHEAD - REFILL_BELOW, `groups of ${groups.join(', ')}`);
  assert.ok(groups.length <= 1 + Math.ceil((plan.runs.length - READ_AHEAD) / (READ_AHEAD - REFILL_BELOW)), `groups of ${groups.join(', ')}`);
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
    await assert.rejects(drain(archiveParts(broken, plan)), /store unavailable reading WF_2\b/);
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
    run: () => undefined,
    pool: bodies.pool,
  };
  return { copies, bodies };
}

test('entries kept as copies are read back; once a copy comes from the disk, the rest are rendered; the same bytes', async () => {
  const tmp = tempDir('forecastd-entries-');
  const { archive: rendered, entryBytes } = await drainParts(archiveParts(store, plan));
  // No read counts as one from the disk, however long the machine takes.
  const fast = await copiesIn(new DiskRing<BodyCopyMeta>({ dir: tmp.dir, capacityBytes: 64 << 20, slowReadMs: 60_000 }));
  // Every read counts as one from the disk, and none sends the next to libuv's threads.
  let diskReads = 0;
  const slow = await copiesIn(
    new DiskRing<BodyCopyMeta>({ dir: tmp.dir, capacityBytes: 64 << 20, slowReadMs: -1, coolMs: 0, diskReads: () => diskReads++ }),
  );
  try {
    for (const { copies, bodies } of [fast, slow]) {
      assert.ok((await drain(archiveParts(store, plan, copies))).equals(rendered), 'rendered and kept');
      // Rendered entries are leased from the rendered answers' pool, which read-back entries come from too;
      // kept before the socket takes them, each goes back as soon as it has, for the next entry.
      assert.ok(bodies.pool.made > 0 && bodies.pool.made <= 2, `${bodies.pool.made} buffers made`);
      // Written as they were kept: readable without waiting for any write.
      assert.equal(bodies.diskStats()!.bytes, entryBytes, 'every entry kept');
      assert.ok((await drain(archiveParts(store, plan, copies))).equals(rendered), 'read back');
    }
    assert.equal(fast.bodies.diskStats()!.counts.syncReads, SITES.length, 'every entry read back');
    assert.equal(slow.bodies.diskStats()!.counts.syncReads, 1, 'the first entry read back, the rest rendered');
  } finally {
    await fast.bodies.close();
    await slow.bodies.close();
    tmp.cleanup();
  }
});

test("entries' buffers go back to the pool once taken and are reused, so an archive makes only a few", async () => {
  const pool = new BufferPool();
  const rendered = await drain(archiveParts(store, plan));
  assert.ok((await drain(archiveParts(store, plan, undefined, pool))).equals(rendered));
  assert.ok(pool.made <= 2, `${pool.made} buffers made for ${SITES.length} entries`);
});

test('an entry is kept whole, as it is sent, before its buffer is reused for the next', async () => {
  const pool = new BufferPool();
  const farms = new Map((await store.listFarms(0, 100)).items.map((f) => [f.farmId, f]));
  // What a kept copy would hold: the bytes as they are when keepEntry is called.
  const kept = new Map<string, Buffer>();
  const copies: EntryCopies = {
    entry: () => undefined,
    keepEntry: (key, bytes) => void kept.set(key, Buffer.from(bytes)),
    farm: (farmId) => farms.get(farmId),
    run: () => undefined,
    pool,
  };
  const archive = await drain(archiveParts(store, plan, copies));
  assert.ok(archive.equals(await drain(archiveParts(store, plan))));
  assert.equal(kept.size, SITES.length);
  const entries = [...kept.values()];
  // Each kept copy is one whole entry of the archive, in order.
  let at = 0;
  for (const copy of entries) {
    at = archive.indexOf(copy, at);
    assert.ok(at >= 0, 'a kept copy is not an entry of the archive');
    at += copy.length;
  }
  assert.ok(pool.made <= 2, `${pool.made} buffers made for ${SITES.length} kept entries`);
});

/**
 * A real server sending `parts` with sendArchive to one client over a real port: `read` gets the client's
 * response; the server is closed after it, whatever it did.
 */
async function overPort(parts: () => AsyncGenerator<ArchivePart>, read: (res: IncomingMessage) => Promise<void>): Promise<void> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    void sendArchive(parts(), res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address() as AddressInfo;
    await read(await new Promise<IncomingMessage>((r) => httpGet(`http://127.0.0.1:${port}/`, r)));
  } finally {
    await new Promise((r) => server.close(r));
  }
}

test('over a real port, a client that reads slowly gets every byte as written while buffers are reused', async () => {
  const pool = new BufferPool();
  const PARTS = 400;
  const SIZE = 64 * 1024;
  // Each part filled with its own number: a buffer reused before the socket took it shows as a wrong byte.
  async function* numbered(): AsyncGenerator<ArchivePart> {
    for (let i = 0; i < PARTS; i++) {
      const lease = pool.lease(SIZE);
      lease.bytes.fill(i & 0xff);
      yield lease;
    }
  }
  await overPort(numbered, async (res) => {
    // Not read for a while: the socket's buffers fill and the writer waits for them to drain.
    res.pause();
    await new Promise((r) => setTimeout(r, 300));
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    assert.equal(body.length, PARTS * SIZE);
    for (let i = 0; i < PARTS; i++) {
      const part = body.subarray(i * SIZE, (i + 1) * SIZE);
      assert.equal(part.indexOf((i & 0xff) ^ 1), -1, `part ${i} holds another part's bytes`);
      assert.ok(part.every((b) => b === (i & 0xff)), `part ${i} holds another part's bytes`);
    }
  });
  assert.ok(pool.made < PARTS / 4, `${pool.made} buffers made for ${PARTS} parts`);
});

test('over a real port, parts are queued for the socket together up to SEND_QUEUE_BYTES, never much more', async () => {
  const SIZE = 64 * 1024;
  const PARTS = (3 * SEND_QUEUE_BYTES) / SIZE;
  // Bytes pulled from the archive and not yet handed back: queued for the socket or in the kernel's hands.
  let queued = 0;
  let most = 0;
  async function* parts(): AsyncGenerator<ArchivePart> {
    for (let i = 0; i < PARTS; i++) {
      queued += SIZE;
      most = Math.max(most, queued);
      yield { bytes: Buffer.alloc(SIZE, i & 0xff), release: () => (queued -= SIZE) };
    }
  }
  await overPort(parts, async (res) => {
    let length = 0;
    for await (const chunk of res) length += (chunk as Buffer).length;
    assert.equal(length, PARTS * SIZE);
  });
  assert.equal(queued, 0, 'every part handed back');
  // Waiting after each part past the stream's 16 KB mark would hold one part at a time: a write per part.
  assert.ok(most >= SEND_QUEUE_BYTES / 2, `at most ${most} bytes queued at once`);
  assert.ok(most <= SEND_QUEUE_BYTES + SIZE, `${most} bytes queued at once`);
});

test('a client that leaves stops the archive, and every part pulled is handed back', async () => {
  let pulled = 0;
  let released = 0;
  async function* endless(): AsyncGenerator<ArchivePart> {
    for (;;) {
      pulled++;
      yield { bytes: Buffer.alloc(256 * 1024, 7), release: () => void released++ };
    }
  }
  let sent: Promise<void> | undefined;
  const server = createServer((_req, res) => {
    res.writeHead(200);
    sent = sendArchive(endless(), res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address() as AddressInfo;
    const res = await new Promise<IncomingMessage>((r) => httpGet(`http://127.0.0.1:${port}/`, r));
    await new Promise((r) => res.once('data', r));
    res.destroy();
    await sent;
    assert.ok(pulled > 0 && pulled < 1000, `${pulled} parts pulled`);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(released, pulled, 'every part pulled handed back');
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

const NOTHING = (): void => undefined;

test('an archive whose first part was taken ahead, stopped at its first part, stops the rest too', async () => {
  let stopped = 0;
  async function* parts(): AsyncGenerator<ArchivePart> {
    try {
      for (let i = 0; i < 3; i++) yield { bytes: Buffer.alloc(8, i), release: NOTHING };
    } finally {
      // Where archiveParts hands back the runs it read ahead.
      stopped++;
    }
  }
  // Left after the first part (a client gone before the second was asked for).
  const rest = parts();
  const early = startingWith(await rest.next(), rest);
  assert.deepEqual((await early.next()).value?.bytes, Buffer.alloc(8, 0));
  await early.return(undefined);
  assert.equal(stopped, 1, 'the rest stopped');
  // Read to its end: the parts in order, the rest stopped once.
  const whole = parts();
  const all: number[] = [];
  for await (const part of startingWith(await whole.next(), whole)) all.push(part.bytes[0]!);
  assert.deepEqual(all, [0, 1, 2]);
  assert.equal(stopped, 2);
});

/** A pool that counts its leases not yet handed back. */
class CountingPool extends BufferPool {
  out = 0;
  most = 0;
  override lease(len: number): Lease {
    const lease = super.lease(len);
    this.most = Math.max(this.most, ++this.out);
    let released = false;
    return {
      bytes: lease.bytes,
      release: () => {
        if (!released) this.out--;
        released = true;
        lease.release();
      },
    };
  }
}

test('runs the server holds in the planned revision are used instead of store reads, the rest read from the store; the same archive, every buffer handed back', async () => {
  const expected = await drain(archiveParts(store, plan));
  const held = new Map<string, StoredRun>();
  for (const v of plan.runs) held.set(v.farmId, (await store.getRun(v.farmId, ISSUE))!);
  // The server holds another version of this one: undefined, as the read model answers then.
  const other = plan.runs[1]!.farmId;
  const storeReads: string[] = [];
  const askedRevisions: number[] = [];
  const pool = new CountingPool();
  const copies: EntryCopies = {
    entry: () => undefined,
    keepEntry: () => undefined,
    farm: () => undefined,
    pool,
    run: (farmId, issue, revision, into) => {
      askedRevisions.push(revision);
      const run = held.get(farmId)!;
      if (farmId === other || issue !== ISSUE || run.revision !== revision) return undefined;
      const blob = run.view.encoded!;
      const bytes = into(blob.length);
      bytes.set(blob);
      return { ...run, view: openSeries(bytes) };
    },
  };
  const reads = withReads(async (farmId, issue) => {
    storeReads.push(farmId);
    return store.getRun(farmId, issue);
  });
  const body = await drain(archiveParts(reads, plan, copies));
  assert.ok(body.equals(expected), 'the same bytes as read from the store');
  assert.deepEqual(storeReads, [other]);
  assert.deepEqual(askedRevisions, plan.runs.map((r) => r.revision), 'each asked in its planned revision');
  assert.equal(pool.out, 0, 'every run and entry buffer handed back');
  assert.ok(pool.most <= READ_AHEAD + 3, `at most ${pool.most} buffers out at once`);
});
