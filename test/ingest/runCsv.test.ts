import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ELEMENT_COUNT, ELEMENT_NAMES } from '../../src/domain/elements.js';
import { MAX_STEP, STEP_MS } from '../../src/domain/run.js';
import { formatBeijing, formatUtc, parseIssue } from '../../src/domain/time.js';
import { FaultError, type Fault } from '../../src/ingest/fault.js';
import { parseRunFileName, readRunCsv, type ValidatedRun } from '../../src/ingest/runCsv.js';
import { cellValue, runCsv } from '../helpers/fixtures.js';

const ISSUE = '2026112000';
const ISSUE_MS = parseIssue(ISSUE)!;
const NAME = `WF_A_${ISSUE}.csv`;
const HEADER = 'date_time,' + ELEMENT_NAMES.join(',');
const SHORT = [0, 1, 2, 3, 4, 5];

const enc = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'utf8'));
const read = (text: string, name = NAME): ValidatedRun => readRunCsv(name, enc(text));
const at = (k: number): string => formatBeijing(ISSUE_MS + k * STEP_MS);

/** The lines of a valid short run (no trailing empty line). */
const linesOf = (steps: readonly number[] = SHORT): string[] => runCsv(ISSUE, { steps }).split('\n').slice(0, -1);
const text = (lines: readonly string[]): string => lines.join('\n') + '\n';

/** A valid short run with one cell (row index into lines, 0 = header; cell index) replaced. */
function withCell(line: number, cell: number, value: string, steps: readonly number[] = SHORT): string {
  const lines = linesOf(steps);
  const cells = lines[line]!.split(',');
  cells[cell] = value;
  lines[line] = cells.join(',');
  return text(lines);
}

function faultOf(fn: () => unknown): Fault {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof FaultError, `expected a FaultError, got ${String(e)}`);
    assert.equal(e.message, e.fault.message);
    return e.fault;
  }
  assert.fail('expected a FaultError, but the file was accepted');
}

function expectFault(fn: () => unknown, line: number, column: number, message: RegExp): void {
  const f = faultOf(fn);
  assert.deepEqual({ line: f.line, column: f.column }, { line, column }, f.message);
  assert.match(f.message, message);
}

const expectFileFault = (body: string, line: number, column: number, message: RegExp, name = NAME) =>
  expectFault(() => readRunCsv(name, enc(body)), line, column, message);

function assertValues(run: ValidatedRun, steps: readonly number[]): void {
  assert.deepEqual([...run.series.steps], [...steps]);
  for (let e = 0; e < ELEMENT_COUNT; e++) {
    steps.forEach((k, i) => {
      assert.ok(Object.is(run.series.columns[e]![i], cellValue(ISSUE, k, e)), `element ${ELEMENT_NAMES[e]} step ${k}`);
    });
  }
}

describe('parseRunFileName', () => {
  it('splits farm_id and issue at the last underscore', () => {
    assert.deepEqual(parseRunFileName('WF_A_2026112000.csv'), { farmId: 'WF_A', issue: '2026112000', issueMs: ISSUE_MS });
    assert.deepEqual(parseRunFileName('a.b-c_2024022918.csv'), {
      farmId: 'a.b-c',
      issue: '2024022918',
      issueMs: Date.UTC(2024, 1, 29, 18),
    });
    assert.equal(parseRunFileName('x__2026112000.csv').farmId, 'x_');
  });

  it('accepts a .CSV extension', () => {
    assert.equal(parseRunFileName('WF_A_2026112000.CSV').farmId, 'WF_A');
  });

  it('accepts a 64-character farm_id', () => {
    const id = 'F'.repeat(64);
    assert.equal(parseRunFileName(`${id}_${ISSUE}.csv`).farmId, id);
  });

  it('rejects a name without an underscore or without .csv', () => {
    for (const bad of ['WFA2026112000.csv', 'WF_A_2026112000.txt', 'WF_A_2026112000.csv.bak', 'WF_A_2026112000', 'WF_A_2026112000csv']) {
      expectFault(() => parseRunFileName(bad), 0, 0, /file name .*<farm_id>_<yyyyMMddHH>\.csv/);
    }
  });

  it('rejects a bad farm_id', () => {
    for (const bad of [`_${ISSUE}.csv`, `WF A_${ISSUE}.csv`, `WF#A_${ISSUE}.csv`, `风电_${ISSUE}.csv`, `${'F'.repeat(65)}_${ISSUE}.csv`]) {
      expectFault(() => parseRunFileName(bad), 0, 0, /farm_id must be 1-64 characters/);
    }
  });

  it('rejects an issue that is not a real date and hour', () => {
    for (const issue of ['2026023000', '2026112024', '2026130100', '202611200', '20261120000', 'x026112000', '']) {
      expectFault(() => parseRunFileName(`WF_A_${issue}.csv`), 0, 0, new RegExp(`issue "${issue}" is not a real UTC date`));
    }
  });

  it('readRunCsv checks the name before the content', () => {
    expectFileFault('', 0, 0, /file name/, 'WF_A_2026023000.csv');
  });
});

