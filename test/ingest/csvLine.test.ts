import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { csvCells, textLines } from '../../src/ingest/csvLine.js';

const bytes = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'utf8'));
/** Every cell of the line, or null. */
const splitCsvLine = (line: string): string[] | null => {
  const r = csvCells(line);
  return 'cells' in r ? r.cells : null;
};

describe('csvCells, every cell', () => {
  it('splits a plain line on every comma, keeping empty cells', () => {
    assert.deepEqual(splitCsvLine('a,b,c'), ['a', 'b', 'c']);
    assert.deepEqual(splitCsvLine('a,,c,'), ['a', '', 'c', '']);
    assert.deepEqual(splitCsvLine(''), ['']);
    assert.deepEqual(splitCsvLine(','), ['', '']);
    assert.deepEqual(splitCsvLine(' a , b '), [' a ', ' b ']);
  });

  it('unquotes quoted cells, which may hold commas', () => {
    assert.deepEqual(splitCsvLine('"a,b",c'), ['a,b', 'c']);
    assert.deepEqual(splitCsvLine('x,"Wind, North",1'), ['x', 'Wind, North', '1']);
    assert.deepEqual(splitCsvLine('"a","b","c"'), ['a', 'b', 'c']);
    assert.deepEqual(splitCsvLine('"1,5"'), ['1,5']);
  });

  it('reads a doubled quote inside quotes as one quote', () => {
    assert.deepEqual(splitCsvLine('"say ""hi""",2'), ['say "hi"', '2']);
    assert.deepEqual(splitCsvLine('""""'), ['"']);
  });

  it('reads an empty quoted cell as empty, wherever it stands', () => {
    assert.deepEqual(splitCsvLine('"",b'), ['', 'b']);
    assert.deepEqual(splitCsvLine('a,""'), ['a', '']);
    assert.deepEqual(splitCsvLine('a,"",c'), ['a', '', 'c']);
  });

  it('mixes quoted and plain cells and keeps a trailing empty cell', () => {
    assert.deepEqual(splitCsvLine('a,"b",'), ['a', 'b', '']);
    assert.deepEqual(splitCsvLine('"a",,"c"'), ['a', '', 'c']);
  });

  it('rejects unbalanced or misplaced quotes', () => {
    assert.equal(splitCsvLine('"abc'), null);
    assert.equal(splitCsvLine('a,"bc'), null);
    assert.equal(splitCsvLine('"a""'), null);
    assert.equal(splitCsvLine('"a"b,c'), null);
    assert.equal(splitCsvLine('"a" ,c'), null);
    assert.equal(splitCsvLine('a"b",c'), null);
    assert.equal(splitCsvLine('ab",c'), null);
    assert.equal(splitCsvLine('x,a"b'), null);
  });
});

describe('csvCells', () => {
  it('gives at most maxCells cells and the count of all, quoted or not', () => {
    assert.deepEqual(csvCells('a,b,c,d', 2), { cells: ['a', 'b'], count: 4 });
    assert.deepEqual(csvCells('a,b', 2), { cells: ['a', 'b'], count: 2 });
    assert.deepEqual(csvCells('a', 5), { cells: ['a'], count: 1 });
    assert.deepEqual(csvCells('"a,1",b,"c""",', 2), { cells: ['a,1', 'b'], count: 4 });
    assert.deepEqual(csvCells(',,', 0), { cells: [], count: 3 });
    assert.deepEqual(csvCells('a,"b",c'), { cells: ['a', 'b', 'c'], count: 3 });
  });

  it('finds unbalanced quotes past the cells it keeps, and names their cell', () => {
    assert.deepEqual(csvCells('a,b,"c', 1), { quoteFault: 3 });
    assert.deepEqual(csvCells('"a",b,c"d', 1), { quoteFault: 3 });
    assert.deepEqual(csvCells('"a",b,"c"d', 2), { quoteFault: 3 });
    assert.deepEqual(csvCells('"a', 2), { quoteFault: 1 });
  });

  it('counts a line of millions of cells', () => {
    const line = 'ab,'.repeat(2_000_000) + 'ab';
    assert.deepEqual(csvCells(line, 3), { cells: ['ab', 'ab', 'ab'], count: 2_000_001 });
    assert.deepEqual(csvCells('"q",' + line, 2), { cells: ['q', 'ab'], count: 2_000_002 });
  });
});

