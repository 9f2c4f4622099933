/**
 * Byte layout of a ZIP archive written front to back as a stream (PKWARE
 * APPNOTE 6.3.x), entries STORED. A bulk download of many CSV files is sent
 * while it is produced, so nothing can be patched afterwards: the caller
 * knows each entry's size and CRC-32 before its header goes out, which lets
 * every header be final (no data descriptors, flag bit 3 clear) and keeps the
 * layout readable by every unzip tool. A download may pass 4 GiB in total
 * though no single entry does, so ZIP64 only ever appears at the end: in
 * central records whose local header starts beyond 4 GiB and in the ZIP64
 * end records.
 *
 * Pure: builds Buffers only; offsets are plain numbers (safe integers).
 */

export interface ZipEntry {
  /** File name, ASCII/UTF-8 (set general purpose bit 11 when it is not pure ASCII). */
  readonly name: string;
  /** CRC-32 of the data (node:zlib crc32 computes it; the caller passes it). */
  readonly crc32: number;
  /** Data length in bytes (< 4 GiB per entry). */
  readonly size: number;
  /** Modification time, Unix ms: written as DOS date/time in UTC and as an extended-timestamp extra field (0x5455) with the Unix seconds. */
  readonly mtimeMs: number;
}

const SIG_LOCAL = 0x04034b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_ZIP64_EOCD = 0x06064b50;
const SIG_ZIP64_LOCATOR = 0x07064b50;
const SIG_EOCD = 0x06054b50;

const LOCAL_FIXED = 30;
const CENTRAL_FIXED = 46;
const ZIP64_EOCD_SIZE = 56;
const ZIP64_LOCATOR_SIZE = 20;
const EOCD_SIZE = 22;

const MAX32 = 0xffffffff;
const MAX16 = 0xffff;

/** 2.0 rather than 1.0: what Info-ZIP and Python write for stored files, so no reader treats it as unusual. */
const VERSION_NEEDED = 20;
const VERSION_NEEDED_ZIP64 = 45;
/** High byte 3 = Unix, so readers apply the permission bits in the external attributes. */
const MADE_BY = (3 << 8) | 30;
const MADE_BY_ZIP64 = (3 << 8) | 45;
/** Regular file, rw-r--r--: extracted files should not come out executable or read-only. */
const EXTERNAL_ATTRS = (0o100644 << 16) >>> 0;

const FLAG_UTF8 = 1 << 11;
const METHOD_STORED = 0;

const EXTRA_TIMESTAMP = 0x5455;
/** Tag, length, flags byte (bit 0: mtime present), int32 mtime. */
const TIMESTAMP_EXTRA_SIZE = 9;
const EXTRA_ZIP64 = 0x0001;
/** Tag, length, 64-bit local header offset: the only field that can overflow since sizes stay < 4 GiB. */
const ZIP64_OFFSET_EXTRA_SIZE = 12;

/** DOS date 1980-01-01 (year 0, month 1, day 1), the earliest DOS can say. */
const DOS_EPOCH_DATE = (1 << 5) | 1;

const NON_ASCII = /[^\x00-\x7f]/;

function checkUint(value: number, max: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0 || value > max) throw new RangeError(`zip: ${what} out of range: ${value}`);
}

interface Encoded {
  readonly name: Buffer;
  readonly flags: number;
  readonly dosTime: number;
  readonly dosDate: number;
  readonly unixSeconds: number;
}

function encode(entry: ZipEntry): Encoded {
  const name = Buffer.from(entry.name, 'utf8');
  if (name.length === 0) throw new RangeError('zip: empty entry name');
  checkUint(name.length, MAX16, 'name length');
  checkUint(entry.crc32, MAX32, 'crc32');
  // 0xFFFFFFFF itself would read as "see the ZIP64 extra", which local headers never carry.
  checkUint(entry.size, MAX32 - 1, 'size');
  if (!Number.isFinite(entry.mtimeMs)) throw new RangeError(`zip: mtime not finite: ${entry.mtimeMs}`);
  const { time, date } = dosDateTime(entry.mtimeMs);
  return {
    name,
    flags: NON_ASCII.test(entry.name) ? FLAG_UTF8 : 0,
    dosTime: time,
    dosDate: date,
    // The 0x5455 field is a signed 32-bit count; clamping keeps a far-off mtime from wrapping into a wrong date.
    unixSeconds: Math.min(Math.max(Math.floor(entry.mtimeMs / 1000), -(2 ** 31)), 2 ** 31 - 1),
  };
}