describe('readRunCsv accepts', () => {
  it('a full run, every value in its place', () => {
    const run = read(runCsv(ISSUE));
    assert.equal(run.farmId, 'WF_A');
    assert.equal(run.issue, ISSUE);
    assert.equal(run.issueMs, ISSUE_MS);
    assert.equal(run.series.steps.length, MAX_STEP + 1);
    assertValues(run, Array.from({ length: MAX_STEP + 1 }, (_, k) => k));
  });

  it('a file with a BOM, and not one with two', () => {
    assertValues(read('\uFEFF' + runCsv(ISSUE, { steps: SHORT })), SHORT);
    expectFileFault('\uFEFF\uFEFF' + runCsv(ISSUE, { steps: SHORT }), 1, 1, /header must start with date_time/);
  });

  it('CRLF line ends', () => {
    assertValues(read(runCsv(ISSUE, { steps: SHORT }).replace(/\n/g, '\r\n')), SHORT);
  });

  it('no trailing newline, or several', () => {
    const t = runCsv(ISSUE, { steps: SHORT });
    assertValues(read(t.slice(0, -1)), SHORT);
    assertValues(read(t + '\n\n'), SHORT);
    assertValues(read(t + '\r\n\r\n'), SHORT);
  });

  it('a .CSV extension', () => {
    assertValues(read(runCsv(ISSUE, { steps: SHORT }), `WF_A_${ISSUE}.CSV`), SHORT);
  });

  it('field columns in another order, mapping each to its field', () => {
    const order = [...ELEMENT_NAMES.keys()].reverse();
    // rotate as well, so no column keeps its place
    order.push(order.shift()!);
    const lines = ['date_time,' + order.map((e) => ELEMENT_NAMES[e]).join(',')];
    for (const k of SHORT) lines.push(at(k) + ',' + order.map((e) => String(cellValue(ISSUE, k, e))).join(','));
    const run = read(text(lines));
    assertValues(run, SHORT);
    // spot check: spd100 (catalogue 11) holds spd100's values
    assert.equal(run.series.columns[11]![2], cellValue(ISSUE, 2, 11));
    assert.notEqual(run.series.columns[11]![2], run.series.columns[3]![2]);
  });

  it('Beijing date_times as yyyy-MM-dd HH:mm:ss and every offset form', () => {
    const lines = linesOf(SHORT);
    const t = (k: number) => ISSUE_MS + k * STEP_MS;
    const forms = [
      '2026-11-20 08:00:00', // +0h, Beijing without offset
      formatUtc(t(1)), // Z
      '2026-11-20T08:30:00+0800',
      '2026-11-20T08:45:00 08:00', // + decoded as a space
      '2026-11-19T20:00:00-05:00',
      '2026-11-20T09:15', // no seconds, no offset
    ];
    forms.forEach((f, i) => {
      const cells = lines[i + 1]!.split(',');
      cells[0] = f;
      lines[i + 1] = cells.join(',');
    });
    assertValues(read(text(lines)), SHORT);
  });

  it('empty cells as missing (NaN), quoted or not', () => {
    const run = read(
      runCsv(ISSUE, { steps: SHORT, value: (k, e) => ((k + e) % 3 === 0 ? null : cellValue(ISSUE, k, e)) }),
    );
    for (let e = 0; e < ELEMENT_COUNT; e++) {
      for (const k of SHORT) {
        const v = run.series.columns[e]![k]!;
        if ((k + e) % 3 === 0) assert.ok(Number.isNaN(v), `${e}/${k}`);
        else assert.equal(v, cellValue(ISSUE, k, e));
      }
    }
    const quoted = read(withCell(2, 5, '""'));
    // cell 5 of line 2 is tp (catalogue 4) of record 1
    assert.ok(Number.isNaN(quoted.series.columns[4]![1]));
    assert.equal(quoted.series.columns[3]![1], cellValue(ISSUE, 1, 3));
    // a row of nothing but missing values
    const allMissing = read(text([HEADER, at(0) + ','.repeat(ELEMENT_COUNT)]));
    assert.ok(allMissing.series.columns.every((c) => Number.isNaN(c[0])));
  });

  it('negative and many-decimal values exactly as written', () => {
    const texts = [
      '-0.000001234567890123',
      '281.35000000000001',
      '0.1',
      '-0',
      '-0.0',
      '5.',
      '.5',
      '-.25',
      '007.5',
      '123456789012345678901234567890',
      '0.30000000000000004',
      '-273.15',
      '1.7976931348623157',
      '0.' + '0'.repeat(320) + '5',
    ];
    const lines = [HEADER];
    texts.forEach((v, i) => {
      lines.push(at(i) + ',' + ELEMENT_NAMES.map((_, e) => (e === 6 ? v : '1')).join(','));
    });
    const run = read(text(lines));
    texts.forEach((v, i) => {
      assert.ok(Object.is(run.series.columns[6]![i], Number(v)), `${v} -> ${run.series.columns[6]![i]}`);
    });
    assert.ok(Object.is(run.series.columns[6]![3], -0));
  });

  it('gapped runs and runs not starting at +0h', () => {
    const steps = [0, 4, 9, 96, 1439, 1440];
    const run = read(runCsv(ISSUE, { steps }));
    assertValues(run, steps);
    assertValues(read(runCsv(ISSUE, { steps: [7, 8, 20] })), [7, 8, 20]);
    assertValues(read(runCsv(ISSUE, { steps: [1440] })), [1440]);
  });

  it('a quoted date_time or value', () => {
    const lines = linesOf([0, 1]);
    lines[2] = lines[2]!.replace(/^([^,]*),([^,]*)/, '"$1","$2"');
    assertValues(read(text(lines)), [0, 1]);
  });
});

