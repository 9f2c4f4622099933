/**
 * The farm registry file: header `farm_id,lat,lon,name` then optional further
 * columns; one site per row. Any fault rejects the whole file.
 */
import { FARM_ID_PATTERN, MAX_FARMS_COLUMNS } from '../domain/limits.js';
import type { Farm } from '../store/store.js';
import { csvCells, lineReader } from './csvLine.js';
import { DECIMAL, fault, quote } from './fault.js';

const FIXED = ['farm_id', 'lat', 'lon', 'name'] as const;

function coordinate(cell: string, what: 'lat' | 'lon', line: number, column: number): number {
  const limit = what === 'lat' ? 90 : 180;
  const v = Number(cell);
  if (!DECIMAL.test(cell) || !(Math.abs(v) <= limit)) {
    throw fault(line, column, `${what} ${quote(cell)} is not a decimal number in [-${limit}, ${limit}]`);
  }
  return v;
}

/** Reads a registry file; throws a FaultError (line, column, message) at the first fault. */
export function readFarmsCsv(bytes: Uint8Array): Farm[] {
  // Line by line: a registry's rows become farms anyway, and a file of millions of bad lines stops at the first.
  const lines = lineReader(bytes);
  if ('badLine' in lines) throw fault(lines.badLine, lines.badColumn, 'file is not valid UTF-8');
  const headerLine = lines.next();
  if (headerLine === undefined) throw fault(1, 1, `file is empty; expected the header ${FIXED.join(',')}`);
  const headerCells = csvCells(headerLine, MAX_FARMS_COLUMNS);
  if ('quoteFault' in headerCells) throw fault(1, headerCells.quoteFault, 'header has unbalanced quotes');
  const header = headerCells.cells;
  FIXED.forEach((name, i) => {
    if (header[i] !== name) {
      throw fault(1, i + 1, `header must start with ${FIXED.join(',')}; column ${i + 1} is ${quote(header[i] ?? '')}`);
    }
  });
  const names = new Set<string>(FIXED);
  for (let c = FIXED.length; c < header.length; c++) {
    const name = header[c]!.trim();
    if (name === '') throw fault(1, c + 1, 'header has an empty column name');
    if (names.has(name)) throw fault(1, c + 1, `header names column ${quote(name)} twice`);
    names.add(name);
  }
  if (headerCells.count > MAX_FARMS_COLUMNS) {
    throw fault(1, MAX_FARMS_COLUMNS + 1, `header has ${headerCells.count} columns; a farm registry has at most ${MAX_FARMS_COLUMNS}`);
  }
  const extraNames = header.slice(FIXED.length).map((n) => n.trim());
  const farms: Farm[] = [];
  const seen = new Map<string, number>();
  let lineNo = 1;
  for (let line = lines.next(); line !== undefined; line = lines.next()) {
    lineNo++;
    if (line.trim() === '') throw fault(lineNo, 1, line === '' ? 'empty line' : 'line holds only white space');
    const split = csvCells(line, header.length);
    if ('quoteFault' in split) throw fault(lineNo, split.quoteFault, 'row has unbalanced quotes');
    const { cells, count } = split;
    if (count !== header.length) {
      throw fault(lineNo, Math.min(count, header.length) + 1, `row has ${count} ${count === 1 ? 'cell' : 'cells'}, expected ${header.length}`);
    }
    const farmId = cells[0]!;
    if (!FARM_ID_PATTERN.test(farmId)) {
      throw fault(lineNo, 1, `farm_id ${quote(farmId)} must be 1-64 characters of A-Z a-z 0-9 _ - .`);
    }
    const earlier = seen.get(farmId);
    if (earlier !== undefined) throw fault(lineNo, 1, `farm_id ${quote(farmId)} is already on line ${earlier}`);
    seen.set(farmId, lineNo);
    farms.push({
      farmId,
      lat: coordinate(cells[1]!, 'lat', lineNo, 2),
      lon: coordinate(cells[2]!, 'lon', lineNo, 3),
      name: cells[3]!,
      extra: extraNames.map((n, i) => [n, cells[FIXED.length + i]!] as const),
    });
  }
  if (farms.length === 0) throw fault(2, 1, 'file holds a header but no farms');
  return farms;
}
