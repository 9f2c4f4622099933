/** Values read by the row reader (fast digit path and slow path alike) are exactly Number(text). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ELEMENT_NAMES } from '../../src/domain/elements.js';
import { formatBeijing, parseIssue } from '../../src/domain/time.js';
import { readRunCsv } from '../../src/ingest/runCsv.js';

const ISSUE = '2026112000';
const issueMs = parseIssue(ISSUE)!;

/** Plain decimal texts as providers write them, from short to longer than 15 digits. */
const decimalText = fc
  .tuple(
    fc.boolean(),
    fc.stringMatching(/^[0-9]{1,12}$/),
    fc.option(fc.stringMatching(/^[0-9]{0,9}$/), { nil: undefined }),
    fc.constantFrom('', '', '.', 'lead'),
  )
  .map(([neg, whole, frac, form]) => {
    const body = form === '.' ? `.${whole}` : frac === undefined ? whole : `${whole}.${frac}`;
    return (neg ? '-' : '') + body;
  });

test('every value is the double Number(text) gives, including -0, long digit strings and 5. / .5 forms (property)', () => {
  fc.assert(
    fc.property(fc.array(fc.array(decimalText, { minLength: 15, maxLength: 15 }), { minLength: 1, maxLength: 20 }), (rows) => {
      const lines = ['date_time,' + ELEMENT_NAMES.join(',')];
      rows.forEach((cells, k) => lines.push(formatBeijing(issueMs + k * 900_000) + ',' + cells.join(',')));
      const run = readRunCsv(`X_${ISSUE}.csv`, Buffer.from(lines.join('\n') + '\n'));
      rows.forEach((cells, k) =>
        cells.forEach((text, e) => {
          const got = run.series.columns[e]![k]!;
          assert.ok(Object.is(got, Number(text)), `${text}: ${got} vs ${Number(text)}`);
        }),
      );
    }),
    { numRuns: 300 },
  );
});

test('edge spellings read exactly', () => {
  const texts = ['-0', '0', '5.', '.5', '-.5', '0.1', '281.35', '123456789012345', '1234567890123456', '0.000000000000001', '99999999999999999999', '-273.15', '0.30000000000000004'];
  const cells = ELEMENT_NAMES.map((_, e) => texts[e % texts.length]!);
  const csv = `date_time,${ELEMENT_NAMES.join(',')}\n${formatBeijing(issueMs)},${cells.join(',')}\n`;
  const run = readRunCsv(`X_${ISSUE}.csv`, Buffer.from(csv));
  cells.forEach((t, e) => assert.ok(Object.is(run.series.columns[e]![0], Number(t)), t));
});