describe('readRunCsv rejects', () => {
  it('invalid UTF-8, naming the line and the column of the bad byte', () => {
    const lines = linesOf();
    const head = Buffer.from(lines.slice(0, 3).join('\n') + '\n');
    const bad = Buffer.concat([head, Buffer.from([0xff, 0xfe]), Buffer.from(lines.slice(3).join('\n') + '\n')]);
    expectFault(() => readRunCsv(NAME, bad), 4, 1, /not valid UTF-8/);
    const inHeader = Buffer.concat([Buffer.from('date_'), Buffer.from([0xc3]), Buffer.from(lines.slice(1).join('\n'))]);
    expectFault(() => readRunCsv(NAME, inHeader), 1, 1, /not valid UTF-8/);
    // In the third cell of a row, and after a quoted cell holding a comma.
    const cells = lines[4]!.split(',');
    const third = Buffer.from(lines.slice(0, 4).join('\n') + '\n' + cells.slice(0, 2).join(',') + ',');
    const inThird = Buffer.concat([third, Buffer.from([0xe2, 0x28]), Buffer.from(cells.slice(3).join(',') + '\n' + lines.slice(5).join('\n'))]);
    expectFault(() => readRunCsv(NAME, inThird), 5, 3, /not valid UTF-8/);
    const quoted = Buffer.concat([Buffer.from(lines.slice(0, 4).join('\n') + '\n"a,b",'), Buffer.from([0xc3]), Buffer.from(',x\n')]);
    expectFault(() => readRunCsv(NAME, quoted), 5, 2, /not valid UTF-8/);
  });

  it('an empty file', () => {
    expectFileFault('', 1, 1, /file is empty/);
    expectFileFault('\uFEFF', 1, 1, /file is empty/);
    expectFileFault('\n\r\n', 1, 1, /file is empty/);
  });

  it('a header that does not start with date_time', () => {
    expectFileFault(text(['time,' + ELEMENT_NAMES.join(','), ...linesOf().slice(1)]), 1, 1, /must start with date_time.*"time"/);
    expectFileFault(text([ELEMENT_NAMES.join(',') + ',date_time', ...linesOf().slice(1)]), 1, 1, /must start with date_time.*"t2m"/);
    expectFileFault(text(['Date_Time,' + ELEMENT_NAMES.join(','), ...linesOf().slice(1)]), 1, 1, /must start with date_time/);
  });

  it('an unknown field, naming it and its column', () => {
    expectFileFault(withCell(0, 3, 'pres'), 1, 4, /unknown field "pres"/);
    expectFileFault(withCell(0, 15, 'SR'), 1, 16, /unknown field "SR"/);
    expectFileFault(withCell(0, 1, ' t2m'), 1, 2, /unknown field " t2m"/);
    expectFileFault(HEADER + ',date_time\n' + linesOf().slice(1).join('\n'), 1, 17, /unknown field "date_time"/);
  });

  it('a duplicate field, at its second column', () => {
    expectFileFault(withCell(0, 4, 't2m'), 1, 5, /field "t2m" twice/);
    expectFileFault(HEADER + ',tr\n' + linesOf().slice(1).join('\n'), 1, 17, /field "tr" twice/);
  });

  it('missing fields, naming them', () => {
    const drop = (names: string[]) => {
      const keep = ELEMENT_NAMES.filter((n) => !names.includes(n));
      return text(['date_time,' + keep.join(','), at(0) + ',1'.repeat(keep.length)]);
    };
    expectFileFault(drop(['sr']), 1, 16, /lacks field sr$/);
    expectFileFault(drop(['rh2m', 'dr']), 1, 15, /lacks fields rh2m, dr$/);
    expectFileFault('date_time\n' + at(0) + '\n', 1, 2, new RegExp(`lacks fields ${ELEMENT_NAMES.join(', ')}$`));
  });

  it('a header with unbalanced quotes', () => {
    expectFileFault(withCell(0, 2, '"rh2m'), 1, 3, /header has unbalanced quotes/);
  });

  it('a header without rows', () => {
    expectFileFault(HEADER, 2, 1, /header but no records/);
    expectFileFault(HEADER + '\n', 2, 1, /header but no records/);
    expectFileFault(HEADER + '\r\n\r\n\n', 2, 1, /header but no records/);
  });

  it('more rows than a run can hold', () => {
    const lines = linesOf(Array.from({ length: MAX_STEP + 1 }, (_, k) => k));
    lines.push(lines[lines.length - 1]!);
    expectFileFault(text(lines), MAX_STEP + 3, 1, /1442 records; a run has at most 1441/);
    // Far more: counted exactly, blank lines between records included and trailing ones not.
    const far = [...lines, ...Array.from({ length: 500_000 }, (_, k) => (k % 2 === 0 ? lines[1]! : ''))];
    expectFileFault(text(far) + '\r\n\r\n', MAX_STEP + 3, 1, /501441 records; a run has at most 1441/);
  });

  it('a header or row of millions of cells: named by its first fault and its count', () => {
    const cells = ',ab'.repeat(3_000_000);
    expectFileFault(HEADER + cells + '\n' + at(0) + '\n', 1, ELEMENT_COUNT + 2, /header names unknown field "ab"/);
    expectFileFault(HEADER.replace(',', cells + ',') + '\n', 1, 2, /header names unknown field "ab"/);
    expectFileFault(HEADER + cells + ',"x\n', 1, ELEMENT_COUNT + 1 + 3_000_000 + 1, /header has unbalanced quotes/);
    const lines = linesOf();
    lines[2] = lines[2]! + cells;
    expectFileFault(text(lines), 3, ELEMENT_COUNT + 2, /row has 3000016 cells, expected 16$/);
  });

  it('lines ending in a CR alone: said so at the header, not taken for an unknown field', () => {
    const lines = linesOf([0, 1]);
    expectFileFault(lines.join('\r') + '\r', 1, ELEMENT_COUNT + 1, /^lines end in a CR alone; end them with LF or CRLF$/);
    // CRLF is a line end like LF.
    assert.equal(read(lines.join('\r\n') + '\r\n').series.steps.length, 2);
  });

  it('a row with too few or too many cells', () => {
    const lines = linesOf();
    const few = [...lines];
    few[2] = few[2]!.split(',').slice(0, 14).join(',');
    expectFileFault(text(few), 3, 15, /row has 14 cells, expected 16/);
    const one = [...lines];
    one[4] = at(3);
    expectFileFault(text(one), 5, 2, /row has 1 cell, expected 16/);
    // A line of spaces, even the last, is a fault that says so (blank trailing lines are no lines).
    const spaces = [...lines];
    spaces[4] = '   ';
    expectFileFault(text(spaces), 5, 1, /^line holds only white space$/);
    expectFileFault(text(lines) + ' \t\n', lines.length + 1, 1, /^line holds only white space$/);
    const many = [...lines];
    many[3] = many[3]! + ',1';
    expectFileFault(text(many), 4, 17, /row has 17 cells, expected 16/);
    const trailingComma = [...lines];
    trailingComma[6] = trailingComma[6]! + ',';
    expectFileFault(text(trailingComma), 7, 17, /row has 17 cells/);
  });

  it('a malformed date_time, naming it', () => {
    for (const bad of [
      '2026-11-20T08:15:00+08',
      '2026-11-20T24:00:00+08:00',
      '2026-11-20T08:15:00+08:00x',
      '2026/11/20 08:15',
      '2026-11-20t08:15:00+08:00',
      '',
      'now',
    ]) {
      expectFileFault(withCell(2, 0, bad), 3, 1, new RegExp(`date_time ${JSON.stringify(bad).replace(/[+.]/g, '\\$&')} is not an ISO 8601 date-time`));
    }
  });

  it('a date_time off the 15-minute grid', () => {
    expectFileFault(withCell(2, 0, '2026-11-20T08:20:00+08:00'), 3, 1, /"2026-11-20T08:20:00\+08:00" is not on the run's 15-minute grid/);
    expectFileFault(withCell(2, 0, '2026-11-20T08:15:30+08:00'), 3, 1, /15-minute grid/);
    expectFileFault(withCell(2, 0, '2026-11-20T08:15:00.001+08:00'), 3, 1, /15-minute grid/);
    expectFileFault(withCell(1, 0, '2026-11-20T07:59:00+08:00'), 2, 1, /15-minute grid/);
  });

  it('a date_time before +0h', () => {
    expectFileFault(withCell(1, 0, '2026-11-20T07:45:00+08:00'), 2, 1, /is outside the run \(\+0h to \+360h from 2026112000 UTC\)/);
    expectFileFault(withCell(1, 0, '2026-11-19T08:00:00+08:00'), 2, 1, /outside the run/);
  });

  it('a date_time after +360h', () => {
    const lines = linesOf([1438, 1439, 1440]);
    lines.push(at(1441) + ',' + ELEMENT_NAMES.map(() => '1').join(','));
    expectFileFault(text(lines), 5, 1, /outside the run/);
    expectFileFault(withCell(1, 0, at(MAX_STEP + 96)), 2, 1, /outside the run/);
  });

  it('a duplicate time', () => {
    expectFileFault(withCell(3, 0, at(1)), 4, 1, /not later than the previous row's/);
    // the same instant written in another form
    expectFileFault(withCell(3, 0, '2026-11-20T00:15:00Z'), 4, 1, /not later than the previous row's/);
  });

  it('times out of order', () => {
    const lines = linesOf();
    [lines[3], lines[4]] = [lines[4]!, lines[3]!];
    expectFileFault(text(lines), 5, 1, /not later than the previous row's/);
  });

  it('a value that is not a plain decimal, naming field, value and column', () => {
    const bad = ['abc', '1e5', '1E5', '+5', 'NaN', 'Infinity', '-Infinity', ' 5', '5 ', '1.2.3', '-', '.', '--1', '0x10', '1_000', '١'];
    for (const v of bad) {
      // file column 7 is spd10 (catalogue 5) in catalogue order
      expectFileFault(withCell(3, 6, v), 4, 7, new RegExp(`^spd10 value ${JSON.stringify(v).replace(/[+.]/g, '\\$&')} is not a plain decimal number$`));
    }
    expectFileFault(withCell(2, 1, '"1,5"'), 3, 2, /^t2m value "1,5" is not a plain decimal number$/);
  });

  it('a value naming the right field when columns are reordered', () => {
    const order = [...ELEMENT_NAMES.keys()].reverse();
    const lines = ['date_time,' + order.map((e) => ELEMENT_NAMES[e]).join(','), at(0) + ',1'.repeat(ELEMENT_COUNT)];
    const cells = lines[1]!.split(',');
    cells[2] = 'x'; // file column 3 = dr in reversed order
    lines[1] = cells.join(',');
    expectFileFault(text(lines), 2, 3, /^dr value "x"/);
  });

  it('a number too large to be finite', () => {
    expectFileFault(withCell(2, 13, '9'.repeat(400)), 3, 14, /^tr value "9{40}…" is too large$/);
    expectFileFault(withCell(2, 13, '-1' + '0'.repeat(400) + '.5'), 3, 14, /too large/);
  });

  it('an empty line in the middle', () => {
    const lines = linesOf();
    lines.splice(3, 0, '');
    expectFileFault(text(lines), 4, 1, /^empty line$/);
    const crlf = linesOf();
    crlf.splice(2, 0, '');
    expectFileFault(crlf.join('\r\n'), 3, 1, /^empty line$/);
  });

  it('a row with unbalanced quotes', () => {
    expectFileFault(withCell(4, 3, '"12'), 5, 4, /row has unbalanced quotes/);
    expectFileFault(withCell(4, 3, '1"2'), 5, 4, /row has unbalanced quotes/);
  });

  it('only at the first fault', () => {
    const lines = linesOf();
    lines[2] = lines[2]!.replace(/,[^,]*$/, ',abc');
    lines[4] = 'junk';
    expectFileFault(text(lines), 3, 16, /sr value "abc"/);
  });
});
