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
 * when the bytes are not UTF-8.
 */
export function textLines(bytes: Uint8Array): { lines: string[] } | { badLine: number } {
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
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.endsWith('\r')) lines[i] = l.slice(0, -1);
  }
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return { lines };
}
