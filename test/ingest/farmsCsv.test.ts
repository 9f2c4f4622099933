import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_FARMS_COLUMNS } from '../../src/domain/limits.js';
import { readFarmsCsv } from '../../src/ingest/farmsCsv.js';
import { FaultError } from '../../src/ingest/fault.js';
import { FARMS, farmsCsv } from '../helpers/fixtures.js';

const enc = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'utf8'));
const read = (text: string) => readFarmsCsv(enc(text));
const HEADER = 'farm_id,lat,lon,name';

function expectFault(body: string | Uint8Array, line: number, column: number, message: RegExp): void {
  try {
    readFarmsCsv(typeof body === 'string' ? enc(body) : body);
  } catch (e) {
    assert.ok(e instanceof FaultError, `expected a FaultError, got ${String(e)}`);
    assert.deepEqual({ line: e.fault.line, column: e.fault.column }, { line, column }, e.fault.message);
    assert.match(e.fault.message, message);
    return;
  }
  assert.fail('expected a FaultError, but the file was accepted');
}

describe('readFarmsCsv accepts', () => {
  it('the registry of the fixtures, in file order', () => {
    const farms = read(farmsCsv());
    assert.deepEqual(
      farms,
      FARMS.map((f) => ({ farmId: f.farmId, lat: f.lat, lon: f.lon, name: f.name, extra: [] })),
    );
  });

  it('further columns, kept in order with their names', () => {
    const farms = read(`${HEADER},capacity_mw,province, hub height \nWF_A,40.5,95.25,Wind A,200,Gansu,100\nPV_B,36.125,101.5,Solar B,,Qinghai,\n`);
    assert.deepEqual(farms[0]!.extra, [
      ['capacity_mw', '200'],
      ['province', 'Gansu'],
      ['hub height', '100'],
    ]);
    assert.deepEqual(farms[1]!.extra, [
      ['capacity_mw', ''],
      ['province', 'Qinghai'],
      ['hub height', ''],
    ]);
  });

  it('quoted names holding commas and quotes', () => {
    const farms = read(`${HEADER},note\nWF_X,40,95,"Wind, North","say ""hi"", twice"\n"WF_Y","-1.5","-70.25",Plain,x\n`);
    assert.equal(farms[0]!.name, 'Wind, North');
    assert.deepEqual(farms[0]!.extra, [['note', 'say "hi", twice']]);
    assert.deepEqual(
      { farmId: farms[1]!.farmId, lat: farms[1]!.lat, lon: farms[1]!.lon },
      { farmId: 'WF_Y', lat: -1.5, lon: -70.25 },
    );
  });

  it('a BOM, CRLF line ends and trailing empty lines', () => {
    const farms = read('\uFEFF' + farmsCsv().replace(/\n/g, '\r\n') + '\r\n\r\n');
    assert.deepEqual(
      farms.map((f) => f.farmId),
      FARMS.map((f) => f.farmId),
    );
  });

  it('coordinates on the bounds, and plain decimals of any precision', () => {
    const farms = read(`${HEADER}\na,90,180,N\nb,-90,-180,S\nc,0,0,\nd,40.123456789012345,95.000000000000001,X\n`);
    assert.deepEqual(
      farms.map((f) => [f.lat, f.lon]),
      [
        [90, 180],
        [-90, -180],
        [0, 0],
        [40.123456789012345, 95.000000000000001],
      ],
    );
    assert.equal(farms[2]!.name, '');
  });

  it('UTF-8 names and a 64-character farm_id', () => {
    const id = 'a.B-9_'.repeat(10) + 'abcd';
    const farms = read(`${HEADER}\n${id},36,101,光伏电站 B\n`);
    assert.equal(farms[0]!.farmId, id);
    assert.equal(farms[0]!.name, '光伏电站 B');
  });
});

