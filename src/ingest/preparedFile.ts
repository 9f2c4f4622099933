/**
 * One run file read, validated and encoded, ready for the store: the part of
 * ingest that needs no store, so that it can run on threads of its own
 * (fileReaders.ts) while the store commits the files before it.
 */
import { basename } from 'node:path';
import { encodeSeries, type EncodedSeries } from '../domain/codec.js';
import { MAX_RUN_FILE_BYTES } from '../domain/limits.js';
import { emptySeries, MAX_STEP } from '../domain/run.js';
import { FaultError, type Fault } from './fault.js';
import { readInputFile, type FileFacts } from './fileBytes.js';
import { readRunCsv } from './runCsv.js';

/**
 * The series of a canonical file is read into these arrays, reused from file to file: it is encoded at
 * once. Fresh arrays per file (15 of 1,441 doubles) were most of the page faults of reading threads.
 */
const SERIES = emptySeries(MAX_STEP + 1);
const RUN_FILE = { maxBytes: MAX_RUN_FILE_BYTES, what: 'a run file' };

export type PreparedFile = (
  | { readonly ok: true; readonly farmId: string; readonly issue: string; readonly series: EncodedSeries }
  | { readonly ok: false; readonly fault: Fault; /** The system's code when the file could not be read. */ readonly code?: string }
) & { readonly facts?: FileFacts };

export interface PrepareOptions {
  /** The name the file was delivered under, when it lies under another (a watched folder's claim). */
  readonly name?: string;
  /** Also its size and SHA-256, as a watched folder records them (of nothing, for a file it cannot read). */
  readonly facts?: boolean;
}

/**
 * Reads, validates and encodes one run file. A fault of the file is an answer; any other error (a bug)
 * is thrown. Nothing of the file's bytes is kept. The file is read synchronously: an asynchronous read
 * costs several event-loop turns per file (open, stat, read, close), idle time that measured 0.3 s of
 * 1.8 s for 1,000 files.
 */
export function prepareRunFile(file: string, options: PrepareOptions = {}): PreparedFile {
  const input = readInputFile(file, RUN_FILE, options.facts === true);
  if ('fault' in input) return { ok: false, ...input };
  const facts = input.facts === undefined ? {} : { facts: input.facts };
  try {
    const run = readRunCsv(options.name ?? basename(file), input.bytes, SERIES);
    return { ok: true, farmId: run.farmId, issue: run.issue, series: { blob: encodeSeries(run.series), records: run.series.steps.length }, ...facts };
  } catch (err) {
    if (err instanceof FaultError) return { ok: false, fault: err.fault, ...facts };
    throw err;
  }
}
