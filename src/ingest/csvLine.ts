/** A line whose quotes do not balance: the 1-based cell where they go wrong. */
export interface QuoteFault {
  readonly quoteFault: number;
}

/**
 * One CSV line (RFC 4180 quoting within a line): its first `maxCells` cells and the count of all, or the
 * cell where its quotes stop balancing. Forecast files never need quotes, so the common case is a plain
 * split. A line of millions of cells is counted without a string made for each.
 */
export function csvCells(line: string, maxCells = Infinity): { cells: string[]; count: number } | QuoteFault {
  if (line.indexOf('"') < 0) {
    let count = 1;
    for (let c = line.indexOf(','); c >= 0; c = line.indexOf(',', c + 1)) count++;
    // split's limit is a 32-bit count: the smaller of two finite numbers.
    return { cells: line.split(',', Math.min(count, maxCells)), count };
  }
  const cells: string[] = [];
  let count = 0;
  let i = 0;
  // The first quote at or after i once looked for: found again only when passed, so a long line is scanned once.
  let quote = -1;
  for (;;) {
    const keep = count < maxCells;
    count++;
    if (line[i] === '"') {
      const from = i + 1;
      let doubled = -1;
      for (i = from; ; ) {
        const q = line.indexOf('"', i);
        if (q < 0) return { quoteFault: count }; // unterminated quote
        if (line[q + 1] === '"') {
          if (doubled < 0) doubled = q;
          i = q + 2;
        } else {
          if (keep) cells.push(doubled < 0 ? line.slice(from, q) : unquote(line, from, doubled, q));
          i = q + 1;
          break;
        }
      }
      if (i === line.length) return { cells, count };
      if (line[i] !== ',') return { quoteFault: count }; // text after a closing quote
      i++;
    } else {
      const c = line.indexOf(',', i);
      const to = c < 0 ? line.length : c;
      if (quote < i) {
        quote = line.indexOf('"', i);
        if (quote < 0) quote = line.length;
      }
      if (quote < to) return { quoteFault: count }; // a quote inside an unquoted cell
      if (keep) cells.push(line.slice(i, to));
      if (c < 0) return { cells, count };
      i = c + 1;
    }
  }
}

/** The text of a quoted cell from `from` to `to` with its doubled quotes (the first at `doubled`) made single. */
function unquote(line: string, from: number, doubled: number, to: number): string {
  // Pieces joined a thousand at a time: one string, or one rope, per doubled quote took hundreds of
  // megabytes for a 16 MiB cell.
  const joined: string[] = [];
  let pieces: string[] = [];
  for (let q = doubled; ; q = line.indexOf('"', from)) {
    if (q < 0 || q >= to) {
      pieces.push(line.slice(from, to));
      break;
    }
    pieces.push(line.slice(from, q));
    from = q + 2;
    if (pieces.length === 1024) {
      joined.push(pieces.join('"'));
      pieces = [];
    }
  }
  joined.push(pieces.join('"'));
  return joined.join('"');
}

/** The lines of a text, one at a time, and a count of those not yet taken. */
export interface LineReader {
  /** The next line (without its LF or CRLF), or undefined after the last. */
  next(): string | undefined;
  /** How many lines are left, counted without a string made for any. */
  rest(): number;
}

/** Where the first invalid UTF-8 byte of a file is: its 1-based line and column (cell). */
export interface BadUtf8 {
  readonly badLine: number;
  readonly badColumn: number;
}

const isUtf8 = (bytes: Uint8Array): boolean => {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
};

/** The 1-based cell of a line's bytes holding its first invalid UTF-8 byte (cells split at commas outside quotes). */
function badCell(line: Uint8Array): number {
  let cell = 1;
  let start = 0;
  let quoted = false;
  for (let i = 0; i <= line.length; i++) {
    const b = i < line.length ? line[i]! : 0x2c;
    if (b === 0x22) quoted = !quoted;
    else if (b === 0x2c && (!quoted || i === line.length)) {
      if (!isUtf8(line.subarray(start, i))) return cell;
      cell++;
      start = i + 1;
    }
  }
  // A sequence cut by a comma is invalid in neither half alone: the line as a whole is the place.
  return 1;
}

/**
 * Text of a file as lines, read one at a time: UTF-8 (a BOM is dropped), LF or
 * CRLF, trailing empty lines dropped. Returns the line and column of the first
 * invalid UTF-8 byte instead when the bytes are not UTF-8. A reader that stops
 * at a fault makes no string for the lines after it.
 */
export function lineReader(bytes: Uint8Array): LineReader | BadUtf8 {
  let text: string;
  try {
    // The BOM is kept by the decoder and dropped below, once: a second one is text, and then a fault.
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    let line = 1;
    let start = 0;
    for (let i = 0; i <= bytes.length; i++) {
      if (i === bytes.length || bytes[i] === 0x0a) {
        const lineBytes = bytes.subarray(start, i);
        if (!isUtf8(lineBytes)) return { badLine: line, badColumn: badCell(lineBytes) };
        line++;
        start = i + 1;
      }
    }
    return { badLine: line, badColumn: 1 };
  }
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const end = contentEnd(text, start);
  return {
    next(): string | undefined {
      if (start >= end) return undefined;
      let nl = text.indexOf('\n', start);
      if (nl < 0 || nl > end) nl = end;
      const line = text.slice(start, nl > start && text.charCodeAt(nl - 1) === 0x0d ? nl - 1 : nl);
      start = nl + 1;
      return line;
    },
    rest(): number {
      if (start >= end) return 0;
      let n = 1;
      for (let nl = text.indexOf('\n', start); nl >= 0 && nl < end; nl = text.indexOf('\n', nl + 1)) n++;
      return n;
    },
  };
}

/**
 * The lines of a file (see lineReader), or the line of its first invalid UTF-8 byte. With `maxLines`, a
 * text of more lines gives only the first maxLines and the count of all (`total`): a file of millions of
 * short lines is refused by its count without a string made for each line.
 */
export function textLines(bytes: Uint8Array, maxLines = Infinity): { lines: string[]; total?: number } | BadUtf8 {
  const reader = lineReader(bytes);
  if ('badLine' in reader) return reader;
  const lines: string[] = [];
  for (let line = reader.next(); line !== undefined; line = reader.next()) {
    lines.push(line);
    if (lines.length === maxLines) {
      const rest = reader.rest();
      return rest === 0 ? { lines } : { lines, total: maxLines + rest };
    }
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