describe('readFarmsCsv rejects', () => {
  it('invalid UTF-8, naming the line and the column', () => {
    const bytes = Buffer.concat([Buffer.from(`${HEADER}\nWF_A,40,95,A\nWF_B,41,96,`), Buffer.from([0xc3, 0x28]), Buffer.from('\n')]);
    expectFault(bytes, 3, 4, /not valid UTF-8/);
  });

  it('an empty file', () => {
    expectFault('', 1, 1, /file is empty; expected the header farm_id,lat,lon,name/);
    expectFault('\n\n', 1, 1, /file is empty/);
  });

  it('a header that does not start farm_id,lat,lon,name, at the first wrong column', () => {
    expectFault('id,lat,lon,name\nWF_A,40,95,A\n', 1, 1, /column 1 is "id"/);
    expectFault('farm_id,lon,lat,name\nWF_A,40,95,A\n', 1, 2, /must start with farm_id,lat,lon,name; column 2 is "lon"/);
    expectFault('farm_id,lat,lon\nWF_A,40,95\n', 1, 4, /column 4 is ""/);
    expectFault('farm_id,lat,lon,Name\nWF_A,40,95,A\n', 1, 4, /column 4 is "Name"/);
    expectFault('"farm_id,lat,lon,name\n', 1, 1, /header has unbalanced quotes/);
  });

  it('duplicate or empty further column names', () => {
    expectFault(`${HEADER},cap,cap\nWF_A,40,95,A,1,2\n`, 1, 6, /names column "cap" twice/);
    expectFault(`${HEADER},cap, cap\nWF_A,40,95,A,1,2\n`, 1, 6, /names column "cap" twice/);
    expectFault(`${HEADER},lat\nWF_A,40,95,A,1\n`, 1, 5, /names column "lat" twice/);
    expectFault(`${HEADER},,x\nWF_A,40,95,A,1,2\n`, 1, 5, /empty column name/);
    expectFault(`${HEADER},x, \nWF_A,40,95,A,1,2\n`, 1, 6, /empty column name/);
    expectFault(`${HEADER},\nWF_A,40,95,A,\n`, 1, 5, /empty column name/);
  });

  it(`a header of more than ${MAX_FARMS_COLUMNS} columns, after any fault of the columns before, and a row of millions of cells`, () => {
    const names = (n: number, from = 0): string => Array.from({ length: n }, (_, i) => `,c${from + i}`).join('');
    const most = HEADER + names(MAX_FARMS_COLUMNS - 4);
    assert.equal(read(`${most}\nWF_A,40,95,A${',1'.repeat(MAX_FARMS_COLUMNS - 4)}\n`)[0]!.extra.length, MAX_FARMS_COLUMNS - 4);
    expectFault(`${most},more\nWF_A,40,95,A\n`, 1, MAX_FARMS_COLUMNS + 1, new RegExp(`^header has ${MAX_FARMS_COLUMNS + 1} columns; a farm registry has at most ${MAX_FARMS_COLUMNS}$`));
    expectFault(`${HEADER}${',x'.repeat(3_000_000)}\nWF_A\n`, 1, 6, /names column "x" twice/);
    expectFault(`${HEADER}${names(996)}${','.repeat(3_000_000)}\nWF_A\n`, 1, MAX_FARMS_COLUMNS + 1, /header has 3001000 columns/);
    expectFault(`${HEADER}\nWF_A,40,95,A${',1'.repeat(3_000_000)}\n`, 2, 5, /^row has 3000004 cells, expected 4$/);
  });

  it('a header without rows', () => {
    expectFault(HEADER + '\n', 2, 1, /no farms/);
    expectFault(HEADER, 2, 1, /no farms/);
  });

  it('a bad farm_id', () => {
    for (const id of ['', 'W F', 'WF#1', '风电', 'x'.repeat(65), ' WF_A']) {
      expectFault(`${HEADER}\nWF_A,40,95,A\n${id},41,96,B\n`, 3, 1, new RegExp(`farm_id ${JSON.stringify(id.length > 40 ? id.slice(0, 40) + '…' : id)} must be 1-64 characters`));
    }
  });

  it('a lat that is not a decimal in [-90, 90]', () => {
    for (const v of ['abc', '', '1e1', '+40', ' 40', '40 ', 'NaN', '90.0001', '-91', '1,5']) {
      const cell = v.includes(',') ? `"${v}"` : v;
      expectFault(`${HEADER}\nWF_A,${cell},95,A\n`, 2, 2, new RegExp(`^lat ${JSON.stringify(v).replace(/[+.]/g, '\\$&')} is not a decimal number in \\[-90, 90\\]$`));
    }
  });

  it('a lon that is not a decimal in [-180, 180]', () => {
    for (const v of ['east', '', '1E2', 'Infinity', '180.5', '-181', '0x10']) {
      expectFault(`${HEADER}\nWF_A,40,95,A\nWF_B,40,${v},B\n`, 3, 3, new RegExp(`^lon ${JSON.stringify(v).replace(/[+.]/g, '\\$&')} is not a decimal number in \\[-180, 180\\]$`));
    }
  });

  it('a duplicate farm_id, naming the earlier line', () => {
    expectFault(`${HEADER}\nWF_A,40,95,A\nPV_B,36,101,B\nWF_A,41,96,C\n`, 4, 1, /farm_id "WF_A" is already on line 2/);
    expectFault(`${HEADER}\nX,1,1,\nWF_A,40,95,A\nWF_A,40,95,A\n`, 4, 1, /farm_id "WF_A" is already on line 3/);
  });

  it('a row with the wrong number of cells', () => {
    expectFault(`${HEADER}\nWF_A,40,95\n`, 2, 4, /row has 3 cells, expected 4/);
    expectFault(`${HEADER}\nWF_A,40,95,A,extra\n`, 2, 5, /row has 5 cells, expected 4/);
    expectFault(`${HEADER},cap\nWF_A,40,95,A\n`, 2, 5, /row has 4 cells, expected 5/);
    expectFault(`${HEADER}\nWF_A,40,95,Wind, North\n`, 2, 5, /row has 5 cells, expected 4/);
  });

  it('an empty line in the middle', () => {
    expectFault(`${HEADER}\nWF_A,40,95,A\n\nPV_B,36,101,B\n`, 3, 1, /^empty line$/);
    expectFault(`${HEADER}\nWF_A,40,95,A\n  \n`, 3, 1, /^line holds only white space$/);
  });

  it('a row with unbalanced quotes', () => {
    expectFault(`${HEADER}\nWF_A,40,95,"Wind A\n`, 2, 4, /row has unbalanced quotes/);
  });
});