/** DOS date/time in UTC (so the archive reads the same whatever the server's zone); DOS covers 1980..2107 with 2 s steps. */
function dosDateTime(ms: number): { time: number; date: number } {
  const d = new Date(ms);
  const year = d.getUTCFullYear();
  if (year < 1980) return { time: 0, date: DOS_EPOCH_DATE };
  if (year > 2107) return { time: (23 << 11) | (59 << 5) | (58 >> 1), date: (127 << 9) | (12 << 5) | 31 };
  return {
    time: (d.getUTCHours() << 11) | (d.getUTCMinutes() << 5) | (d.getUTCSeconds() >> 1),
    date: ((year - 1980) << 9) | ((d.getUTCMonth() + 1) << 5) | d.getUTCDate(),
  };
}

function writeTimestampExtra(buf: Buffer, at: number, unixSeconds: number): number {
  buf.writeUInt16LE(EXTRA_TIMESTAMP, at);
  buf.writeUInt16LE(TIMESTAMP_EXTRA_SIZE - 4, at + 2);
  buf.writeUInt8(1, at + 4);
  buf.writeInt32LE(unixSeconds, at + 5);
  return at + TIMESTAMP_EXTRA_SIZE;
}

/** The local file header that precedes an entry's data (sizes and CRC known; version needed 20, or 45 when offset needs zip64 is irrelevant here: local headers never need zip64 because each entry is < 4 GiB). */
export function localHeader(entry: ZipEntry): Buffer {
  const e = encode(entry);
  const buf = Buffer.alloc(LOCAL_FIXED + e.name.length + TIMESTAMP_EXTRA_SIZE);
  buf.writeUInt32LE(SIG_LOCAL, 0);
  buf.writeUInt16LE(VERSION_NEEDED, 4);
  buf.writeUInt16LE(e.flags, 6);
  buf.writeUInt16LE(METHOD_STORED, 8);
  buf.writeUInt16LE(e.dosTime, 10);
  buf.writeUInt16LE(e.dosDate, 12);
  buf.writeUInt32LE(entry.crc32, 14);
  buf.writeUInt32LE(entry.size, 18); // compressed = uncompressed: stored
  buf.writeUInt32LE(entry.size, 22);
  buf.writeUInt16LE(e.name.length, 26);
  buf.writeUInt16LE(TIMESTAMP_EXTRA_SIZE, 28);
  e.name.copy(buf, LOCAL_FIXED);
  writeTimestampExtra(buf, LOCAL_FIXED + e.name.length, e.unixSeconds);
  return buf;
}

function centralRecord(entry: ZipEntry & { readonly offset: number }): Buffer {
  const e = encode(entry);
  checkUint(entry.offset, Number.MAX_SAFE_INTEGER, 'entry offset');
  const zip64 = entry.offset >= MAX32;
  const extraLength = (zip64 ? ZIP64_OFFSET_EXTRA_SIZE : 0) + TIMESTAMP_EXTRA_SIZE;
  const buf = Buffer.alloc(CENTRAL_FIXED + e.name.length + extraLength);
  buf.writeUInt32LE(SIG_CENTRAL, 0);
  buf.writeUInt16LE(zip64 ? MADE_BY_ZIP64 : MADE_BY, 4);
  buf.writeUInt16LE(zip64 ? VERSION_NEEDED_ZIP64 : VERSION_NEEDED, 6);
  buf.writeUInt16LE(e.flags, 8);
  buf.writeUInt16LE(METHOD_STORED, 10);
  buf.writeUInt16LE(e.dosTime, 12);
  buf.writeUInt16LE(e.dosDate, 14);
  buf.writeUInt32LE(entry.crc32, 16);
  buf.writeUInt32LE(entry.size, 20);
  buf.writeUInt32LE(entry.size, 24);
  buf.writeUInt16LE(e.name.length, 28);
  buf.writeUInt16LE(extraLength, 30);
  // comment length (32), disk number start (34) and internal attributes (36) stay 0.
  buf.writeUInt32LE(EXTERNAL_ATTRS, 38);
  buf.writeUInt32LE(zip64 ? MAX32 : entry.offset, 42);
  e.name.copy(buf, CENTRAL_FIXED);
  let at = CENTRAL_FIXED + e.name.length;
  if (zip64) {
    buf.writeUInt16LE(EXTRA_ZIP64, at);
    buf.writeUInt16LE(ZIP64_OFFSET_EXTRA_SIZE - 4, at + 2);
    buf.writeBigUInt64LE(BigInt(entry.offset), at + 4);
    at += ZIP64_OFFSET_EXTRA_SIZE;
  }
  writeTimestampExtra(buf, at, e.unixSeconds);
  return buf;
}

