import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, fstatSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { crc32 } from 'node:zlib';
import { centralDirectory, localHeader, type ZipEntry } from '../../src/domain/zipFormat.js';

const dir = mkdtempSync(join(tmpdir(), 'forecastd-zip-'));
after(() => rmSync(dir, { recursive: true, force: true }));

interface SourceFile {
  name: string;
  data: Buffer;
  mtimeMs: number;
}

const NON_ASCII_NAME = '站点_2026112500.csv';

/** Deterministic bytes that are neither text nor compressible, like nothing a text-mode writer would leave alone. */
function noise(length: number, seed: number): Buffer {
  const buf = Buffer.alloc(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    buf[i] = x & 0xff;
  }
  return buf;
}

const FILES: SourceFile[] = [
  { name: 'WF_A_2026112500.csv', data: Buffer.from('date_time,ws100\n2026-11-25 08:15:00+08:00,7.25\n'), mtimeMs: Date.UTC(2026, 10, 25, 0, 30, 14) },
  { name: 'empty.csv', data: Buffer.alloc(0), mtimeMs: Date.UTC(2024, 1, 29, 23, 59, 58) },
  { name: NON_ASCII_NAME, data: Buffer.from('date_time,t2m\n2026-11-25 08:15:00+08:00,-3.5\r\n\x00\xff', 'latin1'), mtimeMs: Date.UTC(2026, 10, 25, 1, 0, 0) },
  { name: 'sub/PV_B_2026112500.csv', data: noise(256 * 1024 + 7, 42), mtimeMs: Date.UTC(2030, 0, 1, 12, 0, 2) },
];

const entryOf = (f: SourceFile): ZipEntry => ({ name: f.name, crc32: crc32(f.data), size: f.data.length, mtimeMs: f.mtimeMs });

/** What a streaming writer does: header, data, header, data, ..., then the directory at the running offset. */
function buildArchive(files: readonly SourceFile[], opts?: { forceZip64?: boolean }): Buffer {
  const parts: Buffer[] = [];
  const placed: (ZipEntry & { offset: number })[] = [];
  let offset = 0;
  for (const f of files) {
    const entry = entryOf(f);
    const header = localHeader(entry);
    placed.push({ ...entry, offset });
    parts.push(header, f.data);
    offset += header.length + f.data.length;
  }
  parts.push(centralDirectory(placed, offset, opts));
  return Buffer.concat(parts);
}

interface PyEntry {
  name: string;
  date_time: number[];
  compress_type: number;
  file_size: number;
  crc: number;
  flag_bits: number;
  data: string;
}

const PY_READ = `
import base64, json, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    bad = z.testzip()
    entries = [{"name": i.filename, "date_time": list(i.date_time), "compress_type": i.compress_type,
                "file_size": i.file_size, "crc": i.CRC, "flag_bits": i.flag_bits,
                "data": base64.b64encode(z.read(i)).decode()} for i in z.infolist()]
print(json.dumps({"bad": bad, "entries": entries}))
`;

function pythonRead(path: string): { bad: string | null; entries: PyEntry[] } {
  const r = spawnSync('python3', ['-c', PY_READ, path], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(r.status, 0, `python3 zipfile failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as { bad: string | null; entries: PyEntry[] };
}

const HAVE_UNZIP = (() => {
  const r = spawnSync('unzip', ['-v'], { stdio: 'ignore' });
  return r.error === undefined && r.status === 0;
})();

function unzipTest(path: string): void {
  const r = spawnSync('unzip', ['-t', path], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(r.status, 0, `unzip -t failed:\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /No errors detected/);
}

const utcParts = (ms: number): number[] => {
  const d = new Date(ms);
  return [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()];
};

function checkWithPython(path: string, files: readonly SourceFile[]): void {
  const got = pythonRead(path);
  assert.equal(got.bad, null, 'testzip found a bad entry');
  assert.deepEqual(
    got.entries.map((e) => e.name),
    files.map((f) => f.name),
  );
  for (const [i, f] of files.entries()) {
    const e = got.entries[i]!;
    assert.equal(e.compress_type, 0, f.name);
    assert.equal(e.file_size, f.data.length, f.name);
    assert.equal(e.crc, crc32(f.data), f.name);
    assert.deepEqual(e.date_time, utcParts(f.mtimeMs), f.name);
    assert.equal(e.flag_bits & 0x8, 0, `${f.name}: no data descriptor`);
    assert.ok(Buffer.from(e.data, 'base64').equals(f.data), `${f.name}: bytes differ`);
  }
}

// --- A minimal reader of the structures, independent of the writer's code paths. ---

interface ParsedCentral {
  madeBy: number;
  needed: number;
  flags: number;
  method: number;
  dosTime: number;
  dosDate: number;
  crc: number;
  compressed: number;
  size: number;
  externalAttrs: number;
  offset32: number;
  name: string;
  extras: Map<number, Buffer>;
}

function parseExtras(buf: Buffer): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  let at = 0;
  while (at < buf.length) {
    assert.ok(at + 4 <= buf.length, 'truncated extra header');
    const tag = buf.readUInt16LE(at);
    const len = buf.readUInt16LE(at + 2);
    assert.ok(at + 4 + len <= buf.length, `extra 0x${tag.toString(16)} overruns`);
    assert.ok(!out.has(tag), `duplicate extra 0x${tag.toString(16)}`);
    out.set(tag, buf.subarray(at + 4, at + 4 + len));
    at += 4 + len;
  }
  return out;
}

