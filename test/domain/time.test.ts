import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  BEIJING_OFFSET_MS,
  formatBeijing,
  formatIssue,
  formatUtc,
  HOUR_MS,
  MINUTE_MS,
  parseDateTime,
  parseDateTimeGeneral,
  parseIssue,
} from '../../src/domain/time.js';

describe('parseIssue', () => {
  it('is a real date and hour in exactly ten ASCII digits (property)', () => {
    const reference = (t: string): number | null => {
      if (!/^\d{10}$/.test(t)) return null;
      // The platform calendar (setUTCFullYear: Date.UTC maps years 0-99 to 1900-1999); invalid dates roll over.
      const d = new Date(0);
      d.setUTCFullYear(Number(t.slice(0, 4)), Number(t.slice(4, 6)) - 1, Number(t.slice(6, 8)));
      d.setUTCHours(Number(t.slice(8, 10)));
      return formatIssue(d.getTime()) === t ? d.getTime() : null;
    };
    const text = fc.oneof(
      fc.integer({ min: 0, max: 9_999_999_999 }).map((n) => String(n).padStart(10, '0')),
      fc.string({ minLength: 9, maxLength: 11 }),
      fc.constantFrom('2026112000 ', '+026112000', '2026-11-20', '２０２６112000', '202611200', '20261120000'),
    );
    fc.assert(fc.property(text, (t) => assert.equal(parseIssue(t), reference(t), t)), { numRuns: 20_000 });
  });

  it('reads yyyyMMddHH as a UTC hour', () => {
    assert.equal(parseIssue('2026112000'), Date.UTC(2026, 10, 20, 0));
    assert.equal(parseIssue('2026112012'), Date.UTC(2026, 10, 20, 12));
    assert.equal(parseIssue('2026010123'), Date.UTC(2026, 0, 1, 23));
    assert.equal(parseIssue('2026123100'), Date.UTC(2026, 11, 31, 0));
  });

  it('rejects dates and hours that do not exist', () => {
    for (const bad of ['2026023000', '2026112024', '2026130100', '2026000100', '2026110000', '2026043100', '2026113200']) {
      assert.equal(parseIssue(bad), null, bad);
    }
  });

  it('knows leap years', () => {
    assert.equal(parseIssue('2024022900'), Date.UTC(2024, 1, 29));
    assert.equal(parseIssue('2000022906'), Date.UTC(2000, 1, 29, 6));
    assert.equal(parseIssue('2026022900'), null);
    assert.equal(parseIssue('2100022900'), null);
    assert.equal(parseIssue('1900022900'), null);
    assert.equal(parseIssue('2026022800'), Date.UTC(2026, 1, 28));
  });

  it('rejects anything but ten digits', () => {
    for (const bad of ['', '202611200', '20261120000', '2026-11-20', '202611200a', ' 2026112000', '2026112000 ', '+026112000']) {
      assert.equal(parseIssue(bad), null, JSON.stringify(bad));
    }
  });
});

describe('formatIssue / formatUtc / formatBeijing', () => {
  const ms = Date.UTC(2026, 10, 20, 18, 45, 7);

  it('formatIssue is the UTC yyyyMMddHH', () => {
    assert.equal(formatIssue(ms), '2026112018');
    assert.equal(formatIssue(Date.UTC(2026, 0, 2, 3)), '2026010203');
  });

  it('formatUtc ends in Z', () => {
    assert.equal(formatUtc(ms), '2026-11-20T18:45:07Z');
    assert.equal(formatUtc(Date.UTC(2026, 0, 2, 3, 4, 5)), '2026-01-02T03:04:05Z');
  });

  it('formatBeijing is UTC+8 with +08:00, crossing midnight and year end', () => {
    assert.equal(formatBeijing(ms), '2026-11-21T02:45:07+08:00');
    assert.equal(formatBeijing(Date.UTC(2026, 11, 31, 16)), '2027-01-01T00:00:00+08:00');
    assert.equal(formatBeijing(Date.UTC(2024, 1, 28, 16)), '2024-02-29T00:00:00+08:00');
  });

  it('parseIssue and formatIssue round-trip every hour of a leap year', () => {
    const start = Date.UTC(2024, 0, 1);
    for (let h = 0; h < 366 * 24; h += 7) {
      const t = start + h * HOUR_MS;
      assert.equal(parseIssue(formatIssue(t)), t);
    }
  });

  it('formatBeijing and formatUtc parse back to the same instant (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2200, 0, 1) }), (sec) => {
        const t = Math.floor(sec / 1000) * 1000;
        assert.equal(parseDateTime(formatBeijing(t)), t);
        assert.equal(parseDateTime(formatUtc(t)), t);
      }),
    );
  });
});