describe('textLines', () => {
  it('splits LF lines', () => {
    assert.deepEqual(textLines(bytes('a\nb\nc')), { lines: ['a', 'b', 'c'] });
  });

  it('drops a leading BOM, and only a leading one', () => {
    assert.deepEqual(textLines(bytes('\uFEFFa,b\nc')), { lines: ['a,b', 'c'] });
    assert.deepEqual(textLines(bytes('a\n\uFEFFb')), { lines: ['a', '\uFEFFb'] });
  });

  it('accepts CRLF and mixed line ends', () => {
    assert.deepEqual(textLines(bytes('a\r\nb\r\nc\r\n')), { lines: ['a', 'b', 'c'] });
    assert.deepEqual(textLines(bytes('a\r\nb\nc')), { lines: ['a', 'b', 'c'] });
  });

  it('keeps a carriage return that is not a line end', () => {
    assert.deepEqual(textLines(bytes('a\rb\nc')), { lines: ['a\rb', 'c'] });
  });

  it('drops trailing empty lines but keeps empty lines in the middle', () => {
    assert.deepEqual(textLines(bytes('a\nb\n\n\n')), { lines: ['a', 'b'] });
    assert.deepEqual(textLines(bytes('a\r\n\r\n')), { lines: ['a'] });
    assert.deepEqual(textLines(bytes('a\n\nb\n')), { lines: ['a', '', 'b'] });
  });

  it('an empty file, or one of blank lines only, has no lines', () => {
    assert.deepEqual(textLines(new Uint8Array(0)), { lines: [] });
    assert.deepEqual(textLines(bytes('\uFEFF')), { lines: [] });
    assert.deepEqual(textLines(bytes('\n\r\n\n')), { lines: [] });
  });

  it('decodes multi-byte UTF-8', () => {
    assert.deepEqual(textLines(bytes('风电场,北京\n')), { lines: ['风电场,北京'] });
  });

  it('with a bound, gives the first lines and the count of all, under the same rules', () => {
    assert.deepEqual(textLines(bytes('h\r\n1\r\n2\r\n3\r\n\r\n'), 2), { lines: ['h', '1'], total: 4 });
    assert.deepEqual(textLines(bytes('\uFEFFh\n\n2\n3'), 1), { lines: ['h'], total: 4 });
    // At or under the bound, the whole text as without one.
    assert.deepEqual(textLines(bytes('h\n1\n2\n\n\n'), 3), { lines: ['h', '1', '2'] });
    assert.deepEqual(textLines(bytes('a\r\n\r\nb\r'), 5), { lines: ['a', '', 'b'] });
    // A million short lines: counted, and only the bounded lines made.
    const many = textLines(bytes('h\n' + '1\n'.repeat(1_000_000)), 10);
    assert.ok(!('badLine' in many));
    assert.equal(many.lines.length, 10);
    assert.equal(many.total, 1_000_001);
    // The bound does not hide a UTF-8 fault after it.
    assert.deepEqual(textLines(Buffer.concat([Buffer.from('a\nb\nc\n'), Buffer.from([0xff])]), 1), { badLine: 4, badColumn: 1 });
  });

  it('names the line and the cell of the first invalid UTF-8 byte', () => {
    const good = Buffer.from('a\nb\n');
    assert.deepEqual(textLines(Buffer.concat([Buffer.from([0xff]), Buffer.from('\nb')])), { badLine: 1, badColumn: 1 });
    assert.deepEqual(textLines(Buffer.concat([good, Buffer.from([0x63, 0xc3, 0x28]), Buffer.from('\nd\n')])), { badLine: 3, badColumn: 1 });
    // a truncated multi-byte sequence at the very end
    assert.deepEqual(textLines(Buffer.concat([good, Buffer.from('c\n'), Buffer.from([0xe9, 0xa3])])), { badLine: 4, badColumn: 1 });
    // a truncated sequence right before a line end
    assert.deepEqual(textLines(Buffer.concat([Buffer.from('x\n'), Buffer.from([0xe9]), Buffer.from('\ny\n')])), { badLine: 2, badColumn: 1 });
    // overlong encoding and a lone surrogate are not UTF-8 either
    assert.deepEqual(textLines(Buffer.concat([Buffer.from('x\n'), Buffer.from([0xc0, 0xaf])])), { badLine: 2, badColumn: 1 });
    assert.deepEqual(textLines(Buffer.concat([Buffer.from('x\ny\n'), Buffer.from([0xed, 0xa0, 0x80])])), { badLine: 3, badColumn: 1 });
    // the column is the cell, counted at commas outside quotes
    assert.deepEqual(textLines(Buffer.concat([Buffer.from('x\na,b,'), Buffer.from([0xff]), Buffer.from(',d\n')])), { badLine: 2, badColumn: 3 });
    assert.deepEqual(textLines(Buffer.concat([Buffer.from('"a,b",'), Buffer.from([0xc3]), Buffer.from('\n')])), { badLine: 1, badColumn: 2 });
  });
});
