/**
 * npm run bench:ring: what a read of a record from a copies ring (cache/diskRing.ts) costs from the OS's
 * page cache, against the same reads of files laid out two other ways, in alternating rounds on one core:
 *  - ring: 20,000 records of 14.7 KB (a run of 15 fields) put into a DiskRing made with `prefill`, read back by
 *    readNow();
 *  - records: a plain file written a record at a time, as the ring wrote before it zero-filled ahead;
 *  - ceiling: a plain file written 1 MB at a time, whose pages the OS holds in the largest folios.
 * Each read is a random record, found by its key in a map of 20,000, into a buffer already in use; ns per
 * read, medians of the rounds.
 * BENCH_RECORDS (20000), BENCH_RECORD_BYTES (14700), BENCH_READS (100000) per round.
 */
import { closeSync, mkdirSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DiskRing } from '../src/cache/diskRing.js';
import { BENCH_DIR } from './lib/benchStore.js';
import { median } from './lib/wrk.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 20_000);
const SIZE = Number(process.env.BENCH_RECORD_BYTES ?? 14_700);
const READS = Number(process.env.BENCH_READS ?? 100_000);
const ROUNDS = 3;
const dir = join(BENCH_DIR, 'ring');
mkdirSync(dir, { recursive: true });

const record = Buffer.alloc(SIZE);
const into = Buffer.alloc(SIZE);

/** A plain file of RECORDS records, written `chunk` bytes at a time. */
function plainFile(name: string, chunk: number): number {
  const path = join(dir, name);
  const fd = openSync(path, 'w+');
  rmSync(path);
  const buf = Buffer.alloc(chunk, 7);
  const total = RECORDS * SIZE;
  for (let at = 0; at < total; at += chunk) writeSync(fd, buf, 0, Math.min(chunk, total - at), at);
  return fd;
}

const ring = new DiskRing<number>({ dir, capacityBytes: Math.ceil((RECORDS * SIZE) / (1 << 20) + 1) << 20, prefill: true });
for (let i = 0; i < RECORDS; i++) {
  record.fill(i & 0xff);
  ring.putNow(`r${i}`, record, i);
}
const records = plainFile('records', SIZE);
const ceiling = plainFile('ceiling', 1 << 20);
const keys = Array.from({ length: RECORDS }, (_, i) => `r${i}`);
// The plain files' records are found by key too, as the ring finds its own: only the file's layout differs.
const offsets = new Map(keys.map((k, i) => [k, i * SIZE]));

let seed = 11;
const random = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % RECORDS;

function timed(read: (i: number) => void): number {
  for (let k = 0; k < READS / 10; k++) read(random());
  const t0 = process.hrtime.bigint();
  for (let k = 0; k < READS; k++) read(random());
  return Number(process.hrtime.bigint() - t0) / READS;
}

const ways: Record<string, (i: number) => void> = {
  ring: (i) => {
    const r = ring.readNow(keys[i]!, () => into);
    if (r === undefined || into[0] !== (i & 0xff)) throw new Error(`record ${i} did not read back`);
  },
  records: (i) => void readSync(records, into, 0, SIZE, offsets.get(keys[i]!)!),
  ceiling: (i) => void readSync(ceiling, into, 0, SIZE, offsets.get(keys[i]!)!),
};
const results: Record<string, number[]> = { ring: [], records: [], ceiling: [] };
for (let round = 1; round <= ROUNDS; round++) {
  const order = round % 2 === 1 ? Object.keys(ways) : Object.keys(ways).reverse();
  for (const way of order) results[way]!.push(timed(ways[way]!));
  process.stderr.write(`round ${round}: ${Object.entries(results).map(([w, r]) => `${w} ${r.at(-1)!.toFixed(0)} ns`).join(', ')}\n`);
}
const m = (w: string): number => median(results[w]!);
console.log(`\nrandom reads of ${RECORDS} records of ${SIZE} bytes from the page cache, ${ROUNDS} alternating rounds of ${READS} (medians)`);
console.log(`ring (zero-filled ahead)      ${m('ring').toFixed(0)} ns per read`);
console.log(`written a record at a time    ${m('records').toFixed(0)} ns per read`);
console.log(`written 1 MB at a time        ${m('ceiling').toFixed(0)} ns per read (ceiling)`);
console.log(`ring ÷ ceiling ${(m('ring') / m('ceiling')).toFixed(2)}, records ÷ ceiling ${(m('records') / m('ceiling')).toFixed(2)}`);
await ring.close();
closeSync(records);
closeSync(ceiling);
