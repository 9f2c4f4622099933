/**
 * npm run bench:decode: how fast the series codec reads, over the 200 x 8
 * benchmark store: nanoseconds per value for whole columns, and per value shown
 * for random pages (48 records of 6 random columns, decoded from the start of
 * their chunks as the server does), with the figures of a plain copy of the same
 * numbers from a Float64Array as the ceiling. Every page is checked against the
 * whole-column decode. Also the time to open a run (parse its blob into a view), as the server opens a
 * copy it has just read into a buffer.
 */
import Database from 'better-sqlite3';
import { openSeries } from '../src/domain/codec.js';
import { ELEMENT_COUNT } from '../src/domain/elements.js';
import type { SeriesView } from '../src/domain/seriesView.js';
import { benchStore } from './lib/benchStore.js';

const SITES = Number(process.env.BENCH_SITES ?? 200);
const RUNS = Number(process.env.BENCH_RUNS ?? 8);
const PAGES = Number(process.env.BENCH_PAGES ?? 200_000);
const ROUNDS = 3;

const path = await benchStore(SITES, RUNS);
const db = new Database(path, { readonly: true });
const blobs = db
  .prepare<[], { series: Buffer }>('SELECT series FROM runs')
  .all()
  .map((r) => r.series);
const views: SeriesView[] = blobs.map((b) => openSeries(b));
db.close();
const decoded = views.map((v) => v.toSeries());

let seed = 7;
const random = (m: number): number => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed % m;
};
const pages = Array.from({ length: PAGES }, () => {
  const v = random(views.length);
  const from = random(views[v]!.length - 48);
  return { v, from, columns: Array.from({ length: 6 }, () => random(ELEMENT_COUNT)) };
});

const out = new Float64Array(1441);
const time = (f: () => number): [number, number] => {
  const t = process.hrtime.bigint();
  const n = f();
  return [Number(process.hrtime.bigint() - t) / n, n];
};
const wholeColumns = (): number => {
  let n = 0;
  for (const v of views) for (let e = 0; e < ELEMENT_COUNT; e++) (v.values(e, 0, v.length, out), (n += v.length));
  return n;
};
const pageValues = (): number => {
  for (const p of pages) for (const e of p.columns) views[p.v]!.values(e, p.from, p.from + 48, out);
  return pages.length * 6 * 48;
};
const copies = (): number => {
  for (const p of pages) for (const e of p.columns) out.set(decoded[p.v]!.columns[e]!.subarray(p.from, p.from + 48));
  return pages.length * 6 * 48;
};

// Opening a run as the server opens a copy read from disk: its bytes copied into a buffer in use, then parsed.
const scratch = new Uint8Array(1 << 20);
const opened = Array.from({ length: 100_000 }, () => random(blobs.length));
const copyRuns = (): number => {
  for (const i of opened) scratch.set(blobs[i]!);
  return opened.length;
};
const copyAndParse = (): number => {
  let n = 0;
  for (const i of opened) {
    const b = blobs[i]!;
    scratch.set(b);
    n += openSeries(scratch.subarray(0, b.length)).length > 0 ? 1 : 0;
  }
  return n;
};

let wrong = 0;
for (const p of pages.slice(0, 20_000)) {
  for (const e of p.columns) {
    views[p.v]!.values(e, p.from, p.from + 48, out);
    const whole = decoded[p.v]!.columns[e]!;
    for (let i = 0; i < 48; i++) if (!Object.is(out[i], whole[p.from + i])) wrong++;
  }
}
const results = { whole: [] as number[], page: [] as number[], copy: [] as number[], parse: [] as number[] };
for (let round = 0; round < ROUNDS; round++) {
  results.whole.push(time(wholeColumns)[0]);
  results.page.push(time(pageValues)[0]);
  results.copy.push(time(copies)[0]);
  results.parse.push(time(copyAndParse)[0] - time(copyRuns)[0]);
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
console.log(`forecastd decode benchmark: ${views.length} runs of ${path.split('/').pop()}, ${PAGES} pages of 48 records x 6 columns, ${ROUNDS} rounds (medians)`);
console.log(`whole columns        ${median(results.whole).toFixed(2)} ns per value`);
console.log(`pages                ${median(results.page).toFixed(2)} ns per value shown`);
console.log(`copy (ceiling)       ${median(results.copy).toFixed(2)} ns per value shown; ratio pages / copy ${(median(results.page) / median(results.copy)).toFixed(1)}`);
console.log(`opening a run         ${median(results.parse).toFixed(0)} ns per run parsed (its blob copied into a buffer in use first, that copy not counted)`);
console.log(`pages not matching the whole-column decode: ${wrong} values`);
if (wrong > 0) process.exitCode = 1;
