import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  apiParamText,
  apiTimeMs,
  BEIJING_OFFSET_MS,
  beijingInputValue,
  beijingText,
  fromBeijingInput,
  issueStartMs,
  leadText,
  STEP_MS,
  utcText,
} from '../../web/src/time.js';

const H = 3600_000;

describe('beijingText and utcText', () => {
  it('shows an instant in Beijing time (UTC+8)', () => {
    assert.equal(beijingText(Date.UTC(2026, 10, 25, 0, 0)), '2026-11-25 08:00');
    assert.equal(beijingText(Date.UTC(2026, 10, 25, 3, 45)), '2026-11-25 11:45');
    assert.equal(utcText(Date.UTC(2026, 10, 25, 0, 0)), '2026-11-25 00:00 UTC');
    assert.equal(utcText(Date.UTC(2026, 0, 5, 7, 5)), '2026-01-05 07:05 UTC');
  });

  it('turns the day at 16:00 UTC', () => {
    assert.equal(beijingText(Date.UTC(2026, 10, 24, 15, 45)), '2026-11-24 23:45');
    assert.equal(beijingText(Date.UTC(2026, 10, 24, 16, 0)), '2026-11-25 00:00');
    assert.equal(utcText(Date.UTC(2026, 10, 24, 16, 0)), '2026-11-24 16:00 UTC');
    // Month, year and leap-day boundaries.
    assert.equal(beijingText(Date.UTC(2026, 10, 30, 16, 0)), '2026-12-01 00:00');
    assert.equal(beijingText(Date.UTC(2026, 11, 31, 16, 0)), '2027-01-01 00:00');
    assert.equal(beijingText(Date.UTC(2028, 1, 28, 16, 0)), '2028-02-29 00:00');
    assert.equal(beijingText(Date.UTC(2027, 1, 28, 16, 0)), '2027-03-01 00:00');
  });
});

describe('issueStartMs', () => {
  it('reads yyyyMMddHH as a UTC hour', () => {
    assert.equal(issueStartMs('2026112500'), Date.UTC(2026, 10, 25, 0));
    assert.equal(issueStartMs('2026112512'), Date.UTC(2026, 10, 25, 12));
    assert.equal(beijingText(issueStartMs('2026112512')), '2026-11-25 20:00');
    assert.equal(utcText(issueStartMs('2026123118')), '2026-12-31 18:00 UTC');
  });
});

describe('apiTimeMs', () => {
  it('reads the API texts with an offset or Z', () => {
    assert.equal(apiTimeMs('2026-11-25T08:00:00+08:00'), Date.UTC(2026, 10, 25, 0));
    assert.equal(apiTimeMs('2026-11-25T00:00:00Z'), Date.UTC(2026, 10, 25, 0));
    assert.equal(apiTimeMs('2026-11-25T00:15:00.000Z'), Date.UTC(2026, 10, 25, 0, 15));
    assert.equal(apiTimeMs('2026-11-25T08:00+08:00'), Date.UTC(2026, 10, 25, 0));
    assert.equal(apiTimeMs('2026-11-25T00:00:00-05:00'), Date.UTC(2026, 10, 25, 5));
  });

  it('is NaN for what is not an API time', () => {
    for (const t of ['', 'not a time', 'foo 2026', '2026', 'Nov 25 2026', '2026-02-30T08:00:00+08:00', '2026-11-25T24:00:00Z', '25.11.2026 08:00']) {
      assert.ok(Number.isNaN(apiTimeMs(t)), t);
    }
  });

  it('reads a time without an offset as the API does (Beijing time), never as the browser\'s local time', () => {
    assert.equal(apiTimeMs('2026-11-25T08:00:00'), Date.UTC(2026, 10, 25, 0));
    assert.equal(apiTimeMs('2026-11-25T08:00'), Date.UTC(2026, 10, 25, 0));
    // A bare date is 00:00 Beijing time, and a space may stand for T (INTERFACE.md section 3).
    assert.equal(apiTimeMs('2026-11-25'), Date.UTC(2026, 10, 24, 16));
    assert.equal(apiTimeMs('2026-11-25 08:00:00+08:00'), Date.UTC(2026, 10, 25, 0));
  });
});

