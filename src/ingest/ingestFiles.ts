/**
 * Ingest: CSV files -> validated runs -> store. Each file is taken whole or not
 * at all; a rejected file does not stop the others.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { MAX_FARMS_FILE_BYTES } from '../domain/limits.js';
import { UnknownFarmError, type Store } from '../store/store.js';
import { FaultError, printableName, type Fault } from './fault.js';
import { readInputFile } from './fileBytes.js';
import { FileReaders } from './fileReaders.js';
import { prepareRunFile, type PreparedFile } from './preparedFile.js';
import { readFarmsCsv } from './farmsCsv.js';

export interface Accepted {
  readonly file: string;
  readonly farmId: string;
  readonly issue: string;
  readonly records: number;
  readonly revision: number;
}

export interface Rejected {
  readonly file: string;
  readonly fault: Fault;
}

export type FileOutcome = ({ ok: true } & Accepted) | ({ ok: false } & Rejected);

/** The line printed for a file taken: `ingested FILE: farm F, issue I, N records`. */
export const formatAccepted = (file: string, farmId: string, issue: string, records: number): string =>
  `ingested ${printableName(file)}: farm ${farmId}, issue ${issue}, ${records} records`;

const isCsv = (name: string): boolean => /\.csv$/i.test(name);

/** The files named by the paths: files as given, folders searched recursively for *.csv, sorted. */
export async function expandPaths(paths: readonly string[]): Promise<{ files: string[]; missing: string[] }> {
  const files: string[] = [];
  const missing: string[] = [];
  async function walk(dir: string): Promise<void> {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile() && isCsv(e.name)) files.push(p);
    }
  }
  for (const p of paths) {
    const st = await stat(p).catch(() => undefined);
    if (st === undefined) missing.push(p);
    else if (st.isDirectory()) await walk(p);
    else files.push(p);
  }
  return { files, missing };
}

/** A reader's fault of a file, or a store's refusal of it as one (an unknown farm: the file as a whole); any other error is thrown. */
export function asFault(err: unknown): Fault {
  if (err instanceof FaultError) return err.fault;
  if (err instanceof UnknownFarmError) return { line: 0, column: 0, message: err.message };
  throw err;
}

/** Publishes a prepared run file. Store failures other than an unknown farm propagate. */
async function publish(store: Store, file: string, prepared: PreparedFile): Promise<FileOutcome> {
  if (!prepared.ok) return { ok: false, file, fault: prepared.fault };
  const { farmId, issue, series } = prepared;
  try {
    const pub = await store.putRun({ farmId, issue, series });
    return { ok: true, file, farmId, issue, records: series.records, revision: pub.revision };
  } catch (err) {
    return { ok: false, file, fault: asFault(err) };
  }
}

/** Reads, validates and publishes one run file. Store failures other than an unknown farm propagate. */
export async function ingestRunFile(store: Store, file: string): Promise<FileOutcome> {
  return publish(store, file, prepareRunFile(file));
}

/** Files prepared ahead of the one being committed, per reading thread. */
const AHEAD_PER_THREAD = 4;

/**
 * Ingests every file named by the paths, committing them one at a time in their order and reporting each
 * outcome as it is known. With `threads` > 0 the files are read, validated and encoded on that many threads
 * (FileReaders) while earlier ones are committed; with 0, on this thread, one after the other.
 */
export async function ingestPaths(
  store: Store,
  paths: readonly string[],
  onOutcome: (o: FileOutcome) => void,
  threads = 0,
): Promise<{ accepted: number; rejected: number }> {
  const { files, missing } = await expandPaths(paths);
  let accepted = 0;
  let rejected = 0;
  for (const p of missing) {
    rejected++;
    onOutcome({ ok: false, file: p, fault: { line: 0, column: 0, message: 'no such file or folder' } });
  }
  const readers = threads > 0 && files.length > 1 ? new FileReaders(Math.min(threads, files.length)) : undefined;
  const ahead: Promise<PreparedFile>[] = [];
  try {
    let next = 0;
    for (const f of files) {
      if (readers === undefined) ahead.push(Promise.resolve(prepareRunFile(files[next++]!)));
      else while (next < files.length && ahead.length < AHEAD_PER_THREAD * threads) ahead.push(readers.prepare(files[next++]!));
      const o = await publish(store, f, await ahead.shift()!);
      if (o.ok) accepted++;
      else rejected++;
      onOutcome(o);
    }
  } finally {
    // Left unawaited when a commit failed: their failure on close is no news.
    for (const p of ahead) p.catch(() => undefined);
    await readers?.close();
  }
  return { accepted, rejected };
}

const FARMS_FILE = { maxBytes: MAX_FARMS_FILE_BYTES, what: 'a farm registry' };

/** Reads a farm registry file and registers or updates its sites, all or none. */
export async function importFarmsFile(store: Store, file: string): Promise<{ ok: true; farms: number } | { ok: false; fault: Fault }> {
  const input = readInputFile(file, FARMS_FILE, false);
  if ('fault' in input) return { ok: false, fault: input.fault };
  try {
    // Read before the store is awaited: the bytes lie in memory the next read reuses.
    const farms = readFarmsCsv(input.bytes);
    await store.upsertFarms(farms);
    return { ok: true, farms: farms.length };
  } catch (err) {
    return { ok: false, fault: asFault(err) };
  }
}