/**
 * Everything after the last entry's data: the central directory (one record per entry, with `offset` = where its local header starts),
 * then, when any offset or the directory's own offset/size is >= 0xFFFFFFFF or there are >= 0xFFFF entries (or when `forceZip64`), the ZIP64 end of central directory record and locator, then the end of central directory record
 * (with 0xFFFFFFFF / 0xFFFF placeholders where ZIP64 holds the real values). Central records whose offset is >= 0xFFFFFFFF carry a ZIP64 extra field (0x0001) with the offset.
 */
export function centralDirectory(
  entries: readonly (ZipEntry & { readonly offset: number })[],
  directoryOffset: number,
  opts?: { forceZip64?: boolean },
): Buffer {
  checkUint(directoryOffset, Number.MAX_SAFE_INTEGER, 'directory offset');
  const records = entries.map(centralRecord);
  const directorySize = records.reduce((sum, r) => sum + r.length, 0);
  const count = entries.length;
  const zip64 =
    opts?.forceZip64 === true ||
    count >= MAX16 ||
    directoryOffset >= MAX32 ||
    directorySize >= MAX32 ||
    entries.some((e) => e.offset >= MAX32);

  const tail = Buffer.alloc((zip64 ? ZIP64_EOCD_SIZE + ZIP64_LOCATOR_SIZE : 0) + EOCD_SIZE);
  let at = 0;
  if (zip64) {
    tail.writeUInt32LE(SIG_ZIP64_EOCD, 0);
    // Size of the record after this field: the fixed 44 bytes, no extensible data.
    tail.writeBigUInt64LE(BigInt(ZIP64_EOCD_SIZE - 12), 4);
    tail.writeUInt16LE(MADE_BY_ZIP64, 12);
    tail.writeUInt16LE(VERSION_NEEDED_ZIP64, 14);
    // number of this disk (16) and of the disk with the directory (20) stay 0: one file, one disk.
    tail.writeBigUInt64LE(BigInt(count), 24);
    tail.writeBigUInt64LE(BigInt(count), 32);
    tail.writeBigUInt64LE(BigInt(directorySize), 40);
    tail.writeBigUInt64LE(BigInt(directoryOffset), 48);
    at = ZIP64_EOCD_SIZE;
    tail.writeUInt32LE(SIG_ZIP64_LOCATOR, at);
    // disk with the ZIP64 EOCD (at + 4) stays 0.
    // Summed as BigInt: near 2^53 a float sum would round.
    tail.writeBigUInt64LE(BigInt(directoryOffset) + BigInt(directorySize), at + 8);
    tail.writeUInt32LE(1, at + 16);
    at += ZIP64_LOCATOR_SIZE;
  }
  // APPNOTE 4.4.1.4: only a field too small for its value becomes a placeholder; the rest keep
  // real values so readers that ignore ZIP64 still find a forced-ZIP64 archive's directory.
  const count16 = count >= MAX16 ? MAX16 : count;
  tail.writeUInt32LE(SIG_EOCD, at);
  // number of this disk (at + 4) and of the disk with the directory (at + 6) stay 0.
  tail.writeUInt16LE(count16, at + 8);
  tail.writeUInt16LE(count16, at + 10);
  tail.writeUInt32LE(directorySize >= MAX32 ? MAX32 : directorySize, at + 12);
  tail.writeUInt32LE(directoryOffset >= MAX32 ? MAX32 : directoryOffset, at + 16);
  // comment length (at + 20) stays 0.
  return Buffer.concat([...records, tail], directorySize + tail.length);
}
