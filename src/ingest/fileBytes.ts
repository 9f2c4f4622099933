/**
 * Input files read whole, within a bound: a file over the bound is measured
 * (and hashed, when asked) in pieces instead of read into memory, and a device
 * or a named pipe is not read at all (/dev/zero has no end; a pipe waits for a
 * writer). The bytes lie in memory reused from call to call: a fresh buffer per
 * file cost a page fault per 4 KB of every file as its new memory was first
 * written, more so on ingest's reading threads (docs/performance.md).
 */
import { createHash, type Hash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { unreadable, type Fault } from './fault.js';

/** Size and SHA-256 of a file's bytes (of nothing, for a file that could not be read). */
export interface FileFacts {
  readonly size: number;
  readonly sha256: string;
}

/** A file read whole; the size (and, when asked, SHA-256) of one over the bound; or neither. */
type FileBytes = { readonly bytes: Uint8Array } | { readonly tooLarge: FileFacts } | { readonly notAFile: true };

/**
 * An input file's bytes, or the fault of the file as a whole (with the system's code when it could not be
 * read); with its size and SHA-256 when asked (of nothing, for a file that could not be read).
 */
export type InputFile =
  | { readonly bytes: Uint8Array; readonly facts?: FileFacts }
  | { readonly fault: Fault; readonly code?: string; readonly facts?: FileFacts };

/** What an input file may be at most: its bytes, and what the fault calls it. */
export interface InputBound {
  readonly maxBytes: number;
  /** `a run file`, `a farm registry`. */
  readonly what: string;
}

/** Files are read into this memory when they fit. */
let scratch = Buffer.allocUnsafeSlow(256 * 1024);
/** Files larger than this are read into memory of their own, so that one odd file does not stay resident. */
const SCRATCH_MAX = 4 * 1024 * 1024;

const factsOf = (bytes: Uint8Array): FileFacts => ({ size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });

const NOTHING = factsOf(new Uint8Array(0));

/**
 * The whole file, if it is a regular file within the bound, its bytes valid until the next call; else the
 * fault of the file as a whole. `facts`: also its size and SHA-256.
 */
export function readInputFile(file: string, bound: InputBound, facts: boolean): InputFile {
  let read: FileBytes;
  try {
    read = readFileBytes(file, bound.maxBytes, facts);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { fault: unreadable(err), ...(code !== undefined && { code }), ...(facts && { facts: NOTHING }) };
  }
  if ('notAFile' in read) return { fault: { line: 0, column: 0, message: 'not a regular file' }, ...(facts && { facts: NOTHING }) };
  if ('tooLarge' in read) {
    const message = `file is ${read.tooLarge.size} bytes; ${bound.what} is at most ${bound.maxBytes} bytes`;
    return { fault: { line: 0, column: 0, message }, ...(facts && { facts: read.tooLarge }) };
  }
  return { bytes: read.bytes, ...(facts && { facts: factsOf(read.bytes) }) };
}

/**
 * The whole file, if it is a regular file of at most maxBytes. `hash`: also hash a file over the bound.
 * Throws the system's error for a file that cannot be read (a folder: EISDIR).
 */
function readFileBytes(file: string, maxBytes: number, hash: boolean): FileBytes {
  // Without blocking: opening a named pipe would otherwise wait for a writer.
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile() && !st.isDirectory()) return { notAFile: true };
    if (st.size > maxBytes) return { tooLarge: hash ? measureRest(fd, createHash('sha256'), 0) : { size: st.size, sha256: '' } };
    let buf = st.size >= scratch.length ? Buffer.allocUnsafeSlow(st.size + 1) : scratch;
    let n = 0;
    // Until the end of the file, also should it have grown since fstat.
    for (let r; (r = readSync(fd, buf, n, buf.length - n, null)) > 0; ) {
      n += r;
      if (n > maxBytes) return { tooLarge: measureRest(fd, hash ? createHash('sha256').update(buf.subarray(0, n)) : undefined, n) };
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

/** Reads the rest of a regular file in pieces, for its size and, with a hash, its SHA-256 (`n` bytes read before). */
function measureRest(fd: number, hash: Hash | undefined, n: number): FileFacts {
  for (let r; (r = readSync(fd, scratch, 0, scratch.length, null)) > 0; n += r) hash?.update(scratch.subarray(0, r));
  return { size: n, sha256: hash?.digest('hex') ?? '' };
}