function parseCentralRecords(buf: Buffer, count: number): { records: ParsedCentral[]; end: number } {
  const records: ParsedCentral[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    assert.equal(buf.readUInt32LE(at), 0x02014b50, `central signature of record ${i}`);
    const nameLen = buf.readUInt16LE(at + 28);
    const extraLen = buf.readUInt16LE(at + 30);
    const commentLen = buf.readUInt16LE(at + 32);
    records.push({
      madeBy: buf.readUInt16LE(at + 4),
      needed: buf.readUInt16LE(at + 6),
      flags: buf.readUInt16LE(at + 8),
      method: buf.readUInt16LE(at + 10),
      dosTime: buf.readUInt16LE(at + 12),
      dosDate: buf.readUInt16LE(at + 14),
      crc: buf.readUInt32LE(at + 16),
      compressed: buf.readUInt32LE(at + 20),
      size: buf.readUInt32LE(at + 24),
      externalAttrs: buf.readUInt32LE(at + 38),
      offset32: buf.readUInt32LE(at + 42),
      name: buf.subarray(at + 46, at + 46 + nameLen).toString('utf8'),
      extras: parseExtras(buf.subarray(at + 46 + nameLen, at + 46 + nameLen + extraLen)),
    });
    at += 46 + nameLen + extraLen + commentLen;
  }
  return { records, end: at };
}

interface ParsedTail {
  eocd: { entriesOnDisk: number; entries: number; size: number; offset: number; commentLen: number };
  zip64?: {
    recordSize: bigint;
    madeBy: number;
    needed: number;
    disk: number;
    cdDisk: number;
    entriesOnDisk: bigint;
    entries: bigint;
    size: bigint;
    offset: bigint;
    locatorDisk: number;
    locatorOffset: bigint;
    totalDisks: number;
  };
}

/** Reads from the end as an unzip tool does: EOCD, then a locator just before it, then the ZIP64 EOCD it points at. */
function parseTail(buf: Buffer, directoryOffset: number): ParsedTail {
  const e = buf.length - 22;
  assert.equal(buf.readUInt32LE(e), 0x06054b50, 'EOCD signature');
  assert.equal(buf.readUInt16LE(e + 4), 0);
  assert.equal(buf.readUInt16LE(e + 6), 0);
  const eocd = {
    entriesOnDisk: buf.readUInt16LE(e + 8),
    entries: buf.readUInt16LE(e + 10),
    size: buf.readUInt32LE(e + 12),
    offset: buf.readUInt32LE(e + 16),
    commentLen: buf.readUInt16LE(e + 20),
  };
  const l = e - 20;
  if (l < 0 || buf.readUInt32LE(l) !== 0x07064b50) return { eocd };
  const locatorOffset = buf.readBigUInt64LE(l + 8);
  // The locator holds an absolute file offset; this buffer starts at the directory.
  const z = Number(locatorOffset - BigInt(directoryOffset));
  assert.equal(buf.readUInt32LE(z), 0x06064b50, 'ZIP64 EOCD signature where the locator points');
  return {
    eocd,
    zip64: {
      recordSize: buf.readBigUInt64LE(z + 4),
      madeBy: buf.readUInt16LE(z + 12),
      needed: buf.readUInt16LE(z + 14),
      disk: buf.readUInt32LE(z + 16),
      cdDisk: buf.readUInt32LE(z + 20),
      entriesOnDisk: buf.readBigUInt64LE(z + 24),
      entries: buf.readBigUInt64LE(z + 32),
      size: buf.readBigUInt64LE(z + 40),
      offset: buf.readBigUInt64LE(z + 48),
      locatorDisk: buf.readUInt32LE(l + 4),
      locatorOffset,
      totalDisks: buf.readUInt32LE(l + 16),
    },
  };
}

