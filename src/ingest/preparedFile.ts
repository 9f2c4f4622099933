/**
 * One run file read, validated and encoded, ready for the store: the part of
 * ingest that needs no store, so that it can run on threads of its own
 * (fileReaders.ts) while the store commits the files before it.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { createHash, type Hash } from 'node:crypto';
import { basename } from 'node:path';
import { encodeSeries, type EncodedSeries } from '../domain/codec.js';
import { MAX_RUN_FILE_BYTES } from '../domain/limits.js';
import { emptySeries, MAX_STEP } from '../domain/run.js';
import { FaultError, unreadable, type Fault } from './fault.js';
import { readRunCsv } from './runCsv.js';

/** A run file is read into this memory, reused from file to file, when it fits (see readWhole). */
let scratch = Buffer.allocUnsafeSlow(256 * 1024);
/** Files larger than this are read into memory of their own, so that one odd file does not stay resident. */
const SCRATCH_MAX = 4 * 1024 * 1024;

/** A file read whole, the size (and, when asked, SHA-256) of one too large to be a run file, or neither. */
type Whole = { readonly bytes: Uint8Array } | { readonly tooLarge: FileFacts } | { readonly notAFile: true };

/**
 * The whole file, in memory valid until the next call. A fresh buffer per file (readFileSync) cost a page
 * fault per 4 KB of every file as its new memory was first written, more so on reading threads, whose
 * freed memory goes back to the system sooner (docs/performance.md).
 */
function readWhole(file: string, hash: boolean): Whole {
  // Without blocking: opening a named pipe would otherwise wait for a writer.
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    let buf = scratch;
    const st = fstatSync(fd);
    // A device or a pipe has no end to read to (/dev/zero), or waits for a writer. (Reading a folder fails
    // with EISDIR, reported as an unreadable file.)
    if (!st.isFile() && !st.isDirectory()) return { notAFile: true };
    const size = st.size;
    if (size > MAX_RUN_FILE_BYTES) return { tooLarge: hash ? measureRest(fd, createHash('sha256'), 0) : { size, sha256: '' } };
    if (size >= buf.length) buf = Buffer.allocUnsafeSlow(size + 1);
    let n = 0;
    // Until the end of the file, also should it have grown since fstat.
    for (let r; (r = readSync(fd, buf, n, buf.length - n, null)) > 0; ) {
      n += r;
      if (n > MAX_RUN_FILE_BYTES) return { tooLarge: measureRest(fd, hash ? createHash('sha256').update(buf.subarray(0, n)) : undefined, n) };
      if (n === buf.length) {
        const bigger = Buffer.allocUnsafeSlow(2 * buf.length);
        buf.copy(bigger, 0, 0, n);
        buf = bigger;
      }
    }
    if (buf !== scratch && buf.length <= SCRATCH_MAX) scratch = buf;
    return { bytes: buf.subarray(0, n) };
  } finally {
    closeSync(fd);
  }
}

/** Reads the rest of a file in pieces, for its size and, with a hash, its SHA-256 (`n` bytes read before). */
function measureRest(fd: number, hash: Hash | undefined, n: number): FileFacts {
  for (let r; (r = readSync(fd, scratch, 0, scratch.length, null)) > 0; n += r) hash?.update(scratch.subarray(0, r));
  return { size: n, sha256: hash?.digest('hex') ?? '' };
}

/**
 * The series of a canonical file is read into these arrays, reused from file to file: it is encoded at
 * once. Fresh arrays per file (15 of 1,441 doubles) were most of the page faults of reading threads.
 */
const SERIES = emptySeries(MAX_STEP + 1);

/** What a watched folder records of a file it takes (nothing, hashed, for a file it cannot read). */
export interface FileFacts {
  readonly size: number;
  readonly sha256: string;
}

export type PreparedFile = (
  | { readonly ok: true; readonly farmId: string; readonly issue: string; readonly series: EncodedSeries }
  | { readonly ok: false; readonly fault: Fault; /** The system's code when the file could not be read. */ readonly code?: string }
) & { readonly facts?: FileFacts };

export interface PrepareOptions {
  /** The name the file was delivered under, when it lies under another (a watched folder's claim). */
  readonly name?: string;
  /** Also its size and SHA-256. */
  readonly facts?: boolean;
}

const factsOf = (bytes: Uint8Array): FileFacts => ({ size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });

/**
 * Reads, validates and encodes one run file. A fault of the file is an answer; any other error (a bug)
 * is thrown. Nothing of the file's bytes is kept. The file is read synchronously: an asynchronous read costs several event-loop turns per file
 * (open, stat, read, close), idle time that measured 0.3 s of 1.8 s for 1,000 files.
 */
export function prepareRunFile(file: string, options: PrepareOptions = {}): PreparedFile {
  let whole: Whole;
  try {
    whole = readWhole(file, options.facts === true);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { ok: false, fault: unreadable(err), ...(code !== undefined && { code }), ...(options.facts && { facts: factsOf(new Uint8Array(0)) }) };
  }
  if ('notAFile' in whole) {
    return { ok: false, fault: { line: 0, column: 0, message: 'not a regular file' }, ...(options.facts && { facts: factsOf(new Uint8Array(0)) }) };
  }
  if ('tooLarge' in whole) {
    const message = `file is ${whole.tooLarge.size} bytes; a run file is at most ${MAX_RUN_FILE_BYTES} bytes`;
    return { ok: false, fault: { line: 0, column: 0, message }, ...(options.facts && { facts: whole.tooLarge }) };
  }
  const bytes = whole.bytes;
  const facts = options.facts ? { facts: factsOf(bytes) } : {};
  try {
    const run = readRunCsv(options.name ?? basename(file), bytes, SERIES);
    return { ok: true, farmId: run.farmId, issue: run.issue, series: { blob: encodeSeries(run.series), records: run.series.steps.length }, ...facts };
  } catch (err) {
    if (err instanceof FaultError) return { ok: false, fault: err.fault, ...facts };
    throw err;
  }
}