describe('beijingInputValue and fromBeijingInput', () => {
  it('writes and reads datetime-local values in Beijing time', () => {
    assert.equal(beijingInputValue(Date.UTC(2026, 10, 24, 16, 0)), '2026-11-25T00:00');
    assert.equal(fromBeijingInput('2026-11-25T00:00'), Date.UTC(2026, 10, 24, 16, 0));
    assert.equal(fromBeijingInput('2026-11-25T08:15'), Date.UTC(2026, 10, 25, 0, 15));
    // A field with seconds (step < 60) still reads.
    assert.equal(fromBeijingInput('2026-11-25T08:15:00'), Date.UTC(2026, 10, 25, 0, 15));
    assert.equal(fromBeijingInput('2026-11-25T08:15:00.000'), Date.UTC(2026, 10, 25, 0, 15));
    assert.equal(fromBeijingInput('2028-02-29T07:45'), Date.UTC(2028, 1, 28, 23, 45));
  });

  it('is NaN for malformed values', () => {
    const bad = [
      '',
      'x',
      '2026-11-25',
      '2026-11-25 08:00',
      '2026-11-25T8:00',
      '2026-11-25T08:00Z',
      '2026-11-25T08:00+08:00',
      ' 2026-11-25T08:00',
      '2026-11-25T08:00 ',
      '2026-13-01T00:00',
      '2026-00-10T00:00',
      '2026-02-30T08:00',
      '2027-02-29T08:00',
      '2026-11-31T08:00',
      '2026-11-25T24:00',
      '2026-11-25T08:60',
    ];
    for (const v of bad) assert.ok(Number.isNaN(fromBeijingInput(v)), v);
  });

  it('round-trips every 15-minute step across a year end', () => {
    const from = Date.UTC(2026, 11, 30, 0);
    for (let ms = from; ms < from + 72 * H; ms += STEP_MS) {
      const v = beijingInputValue(ms);
      assert.match(v, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/);
      assert.equal(fromBeijingInput(v), ms, v);
    }
  });

  it('round-trips 15-minute aligned instants (property)', () => {
    // Steps spread over 1970 .. ~2200 by a fixed pseudo-random sequence (MINSTD).
    let seed = 20261125;
    for (let run = 0; run < 2000; run++) {
      seed = (seed * 48271) % 2147483647;
      const ms = (seed % 8_000_000) * STEP_MS;
      assert.equal(fromBeijingInput(beijingInputValue(ms)), ms, String(ms));
      assert.equal(apiTimeMs(apiParamText(ms)), ms, String(ms));
    }
  });
});

describe('apiParamText', () => {
  it('is Beijing time with its offset', () => {
    assert.equal(apiParamText(Date.UTC(2026, 10, 25, 0, 0)), '2026-11-25T08:00+08:00');
    assert.equal(apiParamText(Date.UTC(2026, 10, 24, 16, 30)), '2026-11-25T00:30+08:00');
  });
});

describe('leadText', () => {
  it('is hours (and minutes) after the run start', () => {
    const issue = issueStartMs('2026112500');
    assert.equal(leadText(issue, issue), '+0h');
    assert.equal(leadText(issue, issue + 15 * 60_000), '+0h15');
    assert.equal(leadText(issue, issue + 36 * H), '+36h');
    assert.equal(leadText(issue, issue + 36 * H + 45 * 60_000), '+36h45');
    assert.equal(leadText(issue, issue + 360 * H), '+360h');
  });
});

