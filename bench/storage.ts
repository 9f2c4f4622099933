/**
 * npm run bench:storage: bytes per stored value over the 200 x 8 benchmark
 * store (versus 8 bytes of a float64), how many chunks each encoding won, and
 * a check that every value reads back exactly as generated.
 */
import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { openSeries } from '../src/domain/codec.js';
import { ELEMENT_COUNT } from '../src/domain/elements.js';
import { ENC_PACK1, ENC_PACK2, ENC_SPARSE } from '../src/domain/seriesView.js';
import { parseIssue } from '../src/domain/time.js';
import { demoSeries } from '../src/demo/weather.js';
import { BENCH_SEED, benchIssues, benchSites, benchStore } from './lib/benchStore.js';

const SITES = Number(process.env.BENCH_SITES ?? 200);
const RUNS = Number(process.env.BENCH_RUNS ?? 8);

const path = await benchStore(SITES, RUNS);
const db = new Database(path, { readonly: true });
const sites = new Map(benchSites(SITES).map((s) => [s.farmId, s]));
let blobBytes = 0;
let values = 0;
let missing = 0;
let mismatches = 0;
const encodings = [0, 0, 0];
const t0 = performance.now();
for (const row of db.prepare<[], { farm_id: string; issue: string; series: Buffer }>('SELECT farm_id, issue, series FROM runs').iterate()) {
  const view = openSeries(row.series);
  view.chunkEncodings().forEach((n, i) => (encodings[i]! += n));
  const stored = view.toSeries();
  const expected = demoSeries(sites.get(row.farm_id)!, parseIssue(row.issue)!, BENCH_SEED);
  blobBytes += row.series.length;
  values += stored.steps.length * ELEMENT_COUNT;
  for (let e = 0; e < ELEMENT_COUNT; e++) {
    for (let i = 0; i < stored.steps.length; i++) {
      const v = stored.columns[e]![i]!;
      if (Number.isNaN(v)) missing++;
      if (!Object.is(v, expected.columns[e]![i]!)) mismatches++;
    }
  }
}
const fileBytes = statSync(path).size;
const perValue = blobBytes / values;
console.log(`forecastd storage benchmark: ${SITES} sites x ${RUNS} runs (${benchIssues(RUNS).join(', ')})`);
console.log(`values stored          ${values}`);
console.log(`series blobs           ${(blobBytes / 1e6).toFixed(2)} MB = ${perValue.toFixed(3)} bytes per value (${(perValue / 8).toFixed(3)} of a float64)`);
console.log(`whole SQLite file      ${(fileBytes / 1e6).toFixed(2)} MB = ${(fileBytes / values).toFixed(3)} bytes per value`);
const chunks = encodings.reduce((a, b) => a + b, 0);
const share = (i: number): string => `${((100 * encodings[i]!) / chunks).toFixed(1)} %`;
console.log(`chunk encodings        sparse ${share(ENC_SPARSE)}, pack1 ${share(ENC_PACK1)}, pack2 ${share(ENC_PACK2)} of ${chunks} chunks`);
console.log(`values not exact       ${mismatches} (missing values: ${missing}); checked in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
db.close();
if (mismatches > 0) process.exitCode = 1;