const synthetic = (name: string, offset: number): ZipEntry & { offset: number } => ({
  name,
  crc32: 0xdeadbeef,
  size: 250_000,
  mtimeMs: Date.UTC(2026, 10, 25, 0, 0, 0),
  offset,
});

// --- Tests ---

test('an archive built from local headers + data + central directory reads back in Python zipfile and unzip', () => {
  const zip = buildArchive(FILES);
  const path = join(dir, 'plain.zip');
  writeFileSync(path, zip);
  checkWithPython(path, FILES);
  if (HAVE_UNZIP) unzipTest(path);
  // Small archives must stay plain ZIP: some readers reject ZIP64 records they do not need.
  assert.equal(zip.indexOf(Buffer.from([0x50, 0x4b, 0x06, 0x06])), -1, 'no ZIP64 EOCD');
  assert.equal(zip.indexOf(Buffer.from([0x50, 0x4b, 0x06, 0x07])), -1, 'no ZIP64 locator');
});

test('forceZip64 writes the ZIP64 end records and the archive still reads back', () => {
  const zip = buildArchive(FILES, { forceZip64: true });
  const path = join(dir, 'forced64.zip');
  writeFileSync(path, zip);
  checkWithPython(path, FILES);
  if (HAVE_UNZIP) unzipTest(path);
  assert.notEqual(zip.indexOf(Buffer.from([0x50, 0x4b, 0x06, 0x06])), -1, 'ZIP64 EOCD signature');
  assert.notEqual(zip.indexOf(Buffer.from([0x50, 0x4b, 0x06, 0x07])), -1, 'ZIP64 locator signature');

  const directoryOffset = FILES.reduce((n, f) => n + localHeader(entryOf(f)).length + f.data.length, 0);
  const tail = parseTail(zip.subarray(directoryOffset), directoryOffset);
  assert.ok(tail.zip64);
  assert.equal(tail.zip64.recordSize, 44n);
  assert.equal(tail.zip64.madeBy & 0xff, 45);
  assert.equal(tail.zip64.needed, 45);
  assert.equal(tail.zip64.totalDisks, 1);
  assert.equal(tail.zip64.entries, BigInt(FILES.length));
  assert.equal(tail.zip64.offset, BigInt(directoryOffset));
  // Values that fit stay real in the EOCD, so a reader that ignores ZIP64 still finds the directory.
  assert.equal(tail.eocd.entries, FILES.length);
  assert.equal(tail.eocd.offset, directoryOffset);
  assert.equal(BigInt(tail.eocd.size), tail.zip64.size);
});

