/** The header line of a run file: `date_time` and the fifteen fields in any order. */
import { ELEMENT_COUNT, ELEMENT_NAMES, elementIndex } from '../domain/elements.js';
import { csvCells } from './csvLine.js';
import { fault, quote } from './fault.js';

/** Maps file columns 1..15 to catalogue indexes; throws a FaultError naming the column. */
export function readHeader(line: string | undefined): number[] {
  if (line === undefined) throw fault(1, 1, 'file is empty; expected the header date_time,' + ELEMENT_NAMES.join(','));
  // date_time and the fifteen fields are sixteen different names: a seventeenth cell is a fault among
  // the first seventeen, so no more are made (a header line may be 16 MiB of cells).
  const split = csvCells(line, ELEMENT_COUNT + 2);
  if ('quoteFault' in split) throw fault(1, split.quoteFault, 'header has unbalanced quotes');
  const { cells } = split;
  if (cells[0] !== 'date_time') {
    throw fault(1, 1, `header must start with date_time, found ${quote(cells[0] ?? '')}`);
  }
  const map: number[] = [];
  const seen = new Set<number>();
  for (let c = 1; c < cells.length; c++) {
    const name = cells[c]!;
    // A CR left in a line (a CRLF's is not) is a line end of its own: the file's lines end in CR alone.
    if (name.includes('\r')) throw fault(1, c + 1, 'lines end in a CR alone; end them with LF or CRLF');
    const e = elementIndex(name);
    if (e < 0) throw fault(1, c + 1, `header names unknown field ${quote(name)}`);
    if (seen.has(e)) throw fault(1, c + 1, `header names field ${quote(name)} twice`);
    seen.add(e);
    map.push(e);
  }
  if (map.length < ELEMENT_COUNT) {
    const missing = ELEMENT_NAMES.filter((_, e) => !seen.has(e));
    throw fault(1, cells.length + 1, `header lacks field${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`);
  }
  return map;
}
