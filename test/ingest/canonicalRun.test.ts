/** The byte reader of canonical run files: taken for what exporters write, and never reading a file otherwise than the line reader. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ELEMENT_COUNT, ELEMENT_NAMES } from '../../src/domain/elements.js';
import { MAX_STEP, STEP_MS, type RunSeries } from '../../src/domain/run.js';
import { formatBeijing, parseIssue } from '../../src/domain/time.js';
import { readCanonicalRun } from '../../src/ingest/canonicalRun.js';
import { FaultError } from '../../src/ingest/fault.js';
import { readRunLines } from '../../src/ingest/runCsv.js';
import { runCsv } from '../helpers/fixtures.js';

const ISSUE = '2026112000';
const ISSUE_MS = parseIssue(ISSUE)!;
const HEADER = 'date_time,' + ELEMENT_NAMES.join(',');
const at = (k: number): string => formatBeijing(ISSUE_MS + k * STEP_MS);
const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');

/** The line reader's series, or the message of its fault. */
function byLines(b: Uint8Array): RunSeries | string {
  try {
    return readRunLines(b, ISSUE, ISSUE_MS);
  } catch (err) {
    if (err instanceof FaultError) return err.message;
    throw err;
  }
}

function assertSame(got: RunSeries, want: RunSeries): void {
  assert.deepEqual([...got.steps], [...want.steps]);
  assert.equal(got.columns.length, ELEMENT_COUNT);
  for (let e = 0; e < ELEMENT_COUNT; e++) {
    assert.equal(got.columns[e]!.length, want.steps.length);
    want.columns[e]!.forEach((v, i) => assert.ok(Object.is(got.columns[e]![i], v), `${ELEMENT_NAMES[e]} record ${i}: ${got.columns[e]![i]} vs ${v}`));
  }
}