test('offsets beyond 4 GiB round-trip exactly through the ZIP64 extra, locator and ZIP64 EOCD', () => {
  const entries = [
    synthetic('a.csv', 0),
    synthetic('b.csv', 0xfffffffe), // largest offset that still fits 32 bits
    synthetic('c.csv', 0xffffffff), // the placeholder value itself must go to ZIP64
    synthetic('d.csv', 5_000_000_000),
    synthetic('e.csv', 2 ** 52 + 1), // odd and far above 2^32: a float-rounding slip would show
  ];
  const directoryOffset = 6_000_000_000;
  const big = [...entries.slice(0, 4), { ...entries[4]!, offset: 5_500_000_001 }];
  for (const [list, dirOffset] of [
    [big, directoryOffset],
    [entries, 2 ** 53 - 1],
  ] as const) {
    const buf = centralDirectory(list, dirOffset);
    const { records, end } = parseCentralRecords(buf, list.length);
    assert.equal(buf.length, end + 56 + 20 + 22, 'directory, ZIP64 EOCD, locator, EOCD and nothing else');
    for (const [i, want] of list.entries()) {
      const r = records[i]!;
      assert.equal(r.name, want.name);
      const z64 = r.extras.get(0x0001);
      if (want.offset >= 0xffffffff) {
        assert.equal(r.offset32, 0xffffffff, `${want.name}: 32-bit offset is the placeholder`);
        assert.ok(z64, `${want.name}: ZIP64 extra present`);
        // Sizes fit 32 bits, so the extra holds the offset alone (APPNOTE 4.5.3: only the fields that are 0xFFFFFFFF).
        assert.equal(z64.length, 8);
        assert.equal(z64.readBigUInt64LE(0), BigInt(want.offset));
        assert.equal(r.needed, 45);
        assert.equal(r.size, want.size);
        assert.equal(r.compressed, want.size);
      } else {
        assert.equal(r.offset32, want.offset);
        assert.equal(z64, undefined, `${want.name}: no ZIP64 extra when the offset fits`);
        assert.equal(r.needed, 20);
      }
      assert.equal(r.crc, 0xdeadbeef);
    }
    const tail = parseTail(buf, dirOffset);
    assert.ok(tail.zip64, 'ZIP64 records present');
    assert.equal(tail.eocd.offset, 0xffffffff);
    assert.equal(tail.eocd.entries, list.length);
    assert.equal(tail.eocd.entriesOnDisk, list.length);
    assert.equal(tail.eocd.size, end);
    assert.equal(tail.eocd.commentLen, 0);
    assert.equal(tail.zip64.offset, BigInt(dirOffset));
    assert.equal(tail.zip64.size, BigInt(end));
    assert.equal(tail.zip64.entries, BigInt(list.length));
    assert.equal(tail.zip64.entriesOnDisk, BigInt(list.length));
    assert.equal(tail.zip64.locatorOffset, BigInt(dirOffset) + BigInt(end));
    assert.equal(tail.zip64.recordSize, 44n);
    assert.equal(tail.zip64.needed, 45);
    assert.equal(tail.zip64.disk, 0);
    assert.equal(tail.zip64.cdDisk, 0);
    assert.equal(tail.zip64.locatorDisk, 0);
    assert.equal(tail.zip64.totalDisks, 1);
  }
});

test('a directory starting at 0xFFFFFFFF needs ZIP64 even when every entry offset fits', () => {
  const buf = centralDirectory([synthetic('a.csv', 0)], 0xffffffff);
  const { end } = parseCentralRecords(buf, 1);
  const tail = parseTail(buf, 0xffffffff);
  assert.ok(tail.zip64);
  assert.equal(tail.eocd.offset, 0xffffffff);
  assert.equal(tail.zip64.offset, 0xffffffffn);
  assert.equal(tail.zip64.size, BigInt(end));

  const below = centralDirectory([synthetic('a.csv', 0)], 0xfffffffe);
  assert.equal(parseTail(below, 0xfffffffe).zip64, undefined);
  assert.equal(parseTail(below, 0xfffffffe).eocd.offset, 0xfffffffe);
});

test('65535 entries switch to ZIP64 with a 0xFFFF placeholder count; 65534 do not', () => {
  const make = (n: number): (ZipEntry & { offset: number })[] =>
    Array.from({ length: n }, (_, i) => ({ name: `${i}.csv`, crc32: i, size: 1, mtimeMs: 0, offset: i * 48 }));
  const at = 65535 * 48;
  const many = centralDirectory(make(65535), at);
  const tail = parseTail(many, at);
  assert.ok(tail.zip64);
  assert.equal(tail.eocd.entries, 0xffff);
  assert.equal(tail.eocd.entriesOnDisk, 0xffff);
  assert.equal(tail.zip64.entries, 65535n);
  assert.equal(tail.eocd.offset, at, 'offset fits, so it stays real');

  const fewer = centralDirectory(make(65534), at);
  const t2 = parseTail(fewer, at);
  assert.equal(t2.zip64, undefined);
  assert.equal(t2.eocd.entries, 65534);
});

