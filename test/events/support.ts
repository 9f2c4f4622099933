/** Shared setup of the event stream tests: a real store, a listening app, run files and the CLI that ingests them. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRunCsv } from '../../src/ingest/runCsv.js';
import type { Publication, Store } from '../../src/store/store.js';
import { runCli } from '../helpers/cli.js';
import { runCsv } from '../helpers/fixtures.js';

/** A small run: a few steps are enough for events. */
export const SMALL = { steps: [0, 1, 2] };

export { listen } from '../helpers/http.js';

/** Ingests small runs through the CLI in another process; resolves when it has exited. */
export async function ingest(db: string, dir: string, runs: ReadonlyArray<readonly [string, string]>): Promise<void> {
  const files = runs.map(([farmId, issue]) => {
    const file = join(dir, `${farmId}_${issue}.csv`);
    writeFileSync(file, runCsv(issue, SMALL));
    return file;
  });
  const r = await runCli(['ingest', ...files, '--db', db]);
  assert.equal(r.code, 0, r.stderr);
}

/** Publishes a small run through a store handle (fast, for many events). */
export async function publish(store: Store, farmId: string, issue: string): Promise<Publication> {
  const run = readRunCsv(`${farmId}_${issue}.csv`, Buffer.from(runCsv(issue, SMALL)));
  return store.putRun({ farmId: run.farmId, issue: run.issue, series: run.series });
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
