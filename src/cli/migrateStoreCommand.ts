/**
 * forecastd migrate-store --from URL --to URL: copies every site and every run
 * (its encoded blob as it is, and its publication time) from one store to
 * another, then reads each run back from the destination and prints one line
 * per (site, run) with the checksum of both sides.
 */
import { createHash } from 'node:crypto';
import { openStore } from '../store/openStore.js';
import { runKey, type EncodedRun, type RunKey, type Store } from '../store/store.js';
import { resolveSettings, type SettingsInput } from '../settings/resolve.js';
import { UsageError } from './usage.js';

const PAGE = 200;

const checksum = (blob: Uint8Array): string => createHash('sha256').update(blob).digest('hex');
const keyOf = (k: RunKey): string => runKey(k.farmId, k.issue);
/** Byte order of (farm_id, issue), the order exportRuns pages in. */
const compareKeys = (a: RunKey, b: RunKey): number => Buffer.compare(Buffer.from(keyOf(a)), Buffer.from(keyOf(b)));

/** The destination's runs after `after` up to and including `last` (it may hold others in between). */
async function readBack(to: Store, after: RunKey | undefined, last: RunKey): Promise<Map<string, EncodedRun>> {
  const found = new Map<string, EncodedRun>();
  let cursor = after;
  for (;;) {
    const chunk = await to.exportRuns(cursor, PAGE);
    for (const r of chunk) if (compareKeys(r, last) <= 0) found.set(keyOf(r), r);
    if (chunk.length === 0 || compareKeys(chunk[chunk.length - 1]!, last) >= 0) return found;
    cursor = chunk[chunk.length - 1];
  }
}

async function copyFarms(from: Store, to: Store): Promise<number> {
  let copied = 0;
  for (let offset = 0; ; offset += 10_000) {
    const { items } = await from.listFarms(offset, 10_000);
    if (items.length === 0) return copied;
    await to.upsertFarms(items);
    copied += items.length;
  }
}

export async function migrateStoreCommand(args: string[], input: SettingsInput): Promise<number> {
  const settings = resolveSettings('migrate-store', args, input);
  const fromUrl = settings.value('from');
  const toUrl = settings.value('to');
  if (fromUrl === undefined || toUrl === undefined) throw new UsageError('migrate-store needs --from URL and --to URL', 'migrate-store');
  if (fromUrl === toUrl) throw settings.error('to', 'names the same store as from');
  const from = await openStore(fromUrl, { existing: true });
  let to: Store;
  try {
    to = await openStore(toUrl);
  } catch (err) {
    await from.close();
    throw err;
  }
  try {
    const farms = await copyFarms(from, to);
    const total = await from.countRuns();
    process.stderr.write(`migrate-store: ${farms} sites copied; copying ${total} runs\n`);
    let copied = 0;
    let mismatches = 0;
    let lastReport = Date.now();
    let after: RunKey | undefined;
    for (;;) {
      const page = await from.exportRuns(after, PAGE);
      if (page.length === 0) break;
      for (const run of page) await to.importRun(run);
      const back = await readBack(to, after, page[page.length - 1]!);
      for (const src of page) {
        const dst = back.get(keyOf(src));
        const a = checksum(src.blob);
        const b = dst ? checksum(dst.blob) : 'missing';
        if (a !== b) mismatches++;
        process.stdout.write(`${src.farmId} ${src.issue} from ${a} to ${b}${a === b ? '' : ' MISMATCH'}\n`);
      }
      copied += page.length;
      after = page[page.length - 1];
      if (Date.now() - lastReport >= 1000) {
        lastReport = Date.now();
        process.stderr.write(`migrate-store: ${copied}/${total} runs copied\n`);
      }
    }
    process.stderr.write(`migrate-store: done: ${farms} sites, ${copied} runs, ${mismatches} checksum mismatches\n`);
    return mismatches > 0 ? 1 : 0;
  } finally {
    await from.close();
    await to.close();
  }
}