test('an archive whose last entry lies beyond 4 GiB (sparse file) reads back in Python zipfile and unzip', (t) => {
  const far = 5_000_000_000;
  const path = join(dir, 'sparse64.zip');
  const fd = openSync(path, 'w');
  try {
    ftruncateSync(fd, far);
    if (fstatSync(fd).blocks * 512 > 64 * 1024 * 1024) {
      t.skip('file system does not keep sparse files sparse');
      return;
    }
    const [first, second] = [FILES[0]!, FILES[2]!];
    const h1 = localHeader(entryOf(first));
    writeSync(fd, h1, 0, h1.length, 0);
    writeSync(fd, first.data, 0, first.data.length, h1.length);
    const h2 = localHeader(entryOf(second));
    writeSync(fd, h2, 0, h2.length, far);
    writeSync(fd, second.data, 0, second.data.length, far + h2.length);
    const directoryOffset = far + h2.length + second.data.length;
    const cd = centralDirectory(
      [
        { ...entryOf(first), offset: 0 },
        { ...entryOf(second), offset: far },
      ],
      directoryOffset,
    );
    writeSync(fd, cd, 0, cd.length, directoryOffset);
  } finally {
    closeSync(fd);
  }
  checkWithPython(path, [FILES[0]!, FILES[2]!]);
  if (HAVE_UNZIP) unzipTest(path);
});

test('a pre-1980 mtime clamps to 1980-01-01 00:00 in DOS fields; the extended timestamp keeps the real seconds', () => {
  for (const ms of [Date.UTC(1975, 5, 1, 12, 0, 0), Date.UTC(1979, 11, 31, 23, 59, 59), -86_400_000, 0]) {
    const h = localHeader({ name: 'old.csv', crc32: 0, size: 0, mtimeMs: ms });
    assert.equal(h.readUInt16LE(10), 0, `DOS time for ${new Date(ms).toISOString()}`);
    assert.equal(h.readUInt16LE(12), (1 << 5) | 1, `DOS date for ${new Date(ms).toISOString()}`);
    const ut = parseExtras(h.subarray(30 + 7)).get(0x5455)!;
    assert.equal(ut.readInt32LE(1), Math.floor(ms / 1000));
  }
  const f: SourceFile = { name: 'old.csv', data: Buffer.from('x'), mtimeMs: Date.UTC(1970, 0, 1) };
  const path = join(dir, 'old.zip');
  writeFileSync(path, buildArchive([f]));
  assert.deepEqual(pythonRead(path).entries[0]!.date_time, [1980, 1, 1, 0, 0, 0]);
});

test('DOS date/time is UTC with 2-second resolution, from 1980-01-01 exactly', () => {
  const dos = (ms: number): [number, number] => {
    const h = localHeader({ name: 'x', crc32: 0, size: 0, mtimeMs: ms });
    return [h.readUInt16LE(12), h.readUInt16LE(10)];
  };
  assert.deepEqual(dos(Date.UTC(1980, 0, 1, 0, 0, 0)), [(1 << 5) | 1, 0]);
  // 2026-11-25 16:34:57.999 UTC: odd second rounds down, milliseconds ignored; 2026 = 1980 + 46.
  assert.deepEqual(dos(Date.UTC(2026, 10, 25, 16, 34, 57, 999)), [(46 << 9) | (11 << 5) | 25, (16 << 11) | (34 << 5) | 28]);
  assert.deepEqual(dos(Date.UTC(2107, 11, 31, 23, 59, 58)), [(127 << 9) | (12 << 5) | 31, (23 << 11) | (59 << 5) | 29]);
  assert.deepEqual(dos(Date.UTC(2200, 0, 1)), [(127 << 9) | (12 << 5) | 31, (23 << 11) | (59 << 5) | 29], 'after 2107 clamps to the last DOS instant');
});