describe('time zone independence', () => {
  // Instants around both US daylight-saving changes of 2026, a Beijing day turn and a year end.
  const instants = [
    Date.UTC(2026, 2, 8, 6, 45),
    Date.UTC(2026, 2, 8, 7, 0),
    Date.UTC(2026, 2, 8, 7, 15),
    Date.UTC(2026, 10, 1, 5, 45),
    Date.UTC(2026, 10, 1, 6, 0),
    Date.UTC(2026, 10, 1, 6, 15),
    Date.UTC(2026, 10, 24, 15, 45),
    Date.UTC(2026, 10, 24, 16, 0),
    Date.UTC(2026, 11, 31, 16, 0),
  ];
  const inputs = ['2026-03-08T15:00', '2026-11-01T14:00', '2026-11-25T00:00', '2026-02-30T08:00'];
  const apiTexts = ['2026-11-25T08:00:00+08:00', '2026-11-25T00:00:00Z', '2026-11-25T08:00:00'];

  // Everything the module computes, as JSON (NaN as null).
  const program = (url: string): string => `
    import * as t from ${JSON.stringify(url)};
    const instants = ${JSON.stringify(instants)};
    const inputs = ${JSON.stringify(inputs)};
    const apiTexts = ${JSON.stringify(apiTexts)};
    const issue = t.issueStartMs('2026030800');
    console.log(JSON.stringify({
      zone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      offsets: instants.map((ms) => new Date(ms).getTimezoneOffset()),
      out: {
        beijing: instants.map(t.beijingText),
        utc: instants.map(t.utcText),
        input: instants.map(t.beijingInputValue),
        param: instants.map(t.apiParamText),
        lead: instants.map((ms) => t.leadText(issue, ms)),
        fromInput: inputs.map(t.fromBeijingInput),
        api: apiTexts.map(t.apiTimeMs),
        issue,
      },
    }));
  `;
  const url = new URL('../../web/src/time.js', import.meta.url).href;

  interface Child {
    zone: string;
    offsets: number[];
    out: unknown;
  }
  const run = async (tz: string): Promise<Child> => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', program(url)], {
      env: { ...process.env, TZ: tz },
      encoding: 'utf8',
      timeout: 10_000,
    });
    return JSON.parse(stdout) as Child;
  };
  // Both children at once; each test reads its own.
  let children: Promise<[Child, Child]>;
  before(() => {
    children = Promise.all([run('America/New_York'), run('Asia/Kolkata')]);
    children.catch(() => undefined);
  });

  const expected = {
    beijing: [
      '2026-03-08 14:45',
      '2026-03-08 15:00',
      '2026-03-08 15:15',
      '2026-11-01 13:45',
      '2026-11-01 14:00',
      '2026-11-01 14:15',
      '2026-11-24 23:45',
      '2026-11-25 00:00',
      '2027-01-01 00:00',
    ],
    utc: instants.map(utcText),
    input: instants.map(beijingInputValue),
    param: instants.map(apiParamText),
    lead: instants.map((ms) => leadText(issueStartMs('2026030800'), ms)),
    fromInput: [Date.UTC(2026, 2, 8, 7), Date.UTC(2026, 10, 1, 6), Date.UTC(2026, 10, 24, 16), null],
    api: [Date.UTC(2026, 10, 25, 0), Date.UTC(2026, 10, 25, 0), Date.UTC(2026, 10, 25, 0)],
    issue: Date.UTC(2026, 2, 8, 0),
  };

  it('gives the same texts in this process as expected', () => {
    const here = JSON.parse(
      JSON.stringify({
        beijing: instants.map(beijingText),
        utc: instants.map(utcText),
        input: instants.map(beijingInputValue),
        param: instants.map(apiParamText),
        lead: instants.map((ms) => leadText(issueStartMs('2026030800'), ms)),
        fromInput: inputs.map(fromBeijingInput),
        api: apiTexts.map(apiTimeMs),
        issue: issueStartMs('2026030800'),
      }),
    ) as unknown;
    assert.deepEqual(here, expected);
    assert.deepEqual(expected.utc.slice(6), ['2026-11-24 15:45 UTC', '2026-11-24 16:00 UTC', '2026-12-31 16:00 UTC']);
    assert.deepEqual(expected.lead.slice(0, 3), ['+6h45', '+7h', '+7h15']);
    assert.equal(BEIJING_OFFSET_MS, 8 * H);
  });

  it('gives the same texts under America/New_York (daylight saving)', async () => {
    const [r] = await children;
    assert.equal(r.zone, 'America/New_York');
    // The child's clock really is in that zone, on both sides of each change.
    assert.deepEqual(r.offsets, [300, 240, 240, 240, 300, 300, 300, 300, 300]);
    assert.deepEqual(r.out, expected);
  });

  it('gives the same texts under Asia/Kolkata (UTC+5:30)', async () => {
    const [, r] = await children;
    // ICU may still name it by its older alias.
    assert.ok(['Asia/Kolkata', 'Asia/Calcutta'].includes(r.zone), r.zone);
    assert.ok(r.offsets.every((o) => o === -330));
    assert.deepEqual(r.out, expected);
  });
});