describe('parseDateTime', () => {
  it('reads the full form digit by digit to the same answer as the pattern, near-misses included (property)', () => {
    // Characters of the full form, each position sometimes replaced by a near miss.
    const digits = (n: number, max: number): fc.Arbitrary<string> => fc.integer({ min: 0, max }).map((v) => String(v).padStart(n, '0'));
    const oneOf = (...xs: string[]): fc.Arbitrary<string> => fc.constantFrom(...xs);
    const part = (good: fc.Arbitrary<string>, ...bad: string[]): fc.Arbitrary<string> => fc.oneof({ arbitrary: good, weight: 12 }, oneOf(...bad));
    const text = fc
      .tuple(
        part(digits(4, 9999), '20a6', '-202', '２０２６'),
        part(oneOf('-'), '/', ''),
        part(digits(2, 13), '00', '1', 'x1'),
        part(oneOf('-'), ':'),
        part(digits(2, 32), '00', '2/'),
        part(oneOf('T', ' '), 't', '_'),
        part(digits(2, 24), '-1', '9'),
        part(oneOf(':'), '-'),
        part(digits(2, 60), 'a0'),
        part(oneOf(':'), '.'),
        part(digits(2, 60), '5'),
        part(oneOf('+', '-', ' '), 'Z', '*'),
        part(digits(2, 24), '0:'),
        part(oneOf(':'), ''),
        part(digits(2, 60), '6', '600'),
      )
      .map((xs) => xs.join(''));
    fc.assert(
      fc.property(text, (t) => {
        assert.equal(parseDateTime(t), parseDateTimeGeneral(t), t);
      }),
      { numRuns: 20_000 },
    );
  });

  // 2026-11-20 08:00 Beijing = 2026-11-20 00:00 UTC
  const T = Date.UTC(2026, 10, 20, 0, 0, 0);

  it('accepts every form of section 3', () => {
    const same: string[] = [
      '2026-11-20T08:00',
      '2026-11-20T08:00:00',
      '2026-11-20T08:00:00.0',
      '2026-11-20T08:00:00.00',
      '2026-11-20T08:00:00.000',
      '2026-11-20 08:00',
      '2026-11-20 08:00:00',
      '2026-11-20T00:00Z',
      '2026-11-20T00:00:00Z',
      '2026-11-20T00:00:00.000Z',
      '2026-11-20T08:00+08:00',
      '2026-11-20T08:00:00+08:00',
      '2026-11-20T08:00:00+0800',
      '2026-11-20 08:00:00+08:00',
      '2026-11-20T08:00:00 08:00',
      '2026-11-20T08:00:00 0800',
      '2026-11-19T18:30:00-05:30',
      '2026-11-19T18:30-0530',
      '2026-11-20T00:00:00+00:00',
      '2026-11-20T00:00:00-00:00',
      '2026-11-20T09:00:00+09:00',
    ];
    for (const s of same) assert.equal(parseDateTime(s), T, s);
  });

  it('no offset means Beijing time', () => {
    assert.equal(parseDateTime('2026-11-20T08:00:00'), parseDateTime('2026-11-20T08:00:00+08:00'));
    assert.equal(parseDateTime('2026-11-20T08:00:00')! - parseDateTime('2026-11-20T08:00:00Z')!, -BEIJING_OFFSET_MS);
  });

  it('a + decoded as a space before the offset reads as +', () => {
    assert.equal(parseDateTime('2026-11-20T08:00:00 08:00'), parseDateTime('2026-11-20T08:00:00+08:00'));
    assert.equal(parseDateTime('2026-11-20T10:15:00 05:30'), Date.UTC(2026, 10, 20, 4, 45));
  });

  it('a bare date is 00:00 Beijing time', () => {
    assert.equal(parseDateTime('2026-11-20'), Date.UTC(2026, 10, 19, 16));
    assert.equal(parseDateTime('2024-02-29'), Date.UTC(2024, 1, 28, 16));
  });

  it('keeps seconds and fractions', () => {
    assert.equal(parseDateTime('2026-11-20T08:00:59Z'), Date.UTC(2026, 10, 20, 8, 0, 59));
    assert.equal(parseDateTime('2026-11-20T08:00:01.5Z'), Date.UTC(2026, 10, 20, 8, 0, 1, 500));
    assert.equal(parseDateTime('2026-11-20T08:00:01.05Z'), Date.UTC(2026, 10, 20, 8, 0, 1, 50));
    assert.equal(parseDateTime('2026-11-20T08:00:01.005Z'), Date.UTC(2026, 10, 20, 8, 0, 1, 5));
    assert.equal(parseDateTime('2026-11-20T23:59:59.999Z'), Date.UTC(2026, 10, 20, 23, 59, 59, 999));
  });

  it('applies negative and odd offsets in the right direction', () => {
    assert.equal(parseDateTime('2026-11-20T00:00:00-05:30'), Date.UTC(2026, 10, 20, 5, 30));
    assert.equal(parseDateTime('2026-11-20T00:00:00+05:45'), Date.UTC(2026, 10, 19, 18, 15));
    assert.equal(parseDateTime('2026-11-20T00:00:00-0100'), Date.UTC(2026, 10, 20, 1));
    assert.equal(parseDateTime('2026-11-20T08:15+08:00')! - T, 15 * MINUTE_MS);
  });

  it('crosses month, year and leap-day boundaries', () => {
    assert.equal(parseDateTime('2027-01-01T00:00:00+08:00'), Date.UTC(2026, 11, 31, 16));
    assert.equal(parseDateTime('2024-03-01T07:59:59+08:00'), Date.UTC(2024, 1, 29, 23, 59, 59));
  });

  it('rejects malformed text', () => {
    const bad = [
      '',
      ' ',
      '2026',
      '2026-11',
      '2026-13-01T00:00',
      '2026-00-01T00:00',
      '2026-11-31T00:00',
      '2026-02-29T00:00',
      '2026-02-30',
      '2026-11-00',
      '2026-11-20T24:00',
      // Offsets out of range, in the full form (read digit by digit) and in the others (read by the pattern).
      '2026-11-20T08:00:00+24:00',
      '2026-11-20T08:00:00-08:60',
      '2026-11-20T08:00:00 24:00',
      '2026-11-20T08:00+2400',
      '2026-11-20T08:00:00.000-0860',
      // Fields out of range in the full form.
      '2026-11-20T23:60:00+08:00',
      '2026-11-20T23:00:60+08:00',
      '2026-11-20T24:00:00+08:00',
      '2026-02-29T00:00:00+08:00',
      '2026-11-20T24:00:00Z',
      '2026-11-20T23:60',
      '2026-11-20T23:59:60',
      '2026-11-20T08',
      '2026-11-20T08:',
      '2026-11-20T8:00',
      '2026-11-20T08:0',
      '2026-11-20T08:00:0',
      '2026-11-20T08:00:00.',
      '2026-11-20T08:00:00.0000',
      '2026-11-20T08:00.5',
      '2026-11-20t08:00',
      '2026-11-20T08:00z',
      '2026-11-20T08:00:00x',
      '2026-11-20T08:00:00Zjunk',
      '2026-11-20T08:00:00+08:00 ',
      ' 2026-11-20T08:00',
      '2026-11-20T08:00:00+08',
      '2026-11-20T08:00:00+8:00',
      '2026-11-20T08:00:00+08:0',
      '2026-11-20T08:00:00+24:00',
      '2026-11-20T08:00:00+08:60',
      '2026-11-20T08:00:00Z+08:00',
      '2026-11-20Z',
      '2026-11-20+08:00',
      '2026/11/20 08:00',
      '20261120T0800',
      '2026-11-20TT08:00',
      '2026-11-20  08:00',
      '26-11-20T08:00',
      '2026-1-20T08:00',
      '2026-11-2T08:00',
      '１２３４-11-20',
    ];
    for (const s of bad) assert.equal(parseDateTime(s), null, JSON.stringify(s));
  });

  it('accepts 29 February only in leap years', () => {
    assert.equal(parseDateTime('2024-02-29T12:00Z'), Date.UTC(2024, 1, 29, 12));
    assert.equal(parseDateTime('2000-02-29T12:00Z'), Date.UTC(2000, 1, 29, 12));
    assert.equal(parseDateTime('2100-02-29T12:00Z'), null);
    assert.equal(parseDateTime('1900-02-29T12:00Z'), null);
  });
});

describe('calendar arithmetic', () => {
  /** What the platform's calendar says: epoch ms of a UTC date and time, or null when the date does not exist. */
  function platform(y: number, mo: number, d: number, h: number, mi: number, s: number): number | null {
    const t = new Date(Date.UTC(2000, mo - 1, d, h, mi, s));
    t.setUTCFullYear(y);
    return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d ? t.getTime() : null;
  }
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

  it('every year 0000-9999, month and day 1-31 parses as the platform calendar has it, and impossible dates are refused (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 31 }),
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 0, max: 59 }),
        fc.integer({ min: 0, max: 59 }),
        (y, mo, d, h, mi, s) => {
          const text = `${pad(y, 4)}-${pad(mo)}-${pad(d)}T${pad(h)}:${pad(mi)}:${pad(s)}Z`;
          assert.equal(parseDateTime(text), platform(y, mo, d, h, mi, s), text);
          const issue = `${pad(y, 4)}${pad(mo)}${pad(d)}${pad(h)}`;
          assert.equal(parseIssue(issue), platform(y, mo, d, h, 0, 0), issue);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