test('local header layout: 30 + name + extra bytes, bit 11 only for a non-ASCII name, STORED, no data descriptor', () => {
  for (const f of FILES) {
    const entry = entryOf(f);
    const h = localHeader(entry);
    const nameBytes = Buffer.from(f.name, 'utf8');
    const nameLen = h.readUInt16LE(26);
    const extraLen = h.readUInt16LE(28);
    assert.equal(nameLen, nameBytes.length);
    assert.equal(h.length, 30 + nameLen + extraLen);
    assert.equal(h.readUInt32LE(0), 0x04034b50);
    assert.equal(h.readUInt16LE(4), 20, 'version needed');
    const flags = h.readUInt16LE(6);
    assert.equal((flags & 0x800) !== 0, f.name === NON_ASCII_NAME, `${f.name}: UTF-8 flag`);
    assert.equal(flags & ~0x800, 0, `${f.name}: no other flag (bit 3 would promise a data descriptor)`);
    assert.equal(h.readUInt16LE(8), 0, 'method STORED');
    assert.equal(h.readUInt32LE(14), entry.crc32);
    assert.equal(h.readUInt32LE(18), f.data.length);
    assert.equal(h.readUInt32LE(22), f.data.length);
    assert.ok(h.subarray(30, 30 + nameLen).equals(nameBytes));
    const extras = parseExtras(h.subarray(30 + nameLen));
    assert.deepEqual([...extras.keys()], [0x5455]);
    const ut = extras.get(0x5455)!;
    assert.equal(ut.length, 5);
    assert.equal(ut[0], 1, 'mtime present');
    assert.equal(ut.readInt32LE(1), Math.floor(f.mtimeMs / 1000));
  }
});

test('central records mirror the local headers and mark Unix regular files 0644', () => {
  const placed = FILES.map((f, i) => ({ ...entryOf(f), offset: i * 1000 }));
  const { records } = parseCentralRecords(centralDirectory(placed, 10_000), FILES.length);
  for (const [i, f] of FILES.entries()) {
    const r = records[i]!;
    const h = localHeader(entryOf(f));
    assert.equal(r.name, f.name);
    assert.equal(r.madeBy, 0x031e);
    assert.equal(r.needed, 20);
    assert.equal(r.flags, h.readUInt16LE(6));
    assert.equal(r.method, 0);
    assert.equal(r.dosTime, h.readUInt16LE(10));
    assert.equal(r.dosDate, h.readUInt16LE(12));
    assert.equal(r.crc, crc32(f.data));
    assert.equal(r.size, f.data.length);
    assert.equal(r.compressed, f.data.length);
    assert.equal(r.externalAttrs >>> 16, 0o100644);
    assert.equal(r.offset32, i * 1000);
    assert.deepEqual([...r.extras.keys()], [0x5455]);
    assert.equal(r.extras.get(0x5455)!.readInt32LE(1), Math.floor(f.mtimeMs / 1000));
  }
});

test('values a reader would misread are refused', () => {
  const ok: ZipEntry = { name: 'a.csv', crc32: 0, size: 0, mtimeMs: 0 };
  assert.throws(() => localHeader({ ...ok, size: 0xffffffff }), RangeError, 'size equal to the ZIP64 placeholder');
  assert.throws(() => localHeader({ ...ok, size: -1 }), RangeError);
  assert.throws(() => localHeader({ ...ok, size: 1.5 }), RangeError);
  assert.throws(() => localHeader({ ...ok, crc32: -1 }), RangeError, 'crc32 must be unsigned, as zlib.crc32 returns it');
  assert.throws(() => localHeader({ ...ok, crc32: 2 ** 32 }), RangeError);
  assert.throws(() => localHeader({ ...ok, mtimeMs: Number.NaN }), RangeError);
  assert.throws(() => localHeader({ ...ok, name: '' }), RangeError);
  assert.throws(() => localHeader({ ...ok, name: 'x'.repeat(0x10000) }), RangeError);
  assert.throws(() => centralDirectory([{ ...ok, offset: -1 }], 100), RangeError);
  assert.throws(() => centralDirectory([{ ...ok, offset: 2 ** 53 }], 2 ** 53), RangeError);
  assert.throws(() => centralDirectory([], 2 ** 53), RangeError);
  assert.equal(localHeader({ ...ok, size: 0xfffffffe, crc32: 0xffffffff }).readUInt32LE(22), 0xfffffffe);
});

test('an empty archive is just the 22-byte EOCD and reads back', () => {
  const buf = centralDirectory([], 0);
  assert.equal(buf.length, 22);
  const path = join(dir, 'empty.zip');
  writeFileSync(path, buf);
  const got = pythonRead(path);
  assert.equal(got.bad, null);
  assert.deepEqual(got.entries, []);
});
