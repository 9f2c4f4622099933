/**
 * Splitting one CSV line into cells (RFC 4180 quoting within a line).
 * Forecast files never need quotes, so the common case is a plain split.
 */
export function splitCsvLine(line: string): string[] | null {
  if (line.indexOf('"') < 0) return line.split(',');
  const cells: string[] = [];
  let i = 0;
  for (;;) {
    if (line[i] === '"') {
      let cell = '';
      i++;
      for (;;) {
        const q = line.indexOf('"', i);
        if (q < 0) return null; // unterminated quote
        cell += line.slice(i, q);
        if (line[q + 1] === '"') {
          cell += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      cells.push(cell);
      if (i === line.length) return cells;
      if (line[i] !== ',') return null; // text after a closing quote
      i++;
    } else {
      const c = line.indexOf(',', i);
      const cell = c < 0 ? line.slice(i) : line.slice(i, c);
      if (cell.includes('"')) return null;
      cells.push(cell);
      if (c < 0) return cells;
      i = c + 1;
    }
  }
}

/**
 * Text of a file as lines: UTF-8 (a BOM is dropped), LF or CRLF, trailing empty
 * lines dropped. Returns the 1-based line of the first invalid UTF-8 byte instead
 * when the bytes are not UTF-8. With `maxLines`, a text of more lines gives only
 * the first maxLines and the count of all (`total`): a file of millions of short
 * lines is refused by its count without a string made for each line.
 */
export function textLines(bytes: Uint8Array, maxLines = Infinity): { lines: string[]; total?: number } | { badLine: number } {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    let line = 1;
    let start = 0;
    for (let i = 0; i <= bytes.length; i++) {
      if (i === bytes.length || bytes[i] === 0x0a) {
        try {
          new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(start, i));
        } catch {
          return { badLine: line };
        }
        line++;
        start = i + 1;
      }
    }
    return { badLine: line };
  }
  const first = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const end = contentEnd(text, first);
  const lines: string[] = [];
  let start = first;
  while (start < end) {
    if (lines.length === maxLines) {
      let total = lines.length + 1;
      for (let nl = text.indexOf('\n', start); nl >= 0 && nl < end; nl = text.indexOf('\n', nl + 1)) total++;
      return { lines, total };
    }
    let nl = text.indexOf('\n', start);
    if (nl < 0 || nl > end) nl = end;
    lines.push(text.slice(start, nl > start && text.charCodeAt(nl - 1) === 0x0d ? nl - 1 : nl));
    start = nl + 1;
  }
  return { lines };
}

/** Where the text's last line that is not empty (nor a lone CR) ends: the trailing empty lines are no lines. */
function contentEnd(text: string, first: number): number {
  let end = text.length;
  while (end > first) {
    const nl = text.lastIndexOf('\n', end - 1);
    const from = nl < first ? first : nl + 1;
    if (end - from > 1 || (end - from === 1 && text.charCodeAt(from) !== 0x0d)) break;
    end = nl < first ? first : nl;
  }
  return end;
}