describe('readCanonicalRun', () => {
  it('reads a full run as exported, LF or CRLF, with or without a BOM or a last line end', () => {
    const lf = runCsv(ISSUE, { steps: Array.from({ length: MAX_STEP + 1 }, (_, k) => k) });
    const want = readRunLines(bytes(lf), ISSUE, ISSUE_MS);
    for (const text of [lf, lf.replace(/\n/g, '\r\n'), '\ufeff' + lf, lf.slice(0, -1), lf + '\n\r\n', lf.slice(0, -1) + '\r']) {
      const got = readCanonicalRun(bytes(text), ISSUE_MS);
      assert.ok(got !== null, JSON.stringify(text.slice(-8)));
      assertSame(got, want);
    }
  });

  it('reads a run that starts after +0h or skips steps, up to +360h', () => {
    const row = (k: number) => [at(k), ...ELEMENT_NAMES.map((_, e) => String(k + e / 4))].join(',');
    for (const steps of [[1, 2, 3], [0, 2, 3, 97], [4, MAX_STEP], [MAX_STEP]]) {
      const text = [HEADER, ...steps.map(row)].join('\n') + '\n';
      const got = readCanonicalRun(bytes(text), ISSUE_MS);
      assert.ok(got !== null, String(steps));
      assert.deepEqual([...got.steps], steps);
      assertSame(got, readRunLines(bytes(text), ISSUE, ISSUE_MS));
    }
  });

  it('reads fields in any order and empty cells as missing', () => {
    const order = [...ELEMENT_NAMES].reverse();
    const rows = [0, 1, 2].map((k) => [at(k), ...order.map((_, c) => (c === 0 || c === 14 || (c + k) % 5 === 0 ? '' : String(c * 1.25 - k)))].join(','));
    const text = ['date_time,' + order.join(','), ...rows].join('\n') + '\n';
    const got = readCanonicalRun(bytes(text), ISSUE_MS);
    assert.ok(got !== null);
    assertSame(got, readRunLines(bytes(text), ISSUE, ISSUE_MS));
    assert.ok(Number.isNaN(got.columns[ELEMENT_COUNT - 1]![0]!));
  });

  it('gives up on anything else, valid or not, for the line reader to read or reject', () => {
    const row = (k: number, cells = ELEMENT_NAMES.map((_, e) => String(e))) => [at(k), ...cells].join(',');
    const ok = (k: number) => row(k);
    const cases: Record<string, string> = {
      'another date_time spelling': [HEADER, row(0).replace('T', ' ')].join('\n'),
      'the same instant at another offset': [HEADER, row(0).replace(at(0), new Date(ISSUE_MS).toISOString().slice(0, 19) + '+00:00')].join('\n'),
      'a time off the grid': [HEADER, ok(0), row(1).replace(':15:00+', ':16:00+')].join('\n'),
      'a time repeated': [HEADER, ok(0), ok(3), ok(3)].join('\n'),
      'times out of order': [HEADER, ok(0), ok(5), ok(4)].join('\n'),
      'a time before +0h': [HEADER, row(0).replace(at(0), formatBeijing(ISSUE_MS - STEP_MS))].join('\n'),
      'a time after +360h': [HEADER, ok(0), row(0).replace(at(0), at(MAX_STEP + 1))].join('\n'),
      'an impossible date': [HEADER, row(0).replace(at(0), '2026-02-30T08:00:00+08:00')].join('\n'),
      'a quoted value': [HEADER, row(0).replace(',0,', ',"0",')].join('\n'),
      'a value of 16 digits': [HEADER, row(0).replace(',1,', ',1234567890123456,')].join('\n'),
      'a value with an exponent': [HEADER, row(0).replace(',1,', ',1e3,')].join('\n'),
      'a value "-"': [HEADER, row(0).replace(',1,', ',-,')].join('\n'),
      'a row with a cell too many': [HEADER, ok(0) + ',1'].join('\n'),
      'a row with a cell too few': [HEADER, ok(0).slice(0, ok(0).lastIndexOf(','))].join('\n'),
      'an empty line in the middle': [HEADER, ok(0), '', ok(1)].join('\n'),
      'a lone CR inside a row': [HEADER, ok(0).replace(',1,', ',1\r,')].join('\n'),
      'a non-ASCII byte': [HEADER, ok(0) + '\u00a0'].join('\n'),
      'a header that names a field twice': [HEADER.replace('rh2m', 't2m'), ok(0)].join('\n'),
      'a header only': HEADER + '\n',
      'an empty file': '',
      'more records than a run holds': [HEADER, ...Array.from({ length: MAX_STEP + 2 }, (_, k) => ok(k))].join('\n'),
    };
    for (const [what, text] of Object.entries(cases)) assert.equal(readCanonicalRun(bytes(text), ISSUE_MS), null, what);
    const invalidUtf8 = Buffer.concat([bytes([HEADER, ok(0)].join('\n') + '\n'), Buffer.from([0xff])]);
    assert.equal(readCanonicalRun(invalidUtf8, ISSUE_MS), null, 'invalid UTF-8');
  });

  it('whatever it reads, the line reader reads to the same values (property)', () => {
    // Mostly what exporters write, now and then a spelling only the line reader takes or a fault.
    const cell = fc.oneof(
      { arbitrary: fc.constant(''), weight: 5 },
      {
        arbitrary: fc
          .tuple(fc.boolean(), fc.stringMatching(/^[0-9]{1,7}$/), fc.option(fc.stringMatching(/^[0-9]{0,6}$/), { nil: undefined }))
          .map(([neg, whole, frac]) => (neg ? '-' : '') + whole + (frac === undefined ? '' : '.' + frac)),
        weight: 200,
      },
      { arbitrary: fc.constantFrom('x', '"1"', '1e5', '12345678901234567', '-', '.', '+1', '.5', '-0', ' 1'), weight: 2 },
    );
    const file = fc.record({
      rows: fc.array(fc.array(cell, { minLength: ELEMENT_COUNT, maxLength: ELEMENT_COUNT }), { minLength: 1, maxLength: 12 }),
      // Steps from one row to the next: mostly 1, sometimes a gap, rarely a repeat or a step back (refused).
      moves: fc.array(fc.oneof({ arbitrary: fc.constant(1), weight: 30 }, { arbitrary: fc.integer({ min: 2, max: 200 }), weight: 4 }, { arbitrary: fc.integer({ min: -3, max: 0 }), weight: 1 }), { minLength: 12, maxLength: 12 }),
      first: fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, { arbitrary: fc.integer({ min: 0, max: MAX_STEP }), weight: 1 }),
      crlf: fc.boolean(),
      bom: fc.boolean(),
      tail: fc.constantFrom('', '\n', '\n\n', '\r\n'),
    });
    let read = 0;
    fc.assert(
      fc.property(file, ({ rows, moves, first, crlf, bom, tail }) => {
        const eol = crlf ? '\r\n' : '\n';
        let step = first;
        const steps = rows.map((_, i) => (i === 0 ? step : (step += moves[i]!)));
        // Steps outside the grid have no text of their own: written as the next day's, they are refused.
        const date = (k: number): string => (k >= 0 && k <= MAX_STEP ? at(k) : formatBeijing(ISSUE_MS + k * STEP_MS));
        const text = (bom ? '\ufeff' : '') + [HEADER, ...rows.map((cells, i) => [date(steps[i]!), ...cells].join(','))].join(eol) + tail;
        const got = readCanonicalRun(bytes(text), ISSUE_MS);
        const want = byLines(bytes(text));
        if (got === null) return;
        read++;
        assert.ok(typeof want !== 'string', `read a file the line reader rejects: ${String(want)}`);
        assertSame(got, want);
      }),
      { numRuns: 400 },
    );
    assert.ok(read > 50, `only ${read} of 400 files were canonical`);
  });
});
